"""Hand submissions to N worker processes, with a time limit per submission; replace a worker that dies
or overruns (killing it and its sandbox); report each reply as it comes.

A worker speaks the grader's one framing (grader/sandbox/wire.py) over its stdin and stdout: it says
WorkerReady once, answers each GradeJob with a GradeReply, and Quit with WorkerStats.
"""

from __future__ import annotations

import dataclasses
import select
import subprocess
import sys
import time

from ..records import messages
from ..sandbox import procs
from ..sandbox.wire import GradeReply, Quit, WorkerReady, WorkerStats, frame, unframe
from ..settings import WAITS


class Worker:
    def __init__(self, env, settings_json, cwd):
        self.proc = subprocess.Popen([sys.executable, "-m", "grader.batch.worker", settings_json], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.job, self.deadline, self.ready = None, None, False

    def send(self, job, timeout):
        """Hand it `job` (a wire.GradeJob), to be answered within `timeout` seconds."""
        self.job, self.deadline = job, time.monotonic() + timeout
        self.proc.stdin.write(frame(job))
        self.proc.stdin.flush()

    def kill(self):
        procs.kill_all(lambda: procs.descendants(self.proc.pid))
        self.proc.kill()
        self.proc.wait()

    def finish(self):
        """Ask it to stop; its peak memory (wire.WorkerStats' fields, a dict for run.json), or None."""
        try:
            self.proc.stdin.write(frame(Quit()))
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], WAITS.worker_quit_seconds)
            line = self.proc.stdout.readline() if ready else ""
            self.proc.wait(timeout=WAITS.worker_quit_seconds)
            stats = WorkerStats.from_wire(unframe(line)) if line else None
            return dataclasses.asdict(stats) if stats else None
        except (OSError, ValueError, TypeError, subprocess.TimeoutExpired):
            self.kill()
            return None


def schedule(jobs, workers_wanted, start_worker, timeout, on_reply, on_ready=None):
    """Run every job (wire.GradeJob); `on_reply(reply)` for each (a wire.GradeReply; `ok` False when the worker
    failed, died or overran). Returns the workers' statistics."""
    queue = list(jobs)
    workers = [start_worker() for _ in range(max(1, min(workers_wanted, len(queue))))] if queue else []
    try:
        while queue or any(w.job for w in workers):
            for w in workers:
                if w.ready and w.job is None and queue:
                    w.send(queue.pop(0), timeout)
            starting = [w for w in workers if not w.ready]
            busy = [w for w in workers if w.job]
            wait = min([max(0.0, w.deadline - time.monotonic()) for w in busy] + [1.0])
            ready, _, _ = select.select([w.proc.stdout for w in starting + busy], [], [], wait)
            for w in list(workers):
                if not w.ready and w.proc.stdout in ready:
                    line = w.proc.stdout.readline()
                    if not (line and WorkerReady.from_wire(unframe(line))):
                        # it could not start: stop the batch (a broken installation fails every worker alike)
                        raise RuntimeError("a grading worker could not start")
                    w.ready = True
                    if on_ready:
                        on_ready()
                    continue
                if not w.job:
                    continue
                broken = True  # the worker died or overran: kill it (and its sandbox), start another
                if w.proc.stdout in ready:
                    line = w.proc.stdout.readline()
                    reply = GradeReply.from_wire(unframe(line)) if line else None
                    broken = reply is None
                    reply = reply or _failed(w.job.student, messages.msg("the grading worker died"))
                elif time.monotonic() >= w.deadline:
                    reply = _failed(w.job.student, messages.msg("grading did not finish within {seconds:g} s",
                                                                seconds=timeout))
                else:
                    continue
                if broken:
                    w.kill()
                    workers[workers.index(w)] = replacement = start_worker()
                    replacement.job = None
                w.job = None
                on_reply(reply)
        return [s for s in (w.finish() for w in workers) if s]
    except BaseException:
        for w in workers:
            w.kill()
        raise


def _failed(student, message):
    """The reply for a job its worker could not answer: `message` says why (in English too, as `error`)."""
    return GradeReply(student, False, error=str(message), message=messages.to_json(message))
