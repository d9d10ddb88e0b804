"""The zygote: the sandbox's forking server. It runs in its own interpreter (`python -I`, from a runtime
folder that holds only the files host/runtime_files.py lists), never inside the grader.

It probes what the machine allows (probe.py), imports torch (and matplotlib, and warms up the meta device) once,
and says what it found in its hello line, then forks, on the grader's request:

- a **session server** (session_server.py) for one submission, which forks one confined child
  (child.py) per run of an exercise. The zygote never receives a submission's code or results: a session
  is requested with one command and a socket passed as a file descriptor, nothing else. A later
  submission gets a fresh session forked from the clean zygote, so no process that has held one
  student's code or results ever forks another student's child;
- a **trusted grading process** (bootstrap.py): the grader's own code, which asks for sessions on a
  control socket of its own.

Protocol with the grader (wire.py's messages): the zygote says Hello (its capabilities) on its control socket,
then answers Fork("session") (carrying one socket) and Fork("grader") (carrying three) with Forked(pid), and
AskEnded(pid) with WaitStatus (a wait status or None). What a session says is in session_server.py.

A grader that wants its trusted grading process at once hands the zygote that process's three sockets when it
starts it (argv): the zygote forks it as soon as torch is loaded, says Forked(pid) before its Hello, and says Hello
on that process's control socket too. The process then reads the submission and computes the reference's answers
while the zygote loads pyplot; it asks for its first session once it has the Hello.
"""

import gc
import os
import select
import signal
import socket
import sys
import time
import traceback

# torch's import (and the meta device's warm-up) allocate about a million objects: the collector would walk them
# again and again (a quarter of a second, and half a second more for the warm-up); it runs again, frozen, below
gc.disable()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the runtime files (host/runtime_files.py lists them) are copied flat beside this one

import kernel  # noqa: E402
import paths  # noqa: E402
import policy  # noqa: E402
import probe  # noqa: E402

# argv: the control socket's fd, the sandbox mode (POSENC_SANDBOX_MODE), the first user id the sandbox may
# borrow (settings.uid_base: the probe asks whether such a uid can read Python), the three sockets of a trusted
# grading process to fork at once ("a,b,c" as Fork("grader") carries them; "-": none), then the hidden probe
# modules copied beside the public ones (grader/hidden_probes.MODULE_NAMES: never the hidden candidates)
CONTROL_FD, MODE, UID_BASE = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
EARLY_GRADER = [] if sys.argv[4] == "-" else [int(fd) for fd in sys.argv[4].split(",")]
# what the machine allows, probed in throw-away children before torch is loaded: a fork of this small process
# costs a millisecond, one of it with torch tens of them
CAPS = probe.capabilities(MODE, UID_BASE)

import bootstrap  # noqa: E402
import probes  # noqa: E402
import procs  # noqa: E402
import session_server  # noqa: E402
import sigchld  # noqa: E402
import torch  # noqa: E402,F401  (imported once, before any fork)
import wire  # noqa: E402
from constants import SANDBOX  # noqa: E402

CATALOG = probes.catalog(*[__import__(name) for name in sys.argv[5:]])
probes.warm_up()  # the meta device's first use costs about a second: pay it here, once, before any fork

ENDED = {}  # pid of a session (or grading process) that ended: its wait status, until the grader asks


def _reap_sessions(sessions):
    while sessions:
        try:
            done, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            sessions.clear()
            return
        if done == 0:
            return
        sessions.discard(done)
        ENDED[done] = status
        while len(ENDED) > SANDBOX.remembered_exits:  # nobody asked about the oldest
            ENDED.pop(next(iter(ENDED)))


def _how_it_ended(pid, sessions, seconds):
    """The wait status of a session that ended (the grader lost its socket: why?) within `seconds`, or None if
    unknown."""
    deadline = time.monotonic() + seconds
    while True:
        _reap_sessions(sessions)
        if pid in ENDED:
            return ENDED.pop(pid)
        if pid not in sessions or time.monotonic() > deadline:
            return None
        time.sleep(SANDBOX.poll_seconds)


