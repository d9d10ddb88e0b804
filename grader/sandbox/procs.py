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


def _read(path):
    """The bytes of a small /proc file, or None when it cannot be read (its process is gone). One read on a raw
    descriptor: a clean-up scans every process of the machine several times, and a buffered file object per process
    was most of a scan's time."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 8192)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat_fields(pid):
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses), or None."""
    data = _read(f"/proc/{pid}/stat")
    return None if data is None else data[data.rfind(b")") + 2:].split()


def _stat(pid):
    """(ppid, state) of a live process, or None when it is gone or a zombie."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
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
    return [pid for pid in _pids() if (fields := _stat_fields(pid)) is not None and int(fields[1]) == parent]


def _real_uid(pid):
    """The real user id of `pid` (/proc/<pid>/status), or None."""
    data = _read(f"/proc/{pid}/status")
    at = -1 if data is None else data.find(b"\nUid:")
    try:
        return None if at < 0 else int(data[at + 5:].split(None, 1)[0])
    except (ValueError, IndexError):  # as the line-by-line reading it replaced: no uid to be had
        return None


def uid_pids(uid):
    """Live processes whose real user id is `uid`."""
    return [pid for pid in _pids() if _real_uid(pid) == uid and _stat(pid) is not None]


def kill_all(find):
    """SIGKILL whatever `find()` returns until it returns nothing (a fork bomb converges: a process
    that has been sent SIGKILL forks no more), in at most SANDBOX.kill_rounds rounds. True when nothing is left."""
    return not _kill_all_left(find)


def _kill_all_left(find):
    """kill_all, and what `find()` returned at its last look (but this process): [] when nothing is left."""
    for _ in range(SANDBOX.kill_rounds):
        pids = [p for p in find() if p != os.getpid()]
        if not pids:
            return []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(SANDBOX.kill_round_seconds)
    return [p for p in find() if p != os.getpid()]


def started(pid):
    """When `pid` started (clock ticks after boot: with the pid, it names one process even after the pid is
    reused), or None when it is gone or a zombie."""
    fields = _stat_fields(pid)
    return None if fields is None or fields[0] in (b"Z", b"X") else int(fields[19])


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
    are not: a process of a submission that outlived its clean-up, which the report must say. (What kill_all's last
    look found is what is stamped: nothing, most often, and no second look.)"""
    return gone_within(stamped(_kill_all_left(find)), seconds)
