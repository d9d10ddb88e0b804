"""Turn check results into what people read: a text report and Gradescope's results.json."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from pathlib import Path

from .checks import chapter_checks, chapter_modules

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"
STATUS_MARK = {"passed": "✓", "failed": "✗", "skipped": "-", "not implemented": "…"}


def chapter_of():
    return {c.exercise: chapter for chapter in chapter_modules() for c in chapter_checks(chapter)}


def chapter_title(chapter):
    """'ch01' -> 'Chapter 1 — sinusoidal', from the chapter source's file name."""
    number = chapter[2:]
    sources = sorted(CHAPTERS.glob(f"{number}_*.py"))
    name = sources[0].stem.split("_", 1)[1].replace("_", " ") if sources else ""
    return f"Chapter {int(number)}" + (f" — {name}" if name else "")


def totals(results):
    return sum(r.score for r in results), sum(r.max_score for r in results)


def _missing(rs):
    return all(r.status in ("not implemented", "skipped") for r in rs)


def text_report(submission, results, notes, seconds):
    chapters = chapter_of()
    by_chapter = OrderedDict()
    for r in results:
        by_chapter.setdefault(chapters.get(r.check.exercise), OrderedDict()).setdefault(r.check.exercise, []).append(r)
    lines = [f"Grading {submission}", ""]
    untouched = []
    for chapter, exercises in by_chapter.items():
        if all(_missing(rs) for rs in exercises.values()):
            untouched.append((chapter, exercises))  # a chapter not attempted: one line, at the end
            continue
        lines.append(chapter_title(chapter))
        for exercise, rs in exercises.items():
            score, top = totals(rs)
            state = "not implemented yet" if _missing(rs) else ""
            lines.append(f"  {exercise:<34} {score:g}/{top:g}  {state}".rstrip())
            if _missing(rs):
                continue
            said = set()
            for r in rs:
                if r.status in ("failed", "not implemented"):
                    # a named mistake repeats across checks: say it once, then refer back to it
                    text = "the same mistake as above" if r.diagnosis and r.diagnosis in said else r.feedback
                    said.add(r.diagnosis)
                    lines.append(f"    {STATUS_MARK[r.status]} {r.check.name}: {text}")
            skipped = [r for r in rs if r.status == "skipped"]
            if skipped:
                lines.append(f"    - {len(skipped)} check(s) skipped: {skipped[0].feedback}")
    for chapter, exercises in untouched:
        top = sum(totals(rs)[1] for rs in exercises.values())
        lines.append(f"{chapter_title(chapter)}: not attempted ({', '.join(exercises)}: 0/{top:g})")
    score, top = totals(results)
    lines += ["", f"Total: {score:g} / {top:g}   ({seconds:.1f} s)"]
    if notes:
        lines += ["", "Notes:"] + [f"  - {n}" for n in notes]
    return "\n".join(lines)


def gradescope_json(results, notes, seconds):
    """results.json in Gradescope's format: every test named after its exercise and tagged with it."""
    tests = []
    for n, r in enumerate(results, start=1):
        test = {
            "name": f"{r.check.exercise}: {r.check.name}",
            "number": str(n),
            "score": r.score,
            "max_score": r.max_score,
            "output": r.feedback if r.status != "passed" else "",
            "tags": [r.check.exercise],
            "visibility": "visible" if r.check.public else "after_due_date",
        }
        if r.status != "skipped":
            test["status"] = "passed" if r.status == "passed" else "failed"
        else:
            test["output"] = f"skipped: {r.feedback}"
        tests.append(test)
    score, _ = totals(results)
    return {"score": score, "execution_time": round(seconds, 2), "output": "\n".join(notes),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def write_json(path, payload):
    """Atomic: a reader never sees half a file."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f, indent=1)
    os.replace(tmp, path)
