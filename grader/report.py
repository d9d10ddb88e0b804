"""Turn a Grade into what people read: a text report and Gradescope's results.json.

Every string that may come from a submission (feedback quoting the learner's exceptions, notes,
file names) goes through grader.escape on its way out, so a report shows text, never runs a
terminal escape sequence or renders markup.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from .checks import chapter_of
from .escape import MAX_TEXT, one_line
from .records import Status

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"
STATUS_MARK = {Status.PASSED: "✓", Status.FAILED: "✗", Status.SKIPPED: "-", Status.MISSING: "…"}


def chapter_title(chapter):
    """'ch01' -> 'Chapter 1 — sinusoidal', from the chapter source's file name."""
    number = chapter[2:]
    sources = sorted(CHAPTERS.glob(f"{number}_*.py"))
    name = sources[0].stem.split("_", 1)[1].replace("_", " ") if sources else ""
    return f"Chapter {int(number)}" + (f" — {name}" if name else "")


def totals(verdicts):
    return sum(v.score for v in verdicts), sum(v.max_score for v in verdicts)


def _not_attempted(verdicts):
    return all(v.status in (Status.MISSING, Status.SKIPPED) for v in verdicts)


def by_chapter(verdicts):
    """{chapter: {exercise: [verdicts]}} in chapter order."""
    chapters = chapter_of()
    out = OrderedDict()
    for v in verdicts:
        out.setdefault(chapters.get(v.check.exercise), OrderedDict()).setdefault(v.check.exercise, []).append(v)
    return OrderedDict(sorted(out.items(), key=lambda item: item[0] or ""))


def text_report(grade):
    lines = [f"Grading {one_line(grade.submission, 300)}", ""]
    for chapter, exercises in by_chapter(grade.verdicts).items():
        every = [v for vs in exercises.values() for v in vs]
        if all(_not_attempted(vs) for vs in exercises.values()):
            lines.append(f"{chapter_title(chapter)}: not attempted ({', '.join(exercises)}: 0/{totals(every)[1]:g})")
            continue
        lines.append(chapter_title(chapter))
        for exercise, vs in exercises.items():
            score, top = totals(vs)
            state = "not implemented yet" if _not_attempted(vs) else ""
            lines.append(f"  {exercise:<34} {score:g}/{top:g}  {state}".rstrip())
            if _not_attempted(vs):
                continue
            said = set()
            for v in vs:
                if v.status in (Status.FAILED, Status.MISSING):
                    # a named mistake repeats across checks: say it once, then refer back to it
                    text = "the same mistake as above" if v.mistake and v.mistake in said else _line(v.feedback)
                    said.add(v.mistake)
                    lines.append(f"    {STATUS_MARK[v.status]} {v.check.name}: {text}")
        skipped = [v for v in every if v.status == Status.SKIPPED]
        if skipped:  # once per chapter, not under every exercise
            lines.append(f"  - {len(skipped)} CUDA check(s) skipped: {_line(skipped[0].feedback)}")
    score, top = totals(grade.verdicts)
    lines += ["", f"Total: {score:g} / {top:g}   ({grade.seconds:.1f} s)"]
    if grade.notes:
        lines += ["", "Notes:"] + [f"  - {_line(n)}" for n in grade.notes]
    if grade.hidden_notes:
        lines += ["", "Notes from the hidden checks' runs (not shown to students before the due date):"]
        lines += [f"  - {_line(n)}" for n in grade.hidden_notes]
    return "\n".join(lines)


def _line(text):
    """Learner-controlled text as one line: a newline in it can never start a report line of its own."""
    return one_line(text, MAX_TEXT)


def gradescope_json(grade, hidden_visibility="after_due_date"):
    """results.json in Gradescope's format: every test named after its check's stable key (which starts
    with the exercise's name) and tagged with the exercise. Checks that are not public get
    `hidden_visibility`, so what they ask stays out of sight until then."""
    tests = []
    for n, v in enumerate(grade.verdicts, start=1):
        test = {
            "name": f"{v.check.key}: {v.check.name}",
            "number": str(n),
            "score": v.score,
            "max_score": v.max_score,
            "output": _line(v.feedback) if v.status != Status.PASSED else "",
            "output_format": "text",
            "tags": [v.check.exercise],
            "visibility": "visible" if v.check.visible else hidden_visibility,
        }
        if v.status != Status.SKIPPED:
            test["status"] = "passed" if v.status == Status.PASSED else "failed"
        else:
            test["output"] = f"skipped: {_line(v.feedback)}"
        tests.append(test)
    return {"score": totals(grade.verdicts)[0], "execution_time": round(grade.seconds, 2),
            "output": "\n".join(_line(n) for n in grade.notes), "output_format": "text",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
