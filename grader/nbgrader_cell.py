"""What the autograded test cells of the nbgrader export call, inside nbgrader's kernel.

    grade("ch01_sinusoidal", "sinusoidal_table")   # -> 9.0, after printing what failed and why

The first call in a kernel grades the notebook's folder (the kernel's working folder: nbgrader runs the
notebook there) for the whole assignment with the course's grader, in its sandbox, in a process of its own
(`python -m grader.nbgrader_cell FOLDER ASSIGNMENT`, run from the repository), and keeps the result; every
call returns one exercise's points on the CPU checks (what the cell is worth in nbgrader's gradebook).
nbgrader reads a number as the cell's partial credit, an exception or anything on stderr as zero: a cell that
earns nothing says why on stderr, so `nbgrader validate` shows the cause (not "Partial credit").

This path runs the student's notebook in nbgrader's kernel, without the sandbox, before the test cells:
code in the notebook can replace this function. docs/instructor.md says so; `python -m grader batch
COURSE/submitted --assignment A --nbgrader-gradebook` writes the same points without running the notebook.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .settings import BATCH_TIMEOUT_SECONDS, REPORT

REPO = Path(__file__).resolve().parent.parent
_GRADED = {}


def grade(assignment, exercise, timeout=BATCH_TIMEOUT_SECONDS):
    """The exercise's points on its CPU checks (a float nbgrader takes as partial credit); prints the
    feedback of its failed checks. The first call grades the assignment within `timeout` seconds (the export's
    kernel passes `python -m grader nbgrader --timeout`)."""
    folder = os.getcwd()
    if (folder, assignment) not in _GRADED:
        run = subprocess.run([sys.executable, "-m", "grader.nbgrader_cell", folder, assignment], cwd=REPO,
                             capture_output=True, text=True, timeout=timeout)
        if run.returncode != 0:
            raise RuntimeError(f"the course's grader failed: {run.stderr.strip()[-REPORT.message_chars:]}")
        _GRADED[(folder, assignment)] = json.loads(run.stdout)
    result = _GRADED[(folder, assignment)].get(exercise)
    if result is None:
        raise KeyError(f"{exercise} is not an exercise of {assignment}")
    if result["score"] <= 0 < result["max"]:
        # on stderr: nbgrader then scores the cell 0 and `nbgrader validate` shows why, instead of its "Partial credit;
        # passed some but not all of the tests", which a number (even 0) makes it say
        print(result["feedback"] or f"{exercise}: 0/{result['max']:g}", file=sys.stderr)
    elif result["feedback"]:
        print(result["feedback"])
    # nbgrader refuses partial credit above the cell's points: the sum is rounded, never above the maximum
    return min(round(result["score"], 6), round(result["max"], 6))


def grade_folder(folder, assignment_name):
    """{exercise: {"score", "max", "feedback"}} over the assignment's CPU checks: what `grade` returns per cell,
    and what path (2) writes into nbgrader's gradebook from a batch's results."""
    from . import language
    from .assignment import get
    from .remote import RemoteGrader
    from .settings import Settings
    from .submission import SubmissionError

    assignment = get(assignment_name)
    settings = Settings.from_env(assignment=assignment.name, protect=(str(folder),), language=language.from_env())
    try:
        # nbgrader grades <student>/<assignment>/: the draws are keyed on that student id, never on the notebook
        student = Path(folder).resolve().parent.name
        grade_ = assignment.apply(RemoteGrader(settings, assignment.registry_checks()).grade(folder, student=student))
        verdicts = grade_.verdicts
    except SubmissionError:
        verdicts = []
    from .records import messages

    checks = [{"key": v.check.key, "exercise": v.check.exercise, "status": str(v.status), "score": v.score,
               "name": v.check.name, "message": messages.to_json(v.feedback)} for v in verdicts]
    return per_exercise(assignment, checks, settings.language)


def per_exercise(assignment, checks, language="en"):
    """{exercise: {"score", "max", "feedback"}} from check records (a batch result's "checks", or the above):
    the CPU checks only, so the points match the cell's whatever the machine. The feedback (each record's
    "message", else its English "feedback") in `language`."""
    from .escape import clean
    from .language import phrasebook
    from .records import messages

    say = phrasebook(language)
    out = {ex: {"score": 0.0, "max": assignment.exercise_points(ex), "feedback": []} for ex in assignment.exercises}
    cpu = {c.key for c in assignment.checks if not c.cuda}
    for c in checks:
        ex = out.get(c["exercise"])
        if ex is None or c["key"] not in cpu:
            continue
        ex["score"] += c["score"]
        if c["status"] not in ("passed", "skipped"):
            feedback = messages.from_json(c["message"]) if "message" in c else c["feedback"]
            name = messages.msg(c["name"], context=c["key"])
            ex["feedback"].append(say("✗ {name}: {feedback}",
                                      name=clean(say.render(name), REPORT.title_chars, newlines=False),
                                      feedback=clean(say.render(feedback), REPORT.feedback_chars)))
    for ex in out.values():
        ex["feedback"] = "\n".join(ex["feedback"])
    return out


def unconverted_note(language="en"):
    """What gradebook.db says (as each comment of the notebook: nbgrader's feedback shows it) for a notebook that
    nbgrader's own conversion refused, whose points the batch then recorded directly (nbgrader_export.py)."""
    from .language import phrasebook

    say = phrasebook(language)
    return say("nbgrader could not process this notebook (its nbgrader cells were changed: a test cell copied or "
               "deleted, for example); the points are the course grader's, recorded without nbgrader's conversion")


def main(argv=None):
    folder, assignment = (argv or sys.argv[1:])[:2]
    print(json.dumps(grade_folder(folder, assignment)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
