"""`python -m grader batch --assignment`: one assignment's gradebook, LMS file, submission times and late
flags, refused entries at the full maximum, feedback without the instructor's paths; spreadsheet-safe cells."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from grader.assignment import get
from grader.batch.discovery import discover
from grader.batch.reporting import write_outputs
from tests.conftest import ROOT

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_no_cell_of_the_gradebooks_can_start_a_formula(tmp_path):
    """Issue 15: ids `-A1`, `-2-3` reached the gradebook's student column as formulas. Every column, both files."""
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    (out / "results").mkdir(parents=True)
    (out / "errors").mkdir()
    names = ["-A1.py", "-2-3.py", "=1+1.py", "+SUM(A1).py", "@cmd.py", "alice.py"]
    for name in names:
        (folder / name).write_text("x = 1\n")
    _, entries = discover(folder, "plain")
    assert {"-A1", "-2-3"} <= set(entries)  # ids a spreadsheet reads as formulas
    ch00 = get("ch00")
    from grader.batch.discovery import submission_hash

    hashes = {s: submission_hash(e.path) for s, e in entries.items()}
    for n, (student, entry) in enumerate(entries.items()):
        if n == 0:
            continue  # one of them is an error row (the grader failed): its cells are escaped too
        record = {"student": student, "entry": entry.name, "sha256": hashes[student], "fingerprint": "f",
                  "run_id": "r", "total": 0.0, "max": ch00.max_points(), "exercises": {}, "notes": ["=note"],
                  "flags": ["-flag", "=HYPERLINK(\"x\")"], "checks": []}
        (out / "results" / f"{student}.json").write_text(json.dumps(record))
    (out / "errors" / f"{next(iter(entries))}.json").write_text(json.dumps({"error": "=CMD()"}))
    write_outputs(out, entries, hashes, "f", ch00, plots=False)
    for name in ("gradebook.csv", "lms.csv"):
        rows = read_csv(out / name)
        assert len(rows) == len(names) + 1, name  # one row per student
        cells = [cell for row in rows for cell in row]
        assert not [c for c in cells if c.startswith(FORMULA)], name
    lms = read_csv(out / "lms.csv")
    assert lms[0] == ["student", f"ch00 ({ch00.max_points():g})"] and all(len(r) == 2 for r in lms)


