"""The sandbox's fork server. Runs in its own interpreter (`python -I`), never inside the grader.

It imports torch once, then for each exercise forks a child that executes the submission's
definitions and runs that exercise's probes. The server itself never executes learner code: only
the forked children do, each in its own process group, with CPU-time and memory limits, stdin
closed, stdout and stderr sent to a log file, and the reference package made unimportable.

Protocol (JSON lines): the grader writes {"cmd": "run", ...} on stdin; the server answers
{"pid": N} when the child starts and {"pid": N, "status": S} when it has ended. Nothing the
child prints reaches this channel. The grader enforces the wall-clock limit by killing the
child's process group; a child that kills this server costs only its own exercise (the grader
starts a new server for the rest).
"""

import json
import os
import resource
import signal
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the copied probes.py / store.py / evaluate deps live beside this file

import torch  # noqa: E402  (imported once, before any fork)

import probes  # noqa: E402
import store  # noqa: E402

try:  # notebooks import pyplot; load it once here rather than in every child
    import matplotlib  # noqa: E402

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: E402,F401
except ImportError:
    pass

BLOCKED = ("posenc_ref", "grader")


class _Blocker:
    """A meta-path finder that refuses the reference and the grader."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not available to submissions")
        return None


class StatementTimeout(BaseException):
    """One top-level statement ran past its budget (a training loop left in a cell)."""


def _on_alarm(signum, frame):
    raise StatementTimeout()


def _limit(cpu_seconds, memory_bytes):
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    if memory_bytes:
        # address space: current mapping (torch is already loaded) plus the allowance
        with open("/proc/self/statm") as f:
            vm_bytes = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vm_bytes + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _execute(statements, stmt_timeout, log):
    """Execute top-level statements one by one; a failing one is logged and skipped."""
    ns = {"__name__": "submission", "__builtins__": __builtins__}
    signal.signal(signal.SIGALRM, _on_alarm)
    for label, source in statements:
        try:
            code = compile(source, label, "exec")
            signal.setitimer(signal.ITIMER_REAL, stmt_timeout)
            try:
                exec(code, ns)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except StatementTimeout:
            log.append({"where": label, "error": f"skipped: ran longer than {stmt_timeout:g} s at grading time"})
        except SystemExit as exc:
            log.append({"where": label, "error": f"called sys.exit({exc.code!r}); skipped"})
        except BaseException as exc:  # learner code may raise anything
            log.append({"where": label, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
    return ns


def _child(job):
    os.setpgid(0, 0)
    outdir = job["outdir"]
    fd = os.open(os.path.join(outdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.chdir(job["workdir"])
    _limit(job["cpu_seconds"], job["memory_bytes"])
    sys.meta_path.insert(0, _Blocker())
    torch.set_num_threads(1)
    torch.manual_seed(0)
    log = []
    ns = _execute(job["statements"], job["stmt_timeout"], log)
    store.save(os.path.join(outdir, "_exec"), {"log": {"entries": json.dumps(log)}})
    for check_id, probe_name, params, exercise in job["probes"]:
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            result = probes.run(ns, probe_name, params, exercise)
        except BaseException as exc:  # SystemExit raised from inside learner code, and worse
            result = {"error": f"{type(exc).__name__}: {exc}"[:1000], "error_type": type(exc).__name__}
        try:
            store.save(os.path.join(outdir, check_id), {"r": result})
        except BaseException as exc:
            store.save(os.path.join(outdir, check_id),
                       {"r": {"error": f"could not store the result: {exc}"[:500], "error_type": "StoreError"}})


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # keep the protocol channel for the server's own lines
    for line in sys.stdin:
        job = json.loads(line)
        if job.get("cmd") == "quit":
            return
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _child(job)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child already did it (or is gone)
        out.write(json.dumps({"pid": pid}) + "\n")
        out.flush()
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps({"pid": pid, "status": status}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
