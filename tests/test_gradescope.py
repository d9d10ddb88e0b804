"""`python -m grader gradescope OUT.zip`, and its run_autograder against a simulated /autograder tree."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from grader.checks import all_checks
from tests.conftest import ROOT
from tests.test_hostile import HOSTILE, honest_source

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    run = subprocess.run([sys.executable, "-m", "grader", "gradescope", str(out), "--wall-seconds", "5"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return out


def unpack(zip_path, root):
    """What Gradescope does: the zip in /autograder/source, the student's files in /autograder/submission."""
    source = root / "source"
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            zf.extract(info, source)
            os.chmod(source / info.filename, (info.external_attr >> 16) & 0o777)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return source


def run_autograder(root):
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                          text=True, timeout=300, cwd="/")


def test_the_zip_holds_what_grading_needs_and_nothing_else(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
    for script in ("setup.sh", "run_autograder"):
        assert infos[script].external_attr >> 16 & stat.S_IXUSR
    names = set(infos)
    assert {"grader/cli.py", "grader/checks/ch01.py", "grader/sandbox/server.py", "posenc_ref/__init__.py",
            "posenc_selfcheck/probes.py", "requirements.txt", "gradescope.json"} <= names
    assert any(n.startswith("posenc_selfcheck/data/") for n in names)
    assert not [n for n in names if n.split("/")[0] in ("solutions", "chapters", "tests", "notebooks", ".git")]
    assert not [n for n in names if "__pycache__" in n]
    torch_at = setup.index("torch==2.13.0")
    assert torch_at < setup.index("-r requirements.txt")  # torch first, pinned
    for script in ("setup.sh", "run_autograder"):
        check = subprocess.run(["bash", "-n", "/dev/stdin"], input=zipfile.ZipFile(autograder_zip).read(script),
                               capture_output=True)
        assert check.returncode == 0, check.stderr


def test_run_autograder_writes_gradescope_results_with_hidden_checks_marked(autograder_zip, tmp_path):
    root = tmp_path / "autograder"
    unpack(autograder_zip, root)
    # the honest solution, plus an attack on shift_matrix that also writes a fake results.json
    attack = (HOSTILE / "fake_results_file.py").read_text().replace("__TARGET__", str(root / "results"))
    (root / "submission" / "notebook.py").write_text(honest_source() + "\n\n" + attack)
    run = run_autograder(root)
    assert run.returncode == 0, run.stderr
    text = (root / "results" / "results.json").read_text()
    assert "FAKE-RESULT" not in text and "31337" not in text
    results = json.loads(text)
    tests = results["tests"]
    assert results["stdout_visibility"] == "hidden" and abs(results["score"] - sum(t["score"] for t in tests)) < 1e-9
    by_exercise = {}
    for t in tests:
        exercise = t["tags"][0]
        assert t["name"].startswith(exercise + ".") and t["visibility"] in VISIBILITY
        assert t.get("status", "passed") in ("passed", "failed")
        by_exercise.setdefault(exercise, []).append(t)
    ch01 = {ex: sum(t["score"] for t in by_exercise[ex]) for ex in
            ("sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding")}
    full = {ex: sum(c.points for c in all_checks() if c.exercise == ex and not c.cuda) for ex in ch01}
    assert ch01 == {**full, "shift_matrix": 0}  # the attacked exercise earns nothing, the others full marks
    public = {f"{c.key}: {c.name}": c.public for c in all_checks()}
    for t in tests:
        assert t["visibility"] == ("visible" if public[t["name"]] else "after_due_date")


def test_an_empty_submission_still_gets_a_results_file(autograder_zip, tmp_path):
    root = tmp_path / "autograder"
    unpack(autograder_zip, root)
    run = run_autograder(root)
    assert run.returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == [] and "Nothing to grade" in results["output"]


def test_visibility_of_hidden_checks_is_a_build_option(tmp_path):
    from grader.gradescope import build_zip

    build_zip(tmp_path / "a.zip", hidden_visibility="hidden", memory_mb=400)
    config = json.loads(zipfile.ZipFile(tmp_path / "a.zip").read("gradescope.json"))
    assert config["hidden_visibility"] == "hidden" and config["memory_mb"] == 400
    with pytest.raises(ValueError):
        build_zip(tmp_path / "b.zip", hidden_visibility="sometimes")
