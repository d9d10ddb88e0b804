"""Turn a Grade into what people read: a text report and Gradescope's results.json.

Every string that may come from a submission (feedback quoting the learner's exceptions, notes,
file names) goes through grader.escape on its way out, so a report shows text, never runs a
terminal escape sequence or renders markup.

Both come out in `language` (grader/language.py): every line, every check's name, every verdict's feedback and
every note is a message, rendered here; what the submission produced (file names, its exceptions' messages) is
inserted as it is. Check ids, numbers and marks are the same in every language.
"""

from __future__ import annotations

from collections import OrderedDict

from . import course
from .checks import chapter_of
from .escape import one_line
from .language import check_name, phrasebook
from .records import Status, messages, standalone, totals
from .settings import REPORT

pad = standalone("columns").pad  # display-width padding, without torch

STATUS_MARK = {Status.PASSED: "✓", Status.FAILED: "✗", Status.SKIPPED: "-", Status.MISSING: "…"}


def chapter_names():
    """{'ch01': 'sinusoidal', ...}: each chapter's name, from its folder's name (a message of grader.po, context
    CHAPTER_NAME: grader/i18n_grader.py)."""
    return {c.key: c.stem.split("_", 1)[1].replace("_", " ") for c in course.chapters()}


CHAPTER_NAME = "chapter name"


def chapter_title(chapter, say=None):
    """'ch01' -> 'Chapter 1 — sinusoidal', the name in the reader's language."""
    say = say or phrasebook()
    number, name = int(chapter[2:]), chapter_names().get(chapter)
    if name:
        return say("Chapter {number} — {name}", number=number, name=messages.msg(name, context=CHAPTER_NAME))
    return say("Chapter {number}", number=number)


def _not_attempted(verdicts):
    return all(v.status in (Status.MISSING, Status.SKIPPED) for v in verdicts)


def by_chapter(verdicts):
    """{chapter: {exercise: [verdicts]}} in chapter order."""
    chapters = chapter_of()
    out = OrderedDict()
    for v in verdicts:
        out.setdefault(chapters.get(v.check.exercise), OrderedDict()).setdefault(v.check.exercise, []).append(v)
    return OrderedDict(sorted(out.items(), key=lambda item: item[0] or ""))


def text_report(grade, language="en"):
    say = phrasebook(language)
    lines = [say("Grading {submission}", submission=one_line(grade.submission, REPORT.title_chars)), ""]
    for chapter, exercises in by_chapter(grade.verdicts).items():
        every = [v for vs in exercises.values() for v in vs]
        if all(_not_attempted(vs) for vs in exercises.values()):
            lines.append(say("{chapter}: not attempted ({exercises}: 0/{points})", chapter=chapter_title(chapter, say),
                             exercises=", ".join(exercises), points=f"{totals(every)[1]:g}"))
            continue
        lines.append(chapter_title(chapter, say))
        for exercise, vs in exercises.items():
            score, top = totals(vs)
            state = say("not implemented yet") if _not_attempted(vs) else ""
            lines.append(f"  {pad(exercise, 34)} {score:g}/{top:g}  {state}".rstrip())
            if _not_attempted(vs):
                continue
            said = set()
            for v in vs:
                if v.status in (Status.FAILED, Status.MISSING):
                    # a named mistake repeats across checks: say it once, then refer back to it
                    text = say("the same mistake as above") if v.mistake and v.mistake in said \
                        else _line(say.render(v.feedback))
                    said.add(v.mistake)
                    lines.append(say("    {mark} {name}: {feedback}", mark=STATUS_MARK[v.status],
                                     name=say.render(check_name(v.check)), feedback=text))
        skipped = [v for v in every if v.status == Status.SKIPPED]
        if skipped:  # once per chapter, not under every exercise
            lines.append(say("  - {count} CUDA check(s) skipped: {why}", count=len(skipped),
                             why=_line(say.render(skipped[0].feedback))))
    score, top = grade.total, grade.max_score
    lines += ["", say("Total: {score} / {top}   ({seconds} s)", score=f"{score:g}", top=f"{top:g}",
                      seconds=f"{grade.seconds:.1f}")]
    if grade.notes:
        lines += ["", say("Notes:")] + [f"  - {_line(say.render(n))}" for n in grade.notes]
    if grade.hidden_notes:
        lines += ["", say("Notes from the hidden checks' runs (not shown to students before the due date):")]
        lines += [f"  - {_line(say.render(n))}" for n in grade.hidden_notes]
    return "\n".join(lines)


def _line(text):
    """Learner-controlled text as one line: a newline in it can never start a report line of its own."""
    return one_line(text, REPORT.message_chars)


def _short(text, limit):
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def gradescope_json(grade, hidden_visibility="after_due_date", language="en"):
    """results.json in Gradescope's format (https://gradescope-autograders.readthedocs.io, "Autograder
    Specifications"): one test per check that is worth points here, numbered "<exercise>.<check>" in the
    assignment's order and tagged with the exercise; its name is short ("<exercise>: <check>", at most
    REPORT.test_name_chars characters), its output starts with the whole description and the check's stable key.
    Checks that are not public get `hidden_visibility`, so what they ask stays out of sight until then.
    CUDA checks skipped for want of a device are said once, in the top-level output, not as 0-point tests.
    Names and outputs in `language`; the numbers, keys, tags and the notes (the submission's) as they are."""
    say = phrasebook(language)
    tests, skipped, numbers = [], [], {}
    for v in grade.verdicts:
        if v.status == Status.SKIPPED or v.max_score <= 0:
            if v.status == Status.SKIPPED:
                skipped.append(v)
            continue
        exercise = numbers.setdefault(v.check.exercise, [len(numbers) + 1, 0])
        exercise[1] += 1
        name = say.render(check_name(v.check))
        description = f"{name} [{v.check.key}]"
        tests.append({
            "name": _short(f"{v.check.exercise}: {name}", REPORT.test_name_chars),
            "number": f"{exercise[0]}.{exercise[1]}",
            "score": v.score,
            "max_score": v.max_score,
            "status": "passed" if v.status == Status.PASSED else "failed",
            "output": description + ("" if v.status == Status.PASSED else "\n" + _line(say.render(v.feedback))),
            "output_format": "text",
            "tags": [v.check.exercise],
            "visibility": "visible" if v.check.visible else hidden_visibility,
        })
    output = [_line(say.render(n)) for n in grade.notes]
    if skipped:
        output.append(say("{count} CUDA check(s) not run: {why} (worth no points here)", count=len(skipped),
                          why=_line(say.render(skipped[0].feedback))))
    # the grade's total (records.totals): the checks left out of `tests` (skipped, worth no points) score 0
    return {"score": grade.total, "execution_time": round(grade.seconds, 2),
            "output": "\n".join(output), "output_format": "text",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
