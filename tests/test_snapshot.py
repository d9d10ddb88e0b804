"""Every bundled and test submission keeps its grades and feedback: tests/snapshots/chNN.json records them for chapter
NN's checks (status, score, feedback, named mistake per check; the chapter's exercises not implemented; notes), as
grading that chapter alone gives them (tests/snapshots/record.py).

The snapshot was recorded with the grader before its core was rewritten (one grading path, zygote and
sessions) and is unchanged by the rewrite. Split per chapter (issue 26), the chapters' files together equal, entry
by entry, a recording of every check at once. When a change of behaviour is intended, regenerate the chapters it
touches with `python tests/snapshots/record.py --chapter N` and review the diff like code.
"""

import json

import pytest

from grader.checks import CHAPTERS
from tests.conftest import ROOT
from tests.float_text import same_structure
from tests.snapshots.record import SNAPSHOTS, snapshot_file, snapshot_of

RECORDED = {chapter: json.loads(snapshot_file(chapter).read_text()) for chapter in CHAPTERS
            if snapshot_file(chapter).exists()}


def changes(recorded, now):
    """{check key, "missing" or "notes": (recorded, now)} for what differs beyond a last printed digit."""
    keys = sorted(set(recorded["checks"]) | set(now["checks"]))
    out = {k: (recorded["checks"].get(k), now["checks"].get(k)) for k in keys}
    out |= {k: (recorded[k], now[k]) for k in ("missing", "notes")}
    return {k: pair for k, pair in out.items() if not same_structure(*pair)}


def test_every_chapter_has_a_snapshot_and_nothing_else_is_one():
    assert {p.stem for p in SNAPSHOTS.glob("*.json")} == set(CHAPTERS)


@pytest.mark.parametrize("chapter", sorted(RECORDED))
def test_the_snapshot_covers_every_bundled_and_test_submission(chapter):
    subs = {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "submissions").glob("*.py")}
    subs |= {str(p.relative_to(ROOT)) for p in (ROOT / "examples").iterdir() if p.is_dir()}
    assert subs == set(RECORDED[chapter])


@pytest.mark.parametrize("chapter, submission", [(c, s) for c in sorted(RECORDED) for s in sorted(RECORDED[c])])
def test_grades_and_feedback_match_the_snapshot(chapter, submission):
    # feedback compared as tests/float_text.py does: another CPU may move a printed float32's last digit
    assert changes(RECORDED[chapter][submission], snapshot_of(ROOT / submission, chapter)) == {}
