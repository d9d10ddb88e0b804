"""Both ways an nbgrader user grades, with the real nbgrader, against `python -m grader batch`:

  (1) `nbgrader autograde` on the exported course: the autograded test cells grade through the grader;
  (2) `python -m grader batch COURSE/submitted --assignment A --nbgrader-gradebook`: the batch's sandboxed
      grades written into nbgrader's gradebook.db through nbgrader's own autograde pipeline.

Three students hand in chapter 1: the solution, the untouched release, and sin/cos swapped (a typical
mistake). Both paths must give every student the batch's points per exercise; then nbgrader's
generate_feedback and export work on path (2)'s gradebook, without the instructor's paths. About two
minutes (nbgrader runs three notebooks in its kernel for path 1); skipped where nbgrader is not installed.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.assignment import get
from tests.conftest import ROOT

A = "ch01_sinusoidal"
NOTEBOOK = "01_sinusoidal.ipynb"
STUDENTS = ("alice", "bob", "carol")
SCORES = r"""
import json, sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + sys.argv[1] + "/gradebook.db") as gb:
    print(json.dumps({s.student_id: {g.name: g.score for nb in s.notebooks for g in nb.grades}
                      for s in gb.assignment_submissions(sys.argv[2])}))
"""


def env():
    # nbgrader calls its own console scripts (alembic): the environment's bin folder goes first on PATH
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def nbgrader(course, *args, timeout=600):
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, capture_output=True, text=True,
                         timeout=timeout, env=env())
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def without_markers(source):
    return "\n".join(line for line in source.splitlines() if "### BEGIN SOLUTION" not in line
                     and "### END SOLUTION" not in line)


def swap_sin_cos(source):
    return source.replace("= torch.sin(angles), torch.cos(angles)", "= torch.cos(angles), torch.sin(angles)")


def hand_in(course):
    """submitted/<student>/ch01_sinusoidal/: the release with the source's solutions (alice), untouched (bob),
    with sin and cos swapped (carol), each with nbgrader's timestamp.txt."""
    source = nbformat.read(course / "source" / A / NOTEBOOK, as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: without_markers(c.source) for c in source.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    for student, edit in (("alice", str), ("bob", None), ("carol", swap_sin_cos)):
        nb = nbformat.read(course / "release" / A / NOTEBOOK, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if edit and grade_id in solutions:
                cell.source = edit(solutions[grade_id])
        folder = course / "submitted" / student / A
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / NOTEBOOK)
        (folder / "timestamp.txt").write_text("2026-03-01 10:00:00.000000 UTC")
    assert "torch.cos(angles), torch.sin(angles)" in (course / "submitted" / "carol" / A / NOTEBOOK).read_text()


def points(course):
    run = subprocess.run([sys.executable, "-c", SCORES, str(course), A], capture_output=True, text=True, env=env())
    assert run.returncode == 0, run.stderr
    scores = json.loads(run.stdout)
    return {s: {g.split("-")[1]: v for g, v in grades.items() if g.endswith("-points")} for s, grades in scores.items()}


@pytest.fixture(scope="module")
def courses(tmp_path_factory):
    pytest.importorskip("nbgrader")
    base = tmp_path_factory.mktemp("nbgrader-grading")
    one = base / "path1"
    run = subprocess.run([sys.executable, "-m", "grader", "nbgrader", str(one), "--assignment", "ch01"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    nbgrader(one, "generate_assignment", A, "--force")
    hand_in(one)
    two = base / "path2"
    shutil.copytree(one, two)
    return one, two


@pytest.fixture(scope="module")
def batch(courses, tmp_path_factory):
    """Path (2), which is also the reference: the batch's own per-exercise points (CPU checks)."""
    _, two = courses
    out = tmp_path_factory.mktemp("batch")
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(two / "submitted"), "--out", str(out),
                          "--assignment", "ch01", "--nbgrader-gradebook", "--quiet", "--jobs", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, env=env())
    assert run.returncode == 0, run.stderr[-3000:]
    # nothing on stderr a user cannot act on: no SQLAlchemy SAWarning from nbgrader's gradebook (issue 28)
    assert "Warning" not in run.stderr, run.stderr[-3000:]
    with open(out / "gradebook.csv") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    return out, rows


def test_batch_grades_the_three_students_as_expected(batch):
    _, rows = batch
    ch01 = get("ch01")
    full = {ex: ch01.exercise_points(ex) for ex in ch01.exercises}
    assert {ex: float(rows["alice"][ex]) for ex in full} == full
    assert {ex: float(rows["bob"][ex]) for ex in full} == dict.fromkeys(full, 0.0)
    carol = {ex: float(rows["carol"][ex]) for ex in full}
    assert 0 < carol["sinusoidal_table"] < full["sinusoidal_table"] and carol["shift_matrix"] == full["shift_matrix"]
    # the time is the collected files' on this machine; nbgrader's timestamp.txt (the student's side's) a claim
    assert all(r["time_source"] == "file time" and r["claimed_time"] == "2026-03-01T10:00:00+00:00"
               for r in rows.values())
    assert not any(r["flags"] for r in rows.values())  # the test cells do not read as code that names the grader


def test_path_2_writes_the_batch_grades_into_nbgrader_s_gradebook(courses, batch):
    _, two = courses
    _, rows = batch
    got = points(two)
    assert set(got) == set(STUDENTS)
    for student in STUDENTS:
        assert got[student] == {ex: float(rows[student][ex]) for ex in get("ch01").exercises}, student


def test_path_1_nbgrader_autograde_gives_the_batch_points(courses, batch):
    one, _ = courses
    _, rows = batch
    nbgrader(one, "autograde", A, "--force", timeout=900)
    got = points(one)
    for student in STUDENTS:
        assert got[student] == {ex: float(rows[student][ex]) for ex in get("ch01").exercises}, student
    # what `nbgrader validate` decides on an executed notebook: the untouched one fails every test cell
    from nbgrader.validator import Validator

    untouched = nbformat.read(one / "autograded" / "bob" / A / NOTEBOOK, as_version=4)
    failed = Validator()._get_failed_cells(untouched)
    assert {c.metadata.nbgrader["grade_id"] for c in failed} == {f"ch01-{ex}-points" for ex in get("ch01").exercises}
    solved = nbformat.read(one / "autograded" / "alice" / A / NOTEBOOK, as_version=4)
    assert Validator()._get_failed_cells(solved) == []


def test_feedback_and_export_work_on_path_2_without_instructor_paths(courses, batch):
    _, two = courses
    out, _ = batch
    nbgrader(two, "generate_feedback", A, "--force")
    html = (two / "feedback" / "carol" / A / NOTEBOOK.replace(".ipynb", ".html")).read_text()
    assert "sin and cos are swapped" in html
    nbgrader(two, "export")
    with open(two / "grades.csv") as f:
        exported = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f) if r["assignment"] == A}
    totals = {s: sum(v for v in p.values()) for s, p in points(two).items()}
    assert exported == totals
    for text in [html, *(p.read_text() for p in (out / "feedback").glob("*.txt"))]:
        assert str(two) not in text and str(ROOT) not in text and str(out) not in text
