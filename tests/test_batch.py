"""`python -m grader batch`: parallel, resumable, deterministic; gradebook, feedback, class summary."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.checks import chapter_checks
from grader.sandbox import procs
from tests.conftest import ROOT
from tests.test_hostile import HOSTILE, honest_source

# full marks per chapter-1 exercise on a machine without a GPU, derived from the checks
CH01 = {ex: sum(c.points for c in chapter_checks("ch01") if c.exercise == ex and not c.cuda)
        for ex in ("sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding")}
STUDENTS = ("alice", "carol", "dave", "eve")


# No submission here needs a wall-clock limit to end (none loops), and the runs are compared for identical grades:
# a limit tight enough to fire for honest code on a busy machine (5 s did, with other jobs running) would make
# the grades depend on the load. This one never fires for them.
WALL = "60"


def batch(folder, out, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out),
                           "--wall-seconds", WALL, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def subs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", folder / "alice.ipynb")  # complete
    shutil.copy(ROOT / "tests" / "submissions" / "ch01_swapped.py", folder / "carol.py")  # typical mistakes
    (folder / "dave").mkdir()  # a folder holding a notebook that is not JSON
    (folder / "dave" / "01_sinusoidal.ipynb").write_text('{"cells": [')
    (folder / "eve.py").write_text(honest_source() + "\n\n" + (HOSTILE / "fork_outlives_parent.py").read_text())
    (folder / ".DS_Store").write_text("not a submission")
    return folder


@pytest.fixture(scope="module")
def first(subs, tmp_path_factory):
    out = tmp_path_factory.mktemp("batch") / "out"
    run = batch(subs, out, "--jobs", "2")
    assert run.returncode == 0, run.stderr
    return out, run


def grades(out):
    """What must not change between runs: every check's status and score, per student."""
    result = {}
    for path in sorted((out / "results").glob("*.json")):
        rec = json.loads(path.read_text())
        result[rec["student"]] = (rec["total"], [(c["key"], c["status"], c["score"]) for c in rec["checks"]])
    return result


