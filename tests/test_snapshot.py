"""Every bundled and test submission keeps its grades and feedback: tests/snapshots/grades.json records
them (status, score, feedback, named mistake per check; exercises not implemented; notes).

The snapshot was recorded with the grader before its core was rewritten (one grading path, zygote and
sessions) and is unchanged by the rewrite. When a change of behaviour is intended, regenerate it with
`python tests/snapshots/record.py` and review the diff like code.
"""

import json

import pytest

from tests.conftest import ROOT
from tests.snapshots.record import SNAPSHOT, snapshot_of

RECORDED = json.loads(SNAPSHOT.read_text())


def test_the_snapshot_covers_every_bundled_and_test_submission():
    subs = {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "submissions").glob("*.py")}
    subs |= {str(p.relative_to(ROOT)) for p in (ROOT / "examples").iterdir() if p.is_dir()}
    assert subs == set(RECORDED)


@pytest.mark.parametrize("submission", sorted(RECORDED))
def test_grades_and_feedback_match_the_snapshot(submission):
    assert snapshot_of(ROOT / submission) == RECORDED[submission]