def _fork(run, keep_closed, *args):
    """Fork a child of the zygote that runs `run(*args)`; the zygote's own sockets closed in it. What the zygote
    holds is frozen first (gc.freeze, as Python's documentation advises before a fork): the child's collector never
    walks it, so it neither spends the time nor writes to the pages the child shares with the zygote."""
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        gc.enable()
        code = wire.EXIT_OK
        try:
            for sock in keep_closed:
                sock.close()
            run(*args)
        except BaseException:
            traceback.print_exc()
            code = wire.EXIT_RAISED
        finally:
            os._exit(code)
    return pid


def _load_pyplot():
    """Notebooks import pyplot: load it once here rather than in every child."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        pass


def _fork_grader(fds, controls, hello):
    """Fork a trusted grading process (bootstrap.py) handed `fds`: its socket, the zygote's end of its control
    socket and its own end. (its pid, the zygote's end of its control socket)."""
    mine = socket.socket(fileno=os.dup(fds[1]))
    pid = _fork(lambda a, b, theirs: os.close(theirs) or bootstrap.serve(socket.socket(fileno=a),
                                                                       socket.socket(fileno=b), hello),
                [*controls, mine], fds[0], fds[2], fds[1])
    controls[mine] = wire.Channel(mine)
    return pid, mine


def main():
    """CONTROL_FD is the zygote's socket to the grader. It answers Fork("session") (fork a session server),
    Fork("grader") (fork a trusted grading process, with a control socket of its own) and AskEnded, and reads
    nothing else: no submission's byte ever passes through it."""
    control = socket.socket(fileno=CONTROL_FD)
    os.dup2(2, 1)  # stray prints go where stderr goes, never into a protocol channel
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)  # the grader died: so do we
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)  # no ptrace, no /proc/<pid>/fd for same-uid processes
    controls, children, early = {control: wire.Channel(control)}, set(), None
    if EARLY_GRADER:  # before pyplot and the probe of the machine: its own start overlaps them
        pid, early = _fork_grader(EARLY_GRADER, controls, None)  # it reads the hello on its control socket
        for fd in EARLY_GRADER:
            os.close(fd)
        children.add(pid)
        controls[control].send(wire.Forked(pid))
    _load_pyplot()
    gc.freeze()
    gc.enable()
    hello = wire.Hello(policy.Caps(**CAPS), paths.python_paths())
    sigchld.wake_up_pipe()
    controls[control].send(hello)
    if early is not None:
        try:
            controls[early].send(hello)
        except OSError:  # that process is gone already: the loop below forgets its socket
            pass
    while control in controls:
        ready, _, _ = select.select(list(controls), [], [], SANDBOX.zygote_poll_seconds)
        _reap_sessions(children)
        for sock in ready:
            channel = controls[sock]
            command = channel.receive()
            fds = channel.take_fds()
            fork, ask = wire.Fork.from_wire(command), wire.AskEnded.from_wire(command)
            what = fork.what if fork else None
            if what == "session" and len(fds) == 1:
                pid = _fork(lambda fd: session_server.serve(socket.socket(fileno=fd), CATALOG), list(controls),
                            fds[0])
                channel.send(wire.Forked(pid))
            elif what == "grader" and len(fds) == 3:  # its socket, and both ends of its control socket
                pid, _ = _fork_grader(fds, controls, hello)
                channel.send(wire.Forked(pid))
            elif ask:
                channel.send(wire.WaitStatus(_how_it_ended(ask.pid, children, ask.ended_seconds)))
                pid = None
            else:  # the other side is gone (or speaks nonsense): forget it; the grader's own ends everything
                controls.pop(sock)
                if sock is not control:
                    sock.close()
                pid = None
            for fd in fds:
                os.close(fd)
            if pid:
                children.add(pid)
    procs.kill_all(lambda: procs.descendants(os.getpid()))
    _reap_sessions(children)


if __name__ == "__main__":
    main()
