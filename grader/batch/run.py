"""run_batch: discover, skip what is already graded, schedule the rest, write the class's outputs."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
import uuid
from pathlib import Path

from ..assignment import resolve
from ..files import read_json, write_json
from ..language import phrasebook
from ..progress import Progress, announce
from ..sandbox.wire import GradeJob
from ..settings import BATCH_TIMEOUT_SECONDS
from .discovery import discover, parse_time, submission_hash
from .reporting import write_outputs
from .scheduling import Worker, schedule

REPO = Path(__file__).resolve().parent.parent.parent
FINGERPRINT_GLOBS = ("grader/**/*.py", "grader/checks/ids.lock.json", "posenc_ref/**/*.py",
                     "posenc_selfcheck/**/*.py", "posenc_selfcheck/data/*")


def parse_due(text):
    """--due: ISO 8601 (a space or 'T' between date and time); without an offset, UTC."""
    return parse_time(text)


def grader_fingerprint(assignment=None):
    """Changes whenever anything that decides a grade changes: the grader, and the assignment's checks,
    points and visibility."""
    digest = hashlib.sha256()
    if assignment is not None:
        digest.update(repr(assignment.spec()).encode() + b"\0")
    for pattern in FINGERPRINT_GLOBS:
        for f in sorted(REPO.glob(pattern)):
            if "__pycache__" not in f.parts and f.is_file():
                digest.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stop like Ctrl-C does."""


def _interrupt(signum, frame):
    raise Interrupted()


def run_batch(folder, out, settings, jobs=1, timeout=BATCH_TIMEOUT_SECONDS, stream=None, layout="auto", due=None,
              nbgrader_gradebook=False):
    """Grade every submission in `folder` not yet graded into `out`; write the gradebook and summary.
    `due`: an aware datetime; later submissions are flagged late. `nbgrader_gradebook`: also write the
    grades into the gradebook.db of the nbgrader course holding `folder` (grader/nbgrader_export.py)."""
    stream, say = stream or sys.stderr, phrasebook(settings.language)
    assignment = resolve(settings)
    folder, out = Path(folder).resolve(), Path(out).resolve()
    for sub in ("results", "feedback", "errors", "plots"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for tmp in out.rglob(".*.tmp"):  # left by a run that was killed mid-write
        tmp.unlink(missing_ok=True)
    announce(say("reading {folder}…", folder=str(folder)), settings.progress, stream)
    used, entries = discover(folder, layout, assignment.nbgrader_name if settings.assignment else None)
    if used == "nbgrader" and layout == "auto":
        announce(say("layout: nbgrader's submitted/<student>/<assignment>/ (every entry of {folder} fits it)",
                     folder=str(folder)), settings.progress, stream)
    fingerprint, run_id = grader_fingerprint(assignment), uuid.uuid4().hex[:12]
    hashes = {student: submission_hash(entry.path, settings.read) for student, entry in entries.items()}
    todo = [s for s in entries if not _current(read_json(out / "results" / f"{s}.json"), hashes[s], fingerprint)]
    # each worker's submission runs on the lanes its share of the cores allows (Settings.lanes_here)
    settings = settings.replace(protect=(*settings.protect, str(folder), str(out)), lanes=settings.lanes_here(jobs))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    bar = Progress(say("grading"), len(todo), stream, settings.progress, say=say)
    workers = max(1, min(jobs, len(todo)))
    announce(say("{n} submissions, {graded} already graded; starting {workers} worker(s) (each loads torch and the "
                 "sandbox: a few seconds)…", n=len(entries), graded=len(entries) - len(todo),
                 workers=workers if todo else 0), settings.progress, stream)
    replies, ready = [], []
    start = time.monotonic()

    def on_ready():
        ready.append(time.monotonic() - start)
        if len(ready) == workers:
            announce(say("workers ready after {seconds:.1f} s", seconds=ready[-1]), settings.progress, stream)

    def on_reply(reply):
        if not reply.ok:
            write_json(out / "errors" / f"{reply.student}.json",
                       {"student": reply.student, "ok": False, "error": reply.error, "message": reply.message,
                        "run_id": run_id})
        replies.append(reply)
        bar.step(reply.ok, reply.student)

    job_list = []
    for student in todo:
        (out / "errors" / f"{student}.json").unlink(missing_ok=True)
        entry = entries[student]
        job_list.append(GradeJob(student, str(entry.path) if entry.path else None, entry.name, str(out),
                                 hashes[student], fingerprint, run_id, str(folder), assignment.name))
    previous = {s: signal.signal(s, _interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        stats = schedule(job_list, jobs, lambda: Worker(env, settings.to_json(), REPO), timeout, on_reply, on_ready)
    except KeyboardInterrupt:
        stream.write("\n" + say("interrupted: graded submissions are kept; run the same command again to finish")
                     + "\n")
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    seconds = time.monotonic() - start
    recorded = None
    if nbgrader_gradebook:
        from ..nbgrader_export import save_to_gradebook

        announce(say("writing the grades into nbgrader's gradebook…"), settings.progress, stream)
        recorded = save_to_gradebook(folder, assignment, out, entries, settings.language)
    announce(say("writing the gradebook, summary and plots…"), settings.progress and bool(entries), stream)
    summary = write_outputs(out, entries, hashes, fingerprint, assignment, due, nbgrader=recorded,
                            language=settings.language)
    summary["layout"] = used  # "plain" or "nbgrader"
    write_json(out / "run.json", {
        "run_id": run_id, "folder": str(folder), "layout": used, "assignment": assignment.name, "jobs": jobs,
        "submissions": len(entries), "graded": len(todo),
        "errors": sum(not r.ok for r in replies), "seconds": round(seconds, 2), "workers_ready_s": ready,
        "grading_seconds": [round(r.seconds or 0, 3) for r in replies if r.ok], "workers": stats,
        "fingerprint": fingerprint})
    return summary


def _current(rec, sha256, fingerprint):
    return bool(rec) and rec.get("sha256") == sha256 and rec.get("fingerprint") == fingerprint
