"""Record tests/snapshots/grades.json: every bundled and test submission's grades and feedback.

    python tests/snapshots/record.py
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "grades.json"


def submissions():
    return [ROOT / "examples" / "complete", ROOT / "examples" / "typical_mistakes",
            *sorted((ROOT / "tests" / "submissions").glob("*.py"))]


def snapshot_of(path):
    from grader.language import phrasebook
    from tests.conftest import graded

    grade, english = graded(str(Path(path).resolve())), phrasebook()  # feedback and notes as English reads them
    return {"checks": {v.check.key: [str(v.status), v.score, v.max_score, english.render(v.feedback), v.mistake]
                       for v in grade.verdicts if v.status != "not implemented"},
            "missing": sorted({v.check.exercise for v in grade.verdicts if v.status == "not implemented"}),
            "notes": [english.render(n) for n in grade.notes]}


def main():
    sys.path.insert(0, str(ROOT))
    data = {str(p.relative_to(ROOT)): snapshot_of(p) for p in submissions()}
    SNAPSHOT.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {SNAPSHOT} ({len(data)} submissions)")


if __name__ == "__main__":
    main()
