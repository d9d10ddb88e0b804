"""A batch worker: `python -m grader.batch.worker SETTINGS_JSON`, one per --jobs.

Reads jobs on stdin (wire.GradeJob, in the grader's one framing: grader/sandbox/wire.py), grades each
submission through grader.grading (in a trusted process forked from the worker's zygote: grader/remote.py,
so the worker itself never loads torch) with one zygote for its whole life (every submission in a fresh
session forked from it: nothing of one student reaches another), writes the student's result and feedback
atomically, answers on stdout (GradeReply; WorkerStats after Quit).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path

from ..assignment import report_for, resolve
from ..files import write_atomic, write_json
from ..language import phrasebook
from ..records import Grade, Status, Verdict, messages
from ..remote import RemoteGrader
from ..sandbox.confine import kernel
from ..sandbox.wire import GradeJob, GradeReply, Quit, WorkerReady, WorkerStats, frame, unframe
from ..settings import REPORT, Settings
from ..submission import SubmissionError
from .discovery import Entry
from .reporting import record

REPO = Path(__file__).resolve().parent.parent.parent
NOTHING_HANDED_IN = messages.msg("nothing handed in for this assignment")


def refused(assignment, reason, name):
    """A submission with nothing gradable: every check of the assignment not implemented, with the reason,
    so its row shows the assignment's full maximum (CUDA checks skipped where no GPU is, as in grading)."""
    cuda = os.path.exists("/dev/nvidiactl")
    return Grade(name, [Verdict(c, Status.SKIPPED if c.cuda and not cuda else Status.MISSING, reason)
                        for c in assignment.checks], [reason], 0.0)


def scrub(text, paths):
    """The text without the instructor's folders: {path: what to say instead} (the submission by its own
    name, the class folder, the output folder, the repository by nothing)."""
    for path in sorted((p for p in paths if p and p != "/"), key=len, reverse=True):
        text = text.replace(path.rstrip("/") + "/", "").replace(path, paths[path] or ".")
    return text


def grade_one(grader, job, assignment, language="en"):
    """Grade one submission (a wire.GradeJob) and write its result and feedback; the reply for the parent."""
    out = Path(job.out)
    entry = Entry(job.student, Path(job.path) if job.path else None, job.name)
    private = {job.folder: "", job.out: "", str(REPO): "", str(entry.path or ""): entry.name}
    reason = ""
    if entry.path is None:
        reason = NOTHING_HANDED_IN
    else:
        try:
            # the draws are the student's: keyed on their id in the class folder, never on what they handed in
            grade = assignment.apply(grader.grade(entry.path, student=job.student))
        except SubmissionError as exc:  # nothing gradable was submitted: a graded zero, with the reason
            reason = messages.mapped(exc.message, lambda text: scrub(text, private))
    if reason:
        grade = refused(assignment, reason, entry.name)
    grade.submission = entry.name  # what the student handed in, not where the instructor keeps it
    grade.notes = [messages.mapped(n, lambda text: scrub(text, private)) for n in grade.notes]
    grade.verdicts = [Verdict(v.check, v.status, messages.mapped(v.feedback, lambda text: scrub(text, private)),
                              v.mistake) for v in grade.verdicts]
    text = report_for(grade, assignment, language)
    rec = record(entry, grade, job)
    if reason:
        rec["refused"] = str(reason)  # in English, as the record's feedback is; "refused_message" in any language
        rec["refused_message"] = messages.to_json(reason)
    say = phrasebook(language)
    write_atomic(out / "feedback" / f"{entry.student}.txt",
                 say("Feedback for {name}", name=entry.name) + f"\n\n{text}\n")
    write_json(out / "results" / f"{entry.student}.json", rec)  # last: its presence means "graded"
    return GradeReply(entry.student, True, rec["total"], rec["max"], grade.seconds)


def main(settings_json):
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)  # the batch died: so does this worker
    settings = Settings.from_json(settings_json)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    assignment = resolve(settings)
    # its zygote, and the grading process forked from it (one thread each)
    grader = RemoteGrader(settings, assignment.registry_checks() if settings.assignment else None)
    channel.write(frame(WorkerReady(os.getpid())))
    for line in sys.stdin:
        message = unframe(line)
        if Quit.from_wire(message):
            break
        job = GradeJob.from_wire(message)
        try:
            reply = grade_one(grader, job, assignment, settings.language)
        except Exception as exc:  # the grader failed: report it, keep serving
            why = getattr(exc, "message", None) or messages.verbatim(str(exc)[:REPORT.message_chars])
            said = messages.msg("{error_type}: {error}", error_type=type(exc).__name__, error=why)
            reply = GradeReply(job.student, False, error=str(said)[:REPORT.message_chars],
                               message=messages.to_json(said))
        channel.write(frame(reply))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    channel.write(frame(WorkerStats(os.getpid(), own, _peak_mb(grader.pid), _peak_mb(grader.zygote_pid))))


def _peak_mb(pid):
    """Peak resident memory of a live process (VmHWM), in MB; None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        return None


if __name__ == "__main__":
    main(sys.argv[1])