def test_gradebook_has_a_row_per_student_and_a_column_per_exercise(first):
    out, _ = first
    with open(out / "gradebook.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == list(STUDENTS)
    assert set(CH01) <= set(rows[0]) and {"total", "max", "status", "flags"} <= set(rows[0])
    by = {r["student"]: r for r in rows}
    assert all(float(by["alice"][ex]) == points for ex, points in CH01.items())
    assert all(float(by["eve"][ex]) == points for ex, points in CH01.items())  # the daemon costs nothing
    assert 0 < float(by["carol"]["total"]) < float(by["alice"]["total"])
    assert float(by["dave"]["total"]) == 0 and by["dave"]["status"] == "graded"
    assert "forks or signals" in by["eve"]["flags"] and not by["alice"]["flags"]
    for student, row in by.items():
        rec = json.loads((out / "results" / f"{student}.json").read_text())
        assert float(row["total"]) == rec["total"] == sum(c["score"] for c in rec["checks"])


def test_feedback_is_a_readable_report_per_student(first):
    out, _ = first
    for student in STUDENTS:
        text = (out / "feedback" / f"{student}.txt").read_text()
        assert text.startswith(f"Feedback for {student}") and "Total:" in text
    assert "sin and cos are swapped" in (out / "feedback" / "carol.txt").read_text()
    assert "not a readable notebook" in (out / "feedback" / "dave.txt").read_text()


def test_summary_plots_and_run_statistics(first):
    out, run = first
    summary = json.loads((out / "summary.json").read_text())
    assert summary["graded"] == summary["submissions"] == 4 and not summary["errors"]
    rates = {(c["exercise"], c["name"]): c for c in summary["checks"]}
    swapped = rates[("sinusoidal_table", "matches the reference for seq_len=16, d_model=8")]
    assert swapped["attempted"] == 3 and swapped["failed"] == 1  # carol, among alice, carol, eve
    assert "sin and cos are swapped" in swapped["common_mistakes"][0][0]
    assert "What the class struggles with" in (out / "summary.md").read_text()
    for plot in ("score_histogram.png", "check_failure_rates.png"):
        assert (out / "plots" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    stats = json.loads((out / "run.json").read_text())
    assert stats["jobs"] == 2 and stats["graded"] == 4 and len(stats["workers"]) == 2
    assert all(w["maxrss_mb"] > 5 for w in stats["workers"])  # measured (small: the worker never loads torch)
    assert all(w["grading_maxrss_mb"] > 100 and w["zygote_maxrss_mb"] > 100 for w in stats["workers"])  # torch
    assert "grading [" in run.stderr and "4/4" in run.stderr  # the progress bar


def test_killed_mid_run_then_resumed_grades_each_submission_exactly_once(subs, first, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--jobs", "1",
                             "--wall-seconds", WALL, "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    results, deadline = out / "results", time.monotonic() + 300
    while time.monotonic() < deadline and not (results.exists() and list(results.glob("*.json"))):
        time.sleep(0.1)
    tree = procs.stamped(procs.descendants(proc.pid))  # its worker, the worker's fork server, a sandbox child
    assert tree
    os.kill(proc.pid, signal.SIGKILL)  # no chance to clean up: the rest die with it (parent-death signals)
    proc.wait()
    kept = {p.name: p.read_bytes() for p in (out / "results").glob("*.json")}
    assert 1 <= len(kept) < 4
    # each process of the chain ends when the one above it has (parent-death signals; a session server when its
    # grader hangs up): about a tenth of a second idle, longer on a loaded machine (0.5 s was once too short)
    assert not procs.gone_within(tree, 20), "a worker or its sandbox outlived the batch"
    # the killed worker could not remove its fork server's folder; another grader starting meanwhile (a test on
    # another worker) may already have swept it: test_a_dead_graders_folders_are_swept_and_a_live_ones_kept

    again = batch(subs, out, "--jobs", "1", "--no-progress")
    assert again.returncode == 0, again.stderr
    stats = json.loads((out / "run.json").read_text())
    assert stats["graded"] == 4 - len(kept)  # only what was missing
    assert all((out / "results" / name).read_bytes() == data for name, data in kept.items())  # untouched
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == list(STUDENTS)
    assert not list(out.rglob("*.tmp"))
    assert not _folders_of(tree)  # the next run swept them
    with open(out / "gradebook.csv") as f:
        assert [r["student"] for r in csv.DictReader(f)] == list(STUDENTS)
    # deterministic: the same grades as the first run, with another number of workers
    assert grades(out) == grades(first[0])

    gradebook = (out / "gradebook.csv").read_bytes()
    third = batch(subs, out, "--jobs", "2", "--no-progress")
    assert third.returncode == 0 and json.loads((out / "run.json").read_text())["graded"] == 0
    assert (out / "gradebook.csv").read_bytes() == gradebook


def test_a_dead_graders_folders_are_swept_and_a_live_ones_kept(tmp_path, monkeypatch):
    """The first sandbox folder a grading process makes sweeps away the folders of graders killed before they
    could remove theirs (SIGKILL, a batch stopped), and leaves a living grader's."""
    from grader.sandbox.host import tmpdirs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tmpdirs, "_SWEPT", [])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folders = {}
    for name, owner in (("dead", dead.pid), ("alive", os.getppid())):
        folders[name] = tmp_path / f"posenc-server-{name}"
        folders[name].mkdir()
        (folders[name] / ".owner").write_text(str(owner))
    mine = tmpdirs.make("posenc-server-")
    assert mine.is_dir() and not folders["dead"].exists() and folders["alive"].is_dir()
    assert int((mine / ".owner").read_text()) == os.getpid()


def _folders_of(pids):
    """Sandbox and fork-server folders whose owner is one of `pids`."""
    found = []
    for folder in Path(tempfile.gettempdir()).glob("posenc-s*-*"):
        try:
            if int((folder / ".owner").read_text()) in pids:
                found.append(folder)
        except (OSError, ValueError):  # no owner file, or another process removed it meanwhile
            continue
    return found
