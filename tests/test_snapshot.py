"""Every bundled and test submission keeps its grades and feedback: tests/snapshots/chNN.json records them for chapter
NN's checks (status, score, feedback, named mistake per check; the chapter's exercises not implemented), and
tests/snapshots/notes.json each submission's notes (tests/snapshots/record.py).

Each submission is graded once, on every check (tests/conftest.graded, shared with the other tests), and compared
chapter by chapter, so a failure names the chapter. When a change of behaviour is intended, re-record the chapters it
touches with `python tests/snapshots/record.py --chapter N` and review the diff like code.
"""

import json

import pytest

from grader.checks import CHAPTERS
from tests.conftest import ROOT
from tests.float_text import same_structure
from tests.snapshots.record import NOTES, SNAPSHOTS, entry, notes, snapshot_file, submissions, whole

RECORDED = {chapter: json.loads(snapshot_file(chapter).read_text()) for chapter in CHAPTERS
            if snapshot_file(chapter).exists()}
NOTED = json.loads(NOTES.read_text())
SUBMISSIONS = sorted(str(p.relative_to(ROOT)) for p in submissions())


def changes(recorded, now):
    """{check key or "missing": (recorded, now)} for what differs beyond a last printed digit."""
    keys = sorted(set(recorded["checks"]) | set(now["checks"]))
    out = {k: (recorded["checks"].get(k), now["checks"].get(k)) for k in keys}
    out["missing"] = (recorded["missing"], now["missing"])
    return {k: pair for k, pair in out.items() if not same_structure(*pair)}


def test_every_chapter_has_a_snapshot_and_nothing_else_is_one():
    assert {p.stem for p in SNAPSHOTS.glob("*.json")} == set(CHAPTERS) | {NOTES.stem}


@pytest.mark.parametrize("chapter", sorted(RECORDED))
def test_the_snapshot_covers_every_bundled_and_test_submission(chapter):
    subs = {str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "submissions").glob("*.py")}
    subs |= {str(p.relative_to(ROOT)) for p in (ROOT / "examples").iterdir() if p.is_dir()}
    assert subs == set(RECORDED[chapter]) == set(NOTED)


@pytest.mark.parametrize("submission", SUBMISSIONS)
def test_grades_and_feedback_match_the_snapshot(submission):
    # feedback compared as tests/float_text.py does: another CPU may move a printed float32's last digit
    grade = whole(ROOT / submission)
    assert {chapter: changes(RECORDED[chapter][submission], entry(grade, chapter)) for chapter in sorted(RECORDED)
            if changes(RECORDED[chapter][submission], entry(grade, chapter))} == {}
    assert same_structure(NOTED[submission], notes(grade))
