"""One student never stops the class, and a submission's time is the platform's record (issue 25), with the real
nbgrader, through `python -m grader batch COURSE/submitted --assignment A --nbgrader-gradebook`:

- bob hands in a notebook nbgrader's own conversion refuses (a test cell copied above the others: nbgrader drops
  the copy's metadata and then stops on its schema). Before, the batch exited 1 with only the students sorted
  before him in gradebook.db, on every rerun; now every student reaches gradebook.db, bob's row holds the batch's
  points with a comment saying why, and a rerun gives the same;
- carol hands in after the due date and writes a timestamp.txt that says she was early (the file nbgrader's
  `submit` writes on the student's side). The batch and gradebook.db both take her files' time on the
  instructor's machine: she is late; her claim is only shown, labelled as hers.

About a minute; skipped where nbgrader is not installed.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import subprocess
import sys

import nbformat
import pytest

from grader.assignment import get
from tests.conftest import ROOT
from tests.test_nbgrader_grading import NOTEBOOK, A, env, nbgrader, without_markers

DUE = "2026-03-01T12:00:00"
EARLY, LATE = 1772272800, 1772445600  # 2026-02-28T10:00Z, 2026-03-02T10:00Z
CLAIMED = "2026-03-01 10:00:00.000000 UTC"  # every timestamp.txt: before the due date
ROWS = r"""
import json, sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + sys.argv[1] + "/gradebook.db") as gb:
    print(json.dumps({s.student_id: {"timestamp": str(s.timestamp), "late": s.total_seconds_late,
                                     "points": {g.name: g.score for nb in s.notebooks for g in nb.grades},
                                     "comments": sorted({c.auto_comment or "" for nb in s.notebooks
                                                         for c in nb.comments})}
                      for s in gb.assignment_submissions(sys.argv[2])}))
"""
DUE_DATE = r"""
import datetime, sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + sys.argv[1] + "/gradebook.db") as gb:
    gb.update_or_create_assignment(sys.argv[2], duedate=datetime.datetime(2026, 3, 1, 12, 0))
"""


def python(*args):
    run = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, env=env())
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def hand_in(course):
    """alice: the solutions, on time; bob: the solutions with a test cell copied to the top; carol: the solutions,
    two days late, with a timestamp.txt that says otherwise."""
    source = nbformat.read(course / "source" / A / NOTEBOOK, as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: without_markers(c.source) for c in source.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    for student, when in (("alice", EARLY), ("bob", EARLY), ("carol", LATE)):
        nb = nbformat.read(course / "release" / A / NOTEBOOK, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in solutions:
                cell.source = solutions[grade_id]
        if student == "bob":
            test = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
            nb.cells.insert(0, copy.deepcopy(test))
            nb.cells[0]["id"] = "copied-test"
        folder = course / "submitted" / student / A
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / NOTEBOOK)
        os.utime(folder / NOTEBOOK, (when, when))
        (folder / "timestamp.txt").write_text(CLAIMED)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    pytest.importorskip("nbgrader")
    course = tmp_path_factory.mktemp("nbgrader-class") / "course"
    run = subprocess.run([sys.executable, "-m", "grader", "nbgrader", str(course), "--assignment", "ch01"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    nbgrader(course, "generate_assignment", A, "--force")
    python(DUE_DATE, str(course), A)
    hand_in(course)
    return course


def batch(course, out):
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(course / "submitted"), "--out", str(out),
                          "--assignment", "ch01", "--nbgrader-gradebook", "--quiet", "--jobs", "2", "--due", DUE],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, env=env())
    with open(out / "gradebook.csv") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return run, rows, json.loads(python(ROWS, str(course), A))


def test_one_notebook_nbgrader_refuses_costs_only_its_row_and_a_forged_timestamp_changes_nothing(course, tmp_path):
    full = {f"ch01-{ex}-points": get("ch01").exercise_points(ex) for ex in get("ch01").exercises}
    for attempt in ("first run", "rerun"):
        run, rows, db = batch(course, tmp_path / "out")
        assert run.returncode == 0, (attempt, run.stderr[-3000:])
        # every student reached gradebook.db with the batch's points (all three hand in the solutions)
        assert set(db) == {"alice", "bob", "carol"}, (attempt, db)
        assert all(db[s]["points"] == full for s in db), (attempt, db)
        # bob's row says why it was written without nbgrader's conversion; nobody else's does
        assert any("nbgrader could not process this notebook" in c for c in db["bob"]["comments"])
        assert not any(c for s in ("alice", "carol") for c in db[s]["comments"])
        assert "nbgrader could not process the notebook" in rows["bob"]["notes"]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert set(summary["nbgrader_unprocessed"]) == {"bob"}
        # carol: late by her files' time, in the batch and in gradebook.db; her timestamp.txt only shown as hers
        assert (rows["carol"]["submitted"], rows["carol"]["time_source"], rows["carol"]["late"]) == \
            ("2026-03-02T10:00:00+00:00", "file time", "late")
        assert rows["carol"]["claimed_time"] == "2026-03-01T10:00:00+00:00"
        assert (db["carol"]["timestamp"], db["carol"]["late"]) == ("2026-03-02 10:00:00", 22 * 3600)
        assert rows["alice"]["late"] == "on time" and db["alice"]["late"] == 0
