"""The zygote's runtime folder: the files it runs from, listed one by one, copied flat into a fresh folder
(nothing that knows any answer: the sandbox's own modules, the public probes and the store format, the hidden
probes that run learner code). The hidden candidate functions a property test is run on are not among them:
the grader computes them in its own process (grader/candidates.py, runtime/candidate_calls.py).

tests/test_architecture.py checks that RUNTIME_FILES is exactly what runtime/zygote.py imports, directly or not.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ... import hidden_probes
from .. import constants

SANDBOX = Path(__file__).resolve().parent.parent
PUBLIC = SANDBOX.parent.parent / "posenc_selfcheck"
# a chapter's public probes, course/NN_name/probes.py, as the build ships them (grader/selfcheck_code.py's name)
CHAPTER_PROBES = "probes_ch[0-9][0-9].py"

# {folder: its files}: the runtime (the zygote and what it forks), the confinement it applies, the base it shares
# with the grader's side, the public probes
FOLDERS = {
    SANDBOX / "runtime": ("zygote.py", "bootstrap.py", "session_server.py", "child.py", "candidate_calls.py",
                          "sigchld.py", "cleanup.py", "probe.py"),
    SANDBOX / "confine": ("confine.py", "jail.py", "landlock.py", "seccomp.py", "cgroup.py", "kernel.py", "policy.py"),
    SANDBOX: ("constants.py", "modes.py", "paths.py", "procs.py", "wire.py"),
    PUBLIC: ("store.py", "messages.py", "i18n.py", "probes_base.py", "probes.py", "probes_meta.py", "chapter_probes.py",
             "dynamo_deferred.py",
             *sorted(p.name for p in PUBLIC.glob(CHAPTER_PROBES))),
}
_listed = [(name, folder / name) for folder, names in FOLDERS.items() for name in names]
_listed += list(hidden_probes.FILES.items())
# {name in the zygote's folder: the file copied there}; the hidden probes take the name hidden_probes.FILES gives them
RUNTIME_FILES = dict(_listed)

if len(RUNTIME_FILES) != len(_listed):  # copied flat into one folder: a repeated name would be lost
    _names = [name for name, _ in _listed]
    raise RuntimeError(f"sandbox runtime files share a name: {sorted(n for n in _names if _names.count(n) > 1)}; "
                       "a public probes file may not take a hidden probe's name, probes_chNN_hidden.py")


def generated():
    """The zygote's constants.py: the settings sandbox/constants.py shares, as plain namespaces of their values
    (the zygote imports no grader, so not its settings module; nothing else is in that file)."""
    lines = ['"""Written by grader/sandbox/host/runtime_files.py from grader/settings.py: do not edit."""', "",
             "from types import SimpleNamespace", ""]
    for name in constants.SHARED:
        values = dataclasses.asdict(getattr(constants, name))
        lines.append(f"{name} = SimpleNamespace(**{values!r})")
    return "\n".join(lines) + "\n"


def copy_into(folder):
    """Write the runtime files into `folder`, constants.py as `generated` writes it."""
    for name, path in RUNTIME_FILES.items():
        (folder / name).write_text(generated() if name == "constants.py" else path.read_text())
