"""Find and kill processes by ancestry or by user, from /proc (Linux). Standard library only: the
fork servers (server.py, session_server.py) import this file flat, the grader as `grader.sandbox.procs`.

Why two ways: a session server is a child subreaper, so everything a sandbox child starts (even a
grandchild that called setsid() and whose parent died) stays below the session in the process tree;
and when the grader runs as root every child runs under a user id of its own, so "every process of
that uid" is exactly the submission's processes, wherever they ended up.
"""

import os
import signal
import time

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .constants import SANDBOX
except ImportError:
    from constants import SANDBOX


def _pids():
    for name in os.listdir("/proc"):
        if name.isdigit():
            yield int(name)


def _stat(pid):
    """(ppid, state) of a live process, or None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # the command name may hold spaces and parentheses
    state, ppid = fields[0].decode(), int(fields[1])
    return None if state in ("Z", "X") else (ppid, state)


def mapped_bytes():
    """The address space this process has mapped now (/proc/self/statm): what an address-space limit set after a fork
    of a torch-sized process counts its allowance from."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def alive(pid):
    """True while `pid` runs (a zombie does not)."""
    return _stat(pid) is not None


def descendants(root):
    """Live (non-zombie) processes below `root` in the process tree."""
    children = {}
    for pid in _pids():
        info = _stat(pid)
        if info is not None:
            children.setdefault(info[0], []).append(pid)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def children(parent):
    """The processes whose parent is `parent`, zombies included (what waitpid reaps)."""
    out = []
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        if int(data[data.rfind(b")") + 2:].split()[1]) == parent:
            out.append(pid)
    return out


def uid_pids(uid):
    """Live processes whose real user id is `uid`."""
    out = []
    for pid in _pids():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid and _stat(pid) is not None:
                            out.append(pid)
                        break
        except (OSError, ValueError):
            continue
    return out


def kill_all(find):
    """SIGKILL whatever `find()` returns until it returns nothing (a fork bomb converges: a process
    that has been sent SIGKILL forks no more), in at most SANDBOX.kill_rounds rounds. True when nothing is left."""
    for _ in range(SANDBOX.kill_rounds):
        pids = [p for p in find() if p != os.getpid()]
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(SANDBOX.kill_round_seconds)
    return not find()


def started(pid):
    """When `pid` started (clock ticks after boot: with the pid, it names one process even after the pid is
    reused), or None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    return None if fields[0] in (b"Z", b"X") else int(fields[19])


def stamped(pids):
    """[(pid, start)] of the live ones among `pids`."""
    return [(p, t) for p, t in ((p, started(p)) for p in pids) if t is not None]


def gone_within(processes, seconds):
    """Wait (up to `seconds`) for processes already sent SIGKILL, [(pid, start)] (stamped), to be gone (one in
    the middle of a large exit, or in an uninterruptible sleep, takes a while); the pids still alive then
    (the same processes: a pid the kernel gave to another process since does not count)."""
    deadline = time.monotonic() + seconds
    left = [(p, t) for p, t in processes if started(p) == t]
    while left and time.monotonic() < deadline:
        time.sleep(SANDBOX.poll_seconds)
        left = [(p, t) for p, t in left if started(p) == t]
    return [p for p, _ in left]


def survivors(find, seconds):
    """After a clean-up: kill what `find()` still returns, and give it `seconds` to be gone. The pids that
    are not: a process of a submission that outlived its clean-up, which the report must say."""
    kill_all(find)
    return gone_within(stamped([p for p in find() if p != os.getpid()]), seconds)