def test_the_checks_gradebook_has_a_column_per_check_key(tmp_path):
    """gradebook_checks.csv: a row per student, a column per check of the assignment named by its key, each cell the
    points scored on it; a skipped check and a student the grader could not grade leave their cells empty."""
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    (out / "results").mkdir(parents=True)
    (out / "errors").mkdir()
    for name in ("alice.py", "bob.py"):
        (folder / name).write_text("x = 1\n")
    _, entries = discover(folder, "plain")
    from grader.batch.discovery import submission_hash

    ch01 = get("ch01")
    hashes = {s: submission_hash(e.path) for s, e in entries.items()}
    keys = [c.key for c in ch01.checks]
    # alice: every other check passed (its points), the first check skipped, the rest failed
    checks = [{"key": c.key, "exercise": c.exercise, "status": "skipped" if i == 0 else "passed" if i % 2 else "failed",
               "score": c.points if i % 2 else 0.0, "name": c.name, "feedback": "", "mistake": ""}
              for i, c in enumerate(ch01.checks)]
    total = sum(c["score"] for c in checks)
    record = {"student": "alice", "entry": "alice.py", "sha256": hashes["alice"], "fingerprint": "f", "run_id": "r",
              "total": total, "max": ch01.max_points(), "exercises": {}, "notes": [], "flags": [], "checks": checks}
    (out / "results" / "alice.json").write_text(json.dumps(record))
    (out / "errors" / "bob.json").write_text(json.dumps({"error": "the grading worker died"}))
    write_outputs(out, entries, hashes, "f", ch01, plots=False)
    rows = read_csv(out / "gradebook_checks.csv")
    assert rows[0] == ["student", *keys, "total", "max"] and len(set(keys)) == len(keys)
    by = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert list(by) == ["alice", "bob"]
    assert by["alice"][keys[0]] == ""  # skipped: worth nothing here
    assert [float(by["alice"][c["key"]]) for c in checks[1:]] == [c["score"] for c in checks[1:]]
    assert float(by["alice"]["total"]) == total and float(by["alice"]["max"]) == ch01.max_points()
    assert all(by["bob"][k] == "" for k in keys)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class handing in chapter 1: the solution, a typical mistake under a formula-like name, a link (refused),
    a notebook that is not JSON; graded for --assignment ch01 with a due time in the past of two of them."""
    folder = tmp_path_factory.mktemp("class")
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", folder / "alice.ipynb")
    shutil.copy(ROOT / "tests" / "submissions" / "ch01_swapped.py", folder / "-A1.py")
    os.symlink(ROOT / "solutions" / "01_sinusoidal.ipynb", folder / "mallory.ipynb")
    (folder / "dave.ipynb").write_text('{"cells": [')
    for name, when in (("alice.ipynb", 1767225600), ("-A1.py", 1767312000), ("dave.ipynb", 1767312000)):
        os.utime(folder / name, (when, when))  # 2026-01-01 and 2026-01-02, 00:00 UTC
    out = tmp_path_factory.mktemp("out")
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--assignment",
                          "ch01", "--due", "2026-01-01T12:00", "--quiet", "--wall-seconds", "5", "--jobs", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return folder, out, run


def test_the_gradebook_covers_the_assignment_only(graded):
    _, out, run = graded
    ch01 = get("ch01")
    rows = read_csv(out / "gradebook.csv")
    header, body = rows[0], {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert header[2:2 + len(ch01.exercises)] == ch01.exercises  # its exercises, no other chapter's column
    assert set(body) == {"alice", "'-A1", "mallory.ipynb", "dave"}
    assert all(float(r["max"]) == ch01.max_points() for r in body.values())  # the CPU maximum, refused ones too
    assert float(body["alice"]["total"]) == ch01.max_points()
    assert 0 < float(body["'-A1"]["total"]) < ch01.max_points()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["max"] == ch01.max_points() and set(summary["exercises"]) == set(ch01.exercises)
    assert summary["assignment"]["name"] == "ch01" and "plain layout" in run.stdout


def test_a_refused_entry_is_listed_with_the_full_maximum_and_its_reason(graded):
    _, out, _ = graded
    body = {r[0]: r for r in read_csv(out / "gradebook.csv")[1:]}
    header = read_csv(out / "gradebook.csv")[0]
    mallory = dict(zip(header, body["mallory.ipynb"]))
    assert mallory["status"] == "refused" and float(mallory["total"]) == 0
    assert float(mallory["max"]) == get("ch01").max_points()
    assert "symbolic link" in mallory["notes"]
    assert "symbolic link" in json.loads((out / "summary.json").read_text())["refused"]["mallory.ipynb"]


def test_submission_times_and_late_flags(graded):
    _, out, _ = graded
    header, *rows = read_csv(out / "gradebook.csv")
    body = {r[0]: dict(zip(header, r)) for r in rows}
    assert (body["alice"]["submitted"], body["alice"]["time_source"], body["alice"]["late"]) == \
        ("2026-01-01T00:00:00+00:00", "file time", "on time")
    assert (body["'-A1"]["late"], body["dave"]["late"]) == ("late", "late")
    assert json.loads((out / "summary.json").read_text())["late"] == ["-A1", "dave"]


def test_the_lms_gradebook_has_one_row_per_student_and_one_total(graded):
    _, out, _ = graded
    rows = read_csv(out / "lms.csv")
    assert rows[0] == ["student", f"ch01 ({get('ch01').max_points():g})"]
    gradebook = {r[0]: r for r in read_csv(out / "gradebook.csv")[1:]}
    total = read_csv(out / "gradebook.csv")[0].index("total")
    assert {r[0]: r[1] for r in rows[1:]} == {s: r[total] for s, r in gradebook.items()}


def test_feedback_names_no_instructor_path(graded):
    folder, out, _ = graded
    texts = [p.read_text() for p in (out / "feedback").glob("*.txt")]
    texts += [p.read_text() for p in (out / "results").glob("*.json")]
    assert len(texts) == 8
    for text in texts:
        assert str(folder) not in text and str(out) not in text and str(ROOT) not in text
    assert "Assignment ch01" in (out / "feedback" / "alice.txt").read_text()
