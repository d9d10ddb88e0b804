"""Record tests/snapshots/chNN.json: every bundled and test submission's grades and feedback on one chapter's checks
(status, score, max score, feedback in English, named mistake; the chapter's exercises not implemented), and
tests/snapshots/notes.json: each submission's notes.

    python tests/snapshots/record.py --chapter 3     # grades chapter 3's exercises only, rewrites ch03.json only
    python tests/snapshots/record.py                 # the whole course at once: every chapter's file and the notes

A chapter's checks grade the same alone as with the whole course (`--assignment ch03` grades so): the draws of main
checks and twins are keyed on the check and the student. A note belongs to the submission, not to a chapter.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SNAPSHOTS = Path(__file__).resolve().parent
NOTES = SNAPSHOTS / "notes.json"


def snapshot_file(chapter):
    return SNAPSHOTS / f"{chapter}.json"


def submissions():
    return [ROOT / "examples" / "complete", ROOT / "examples" / "typical_mistakes",
            *sorted((ROOT / "tests" / "submissions").glob("*.py"))]


def whole(path):
    """The submission graded on every check (tests/conftest.graded: once per test session, shared)."""
    from tests.conftest import graded

    return graded(str(Path(path).resolve()))


def alone(path, chapter):
    """The submission graded on one chapter's checks only."""
    from grader.checks import chapter_checks
    from grader.grading import Grader
    from tests.conftest import STUDENT, settings

    return Grader(settings(), chapter_checks(chapter)).grade(str(Path(path).resolve()), student=STUDENT)


def entry(grade, chapter):
    """One submission's entry in a chapter's file, from a grade that holds that chapter's checks."""
    from grader.checks import chapter_of

    of = chapter_of()
    mine = [v for v in grade.verdicts if of[v.check.exercise] == chapter]
    return {"checks": {v.check.key: [str(v.status), v.score, v.max_score, str(v.feedback), v.mistake]
                       for v in mine if v.status != "not implemented"},
            "missing": sorted({v.check.exercise for v in mine if v.status == "not implemented"})}


def notes(grade):
    return [str(n) for n in grade.notes]


def _write(path, data):
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {path} ({len(data)} submissions)")


def main():
    sys.path.insert(0, str(ROOT))
    from grader.checks import CHAPTERS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", type=int, help="record this chapter's file only (e.g. 3 for ch03.json)")
    args = parser.parse_args()
    key = {p: str(p.relative_to(ROOT)) for p in submissions()}
    if args.chapter is not None:
        chapter = f"ch{args.chapter:02d}"
        if chapter not in CHAPTERS:
            parser.error(f"no chapter {chapter} (chapters: {', '.join(CHAPTERS)})")
        _write(snapshot_file(chapter), {key[p]: entry(alone(p, chapter), chapter) for p in key})
        return
    grades = {p: whole(p) for p in key}
    for chapter in CHAPTERS:
        _write(snapshot_file(chapter), {key[p]: entry(g, chapter) for p, g in grades.items()})
    _write(NOTES, {key[p]: notes(g) for p, g in grades.items()})


if __name__ == "__main__":
    main()
