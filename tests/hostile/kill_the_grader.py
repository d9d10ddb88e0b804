"""Kill everything in reach: every process (kill -1), each ancestor up the tree, and every process whose
command line mentions the sandbox's fork server. Then carry on honestly."""
import os
import signal


def _ancestors():
    out, pid = [], os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
        out.append(pid)
    return out


def _servers():
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:  # Landlock: its own /proc/<pid> only
        names = []
    for name in names:
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if b"zygote.py" in f.read():
                    found.append(int(name))
        except (OSError, ValueError):
            pass
    return found


def _kill_all():
    refused = 0
    for target in [-1] + _ancestors() + _servers():
        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP):
            try:
                os.kill(target, sig)
            except OSError:
                refused += 1
    return refused


_refused = _kill_all()
