"""The fixed settings the sandbox reads on both sides of the zygote: grader.settings' SANDBOX (the wire's framing,
polling, killing) and CANDIDATES (the bounds of a candidate's call, which the child checks before the grader does).

In the grader this module takes them from grader/settings.py, their one source. The zygote's interpreter cannot
import the grader, and needs them before any message has crossed (the framing reads the first line; modules use
them at import), so its runtime folder holds another constants.py in this one's place, written from the same objects
by host/runtime_files.py (`generated`): the same names, the same values, standard library only.
"""

from ..settings import CANDIDATES, SANDBOX  # noqa: F401 (re-exported)

SHARED = ("CANDIDATES", "SANDBOX")  # what the zygote's copy holds
