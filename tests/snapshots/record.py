"""Record tests/snapshots/chNN.json: every bundled and test submission's grades and feedback on one chapter's checks.

    python tests/snapshots/record.py --chapter 3     # grades chapter 3's exercises only, rewrites ch03.json only
    python tests/snapshots/record.py                 # every chapter, one file each

A chapter's file is what grading that chapter alone gives (the grader's `checks=`, as `--assignment ch03` grades):
the draws of main checks and twins are keyed on the check and the student, so they are those of the whole course.
"""

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SNAPSHOTS = Path(__file__).resolve().parent


def snapshot_file(chapter):
    return SNAPSHOTS / f"{chapter}.json"


def submissions():
    return [ROOT / "examples" / "complete", ROOT / "examples" / "typical_mistakes",
            *sorted((ROOT / "tests" / "submissions").glob("*.py"))]


@lru_cache(maxsize=None)
def _grader(chapter):
    """One grader per chapter, asking for that chapter's checks only (its twins are added by the grader)."""
    from grader.checks import chapter_checks
    from grader.grading import Grader
    from tests.conftest import settings

    return Grader(settings(), chapter_checks(chapter))


def snapshot_of(path, chapter):
    """One submission's entry in a chapter's file: each check's [status, score, max score, feedback, named mistake],
    the exercises not implemented, and the notes of the chapter's grading."""
    from tests.conftest import STUDENT

    grade = _grader(chapter).grade(str(Path(path).resolve()), student=STUDENT)
    return {"checks": {v.check.key: [str(v.status), v.score, v.max_score, v.feedback, v.mistake]
                       for v in grade.verdicts if v.status != "not implemented"},
            "missing": sorted({v.check.exercise for v in grade.verdicts if v.status == "not implemented"}),
            "notes": grade.notes}


def record(chapter):
    data = {str(p.relative_to(ROOT)): snapshot_of(p, chapter) for p in submissions()}
    path = snapshot_file(chapter)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {path} ({len(data)} submissions)")


def main():
    sys.path.insert(0, str(ROOT))
    from grader.checks import CHAPTERS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", type=int, help="record this chapter's file only (e.g. 3 for ch03.json)")
    args = parser.parse_args()
    chapters = list(CHAPTERS) if args.chapter is None else [f"ch{args.chapter:02d}"]
    unknown = [c for c in chapters if c not in CHAPTERS]
    if unknown:
        parser.error(f"no chapter {unknown[0]} (chapters: {', '.join(CHAPTERS)})")
    for chapter in chapters:
        record(chapter)


if __name__ == "__main__":
    main()
