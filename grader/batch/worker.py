"""A batch worker: `python -m grader.batch.worker SETTINGS_JSON`, one per --jobs.

Reads jobs (JSON lines) on stdin, grades each submission through grader.grading (in a trusted process
forked from the worker's zygote: grader/remote.py, so the worker itself never loads torch) with one
zygote for its whole life (every submission in a fresh session forked from it: nothing of one student
reaches another), writes the student's result and feedback atomically, answers on stdout.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from pathlib import Path

from ..files import write_atomic, write_json
from ..records import Grade
from ..remote import RemoteGrader
from ..report import text_report
from ..sandbox import confine
from ..settings import Settings
from ..submission import SubmissionError
from .discovery import Entry
from .reporting import record


def grade_one(grader, job):
    """Grade one submission and write its result and feedback; the reply for the parent."""
    out, entry = Path(job["out"]), Entry(job["student"], Path(job["path"]), job["name"])
    try:
        grade = grader.grade(entry.path)
    except SubmissionError as exc:  # nothing gradable was submitted: a graded zero, with the reason
        grade = Grade(str(entry.path), [], [str(exc)], 0.0)
    text = text_report(grade)
    rec = record(entry, grade, job)
    write_atomic(out / "feedback" / f"{entry.student}.txt", f"Feedback for {entry.student}\n\n{text}\n")
    write_json(out / "results" / f"{entry.student}.json", rec)  # last: its presence means "graded"
    return {"student": entry.student, "ok": True, "total": rec["total"], "max": rec["max"], "seconds": grade.seconds}


def main(settings_json):
    confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)  # the batch died: so does this worker
    settings = Settings.from_json(settings_json)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    grader = RemoteGrader(settings)  # its zygote, and the grading process forked from it (one thread each)
    channel.write(json.dumps({"ready": os.getpid()}) + "\n")
    for line in sys.stdin:
        job = json.loads(line)
        if job.get("cmd") == "quit":
            break
        try:
            reply = grade_one(grader, job)
        except Exception as exc:  # the grader failed: report it, keep serving
            reply = {"student": job["student"], "ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        channel.write(json.dumps(reply) + "\n")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    channel.write(json.dumps({"stats": {"pid": os.getpid(), "maxrss_mb": own,
                                        "grading_maxrss_mb": _peak_mb(grader.pid),
                                        "zygote_maxrss_mb": _peak_mb(grader.zygote_pid)}}) + "\n")


def _peak_mb(pid):
    """Peak resident memory of a live process (VmHWM), in MB; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        return None


if __name__ == "__main__":
    main(sys.argv[1])
