"""The start of a trusted grading process (it runs flat in the zygote's interpreter, forked from the zygote
so that torch is already loaded).

It is the grader's own code, trusted, holding the reference: it asks the zygote for sessions on a control
socket of its own and forks no process that runs learner code (its only forks parse a submission's files, holding
none of its descriptors: grader/parse.py), so nothing it holds reaches a sandbox child. The sandbox does
not know which code that is: the grader names it in the first line it sends ("serve": "module:function",
with the repository's path), and the function is called with the grader's socket, the control socket, the
zygote's hello (wire.Hello: what it found the machine allows) and that line, a wire.GraderSetup (grader/remote.py's
`serve`).
"""

import importlib
import signal
import sys

import kernel
import wire


def serve(sock, control, hello):
    """Read the grader's setup line from `sock`, then hand over to the function it names."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
    line = b""
    while not line.endswith(b"\n"):  # byte by byte: what follows the first line is the grader's to read
        byte = sock.recv(1)
        if not byte:
            return
        line += byte
    setup = wire.GraderSetup.from_wire(wire.unframe(line))  # the repository's path comes here, never through the zygote
    if setup is None:
        return
    sys.path.insert(0, setup.repo)
    module, _, function = setup.serve.partition(":")
    getattr(importlib.import_module(module), function)(sock, control, hello, setup)
