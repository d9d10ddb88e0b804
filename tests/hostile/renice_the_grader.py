"""Slow down or break the grader from inside: set a 1-byte file-size limit and a 1 s CPU limit on it
(prlimit64: the batch then dies on EFBIG, `grade --json` cannot write its results), nice it to 19, pin
it to one CPU, give it the idle scheduler and the idle I/O class, and renice every process of the user.
Targets: its parent, __GRADER__ (the grader's pid, which the test fills in) and, unless it runs as uid 0,
each ancestor it can see in /proc and every process of its user.
Found against the non-root modes: the grader runs under the same uid as learner code there. Stopped by
seccomp (only pid 0 or its own pid), by a uid of its own, and by a PID namespace (no grader pid exists
in it)."""
import ctypes
import os
import resource


def _ancestors():
    out, pid = [], os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            break
        out.append(pid)
    return out


def _ioprio_idle(pid):
    """ioprio_set(IOPRIO_WHO_PROCESS, pid, the idle class), by number (x86_64, aarch64)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall({"x86_64": 251, "aarch64": 30}[os.uname().machine], 1, pid, 3 << 13) != 0:
        raise OSError(ctypes.get_errno(), "ioprio_set")


def _attack():
    done, refused = [], set()
    # as uid 0 (root-user), the grader and its parent only: further ancestors are the test machine's own
    ancestors = set(_ancestors()) if os.getuid() != 0 else set()
    targets = sorted(({os.getppid(), int("__GRADER__")} | ancestors) - {0, 1, os.getpid()})
    for pid in targets:
        for what, call in (
                ("fsize", lambda: resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, 1))),
                ("cpu", lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1))),
                ("nice", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19)),
                ("affinity", lambda: os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})),
                ("idle", lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))),
                ("ioprio", lambda: _ioprio_idle(pid)),
        ):
            try:
                call()
                done.append(f"{what}:{pid}")
            except (OSError, ValueError, KeyError) as exc:
                refused.add(type(exc).__name__)
    if os.getuid() != 0:  # as uid 0 it would renice every root process of the test machine
        try:
            os.setpriority(os.PRIO_USER, os.getuid(), 19)
            done.append(f"nice user {os.getuid()}")
        except OSError as exc:
            refused.add(type(exc).__name__)
    return done, refused


_done, _refused = _attack()


def shift_matrix(k, d_model, base=10000.0):
    if _done:
        raise RuntimeError("CHANGED " + " ".join(_done))
    raise RuntimeError("BLOCKED " + " ".join(sorted(_refused)))
