"""`python -m grader gradescope OUT.zip`, and its run_autograder against a simulated /autograder tree."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest

from grader.assignment import get
from grader.checks import all_checks
from tests.conftest import ROOT
from tests.test_hostile import HOSTILE, honest_source

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "gradescope_results.schema.json").read_text())


def valid_results(results, assignment=None):
    """results.json as Gradescope documents it (the JSON schema), and as students should see it: tests
    numbered "<exercise>.<check>" in order, short names, no 0-point test, the total the sum of the tests."""
    jsonschema.validate(results, SCHEMA)
    tests = results["tests"]
    assert abs(results["score"] - sum(t["score"] for t in tests)) < 1e-9
    numbers = [tuple(int(x) for x in t["number"].split(".")) for t in tests]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    exercises = list(dict.fromkeys(t["tags"][0] for t in tests))
    for t, (major, _) in zip(tests, numbers):
        assert exercises[major - 1] == t["tags"][0]  # grouped by exercise: "1.2" is the first one's second check
        assert len(t["name"]) <= 80 and t["max_score"] > 0 and 0 <= t["score"] <= t["max_score"] + 1e-9
        assert t["status"] == ("passed" if t["score"] == t["max_score"] else "failed")
    if assignment is not None:
        assert set(exercises) <= set(assignment.exercises)
        keys = {re.search(r"\[([\w.]+)\]$", t["output"].splitlines()[0]).group(1) for t in tests}
        assert keys <= assignment.keys
    return tests


def build(out, *args):
    run = subprocess.run([sys.executable, "-m", "grader", "gradescope", str(out), "--wall-seconds", "5", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    return build(tmp_path_factory.mktemp("gradescope") / "autograder-ch01.zip", "--assignment", "ch01")


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


def run_autograder(root, python=sys.executable):
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": python}
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
    assert {"grader/cli.py", "course/01_sinusoidal/exercises.py", "course/01_sinusoidal/mistakes.py",
            "course/03_relative/hidden_probes.py", "grader/sandbox/runtime/zygote.py", "posenc_ref/__init__.py",
            "posenc_selfcheck/probes.py", "requirements.txt", "gradescope.json"} <= names
    assert any(n.startswith("posenc_selfcheck/data/") for n in names)
    assert not [n for n in names if n.split("/")[0] in ("solutions", "tests", "notebooks", ".git")]
    assert not [n for n in names if n.startswith("course/") and n.endswith(("/chapter.py", ".po"))]  # not read
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
    # the honest solution of the whole course, plus an attack on shift_matrix that also writes a fake results.json
    attack = (HOSTILE / "fake_results_file.py").read_text().replace("__TARGET__", str(root / "results"))
    (root / "submission" / "notebook.py").write_text(honest_source() + "\n\n" + attack)
    start = time.monotonic()
    run = run_autograder(root)
    waited = time.monotonic() - start
    assert run.returncode == 0, run.stderr
    text = (root / "results" / "results.json").read_text()
    assert "FAKE-RESULT" not in text and "31337" not in text
    results = json.loads(text)
    ch01 = get("ch01")
    tests = valid_results(results, ch01)
    assert results["stdout_visibility"] == "hidden"
    # the assignment only: chapter 1's exercises, none of the other chapters' "not implemented yet"
    assert [t["tags"][0] for t in tests] == [c.exercise for ex in dict.fromkeys(c.exercise for c in ch01.checks)
                                             for c in ch01.checks if c.exercise == ex and not c.cuda]
    # what the student waited for, start-up included (the grading itself is most of it, never a fraction)
    assert 0.5 * waited <= results["execution_time"] <= waited
    cuda = [c for c in ch01.checks if c.cuda]
    assert cuda and f"{len(cuda)} CUDA check(s) not run" in results["output"]  # said once, not as 0-point tests
    by_exercise = {}
    for t in tests:
        by_exercise.setdefault(t["tags"][0], []).append(t)
    scores = {ex: sum(t["score"] for t in by_exercise[ex]) for ex in by_exercise}
    full = {ex: sum(c.points for c in all_checks() if c.exercise == ex and not c.cuda) for ex in scores}
    assert scores == {**full, "shift_matrix": 0}  # the attacked exercise earns nothing, the others full marks
    visible = {c.key: c.visible for c in all_checks()}  # public checks, and main checks (drawn inputs)
    for t in tests:
        key = re.search(r"\[([\w.]+)\]$", t["output"].splitlines()[0]).group(1)
        assert t["visibility"] == ("visible" if visible[key] else "after_due_date")


def test_a_defined_assignment_bundles_its_points_and_hidden_checks(tmp_path):
    course = tmp_path / "course.json"
    hidden = "sinusoidal_table.odd_d_model_raises_valueerror_naming"
    course.write_text(json.dumps({"assignments": {"week1": {
        "title": "Week 1", "chapters": ["ch00", "ch01"], "exercises": ["sinusoidal_table", "shift_matrix"],
        "points": {"sinusoidal_table": 20}, "hidden": [hidden]}}}))
    week1 = get("week1", course)
    assert week1.exercise_points("sinusoidal_table") == pytest.approx(20)
    assert week1.exercise_points("shift_matrix") == sum(c.points for c in all_checks()
                                                        if c.exercise == "shift_matrix" and not c.cuda)
    assert not next(c for c in week1.checks if c.key == hidden).public
    assert next(c for c in all_checks() if c.key == hidden).public  # the registry is untouched
    out = build(tmp_path / "week1.zip", "--assignment", "week1", "--course", str(course))
    root = tmp_path / "autograder"
    unpack(out, root)
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", root / "submission")
    assert run_autograder(root).returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    tests = valid_results(results, week1)
    assert results["score"] == pytest.approx(week1.max_points())  # the solution: full marks, in week1's points
    assert {t["tags"][0] for t in tests} == {"sinusoidal_table", "shift_matrix"}
    hidden_test = next(t for t in tests if f"[{hidden}]" in t["output"])
    assert hidden_test["visibility"] == "after_due_date"


def test_a_set_up_failure_names_its_cause_in_results_json(autograder_zip, tmp_path):
    """torch missing (a broken setup.sh): results.json says which step failed and which package is missing."""
    python = shutil.which("python3", path="/usr/bin")
    if not python or subprocess.run([python, "-I", "-c", "import torch"], capture_output=True).returncode == 0:
        pytest.skip("needs a system python3 without torch")
    root = tmp_path / "autograder"
    unpack(autograder_zip, root)
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", root / "submission")
    assert run_autograder(root, python).returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and results["tests"] == []
    assert "while starting the sandbox" in results["output"] and "No module named 'torch'" in results["output"]


def test_an_empty_submission_still_gets_a_results_file(autograder_zip, tmp_path):
    root = tmp_path / "autograder"
    unpack(autograder_zip, root)
    run = run_autograder(root)
    assert run.returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and results["tests"] == [] and "Nothing to grade" in results["output"]


def test_visibility_of_hidden_checks_is_a_build_option(tmp_path):
    from grader.gradescope import build_zip

    build_zip(tmp_path / "a.zip", hidden_visibility="hidden", memory_mb=400,
              secret_file=os.environ["POSENC_GRADER_SECRET"])
    config = json.loads(zipfile.ZipFile(tmp_path / "a.zip").read("gradescope.json"))
    assert config["hidden_visibility"] == "hidden" and config["memory_mb"] == 400 and config["assignment"] is None
    with pytest.raises(ValueError):
        build_zip(tmp_path / "b.zip", hidden_visibility="sometimes")


def test_running_out_of_memory_is_named_with_the_container_to_choose():
    from grader.gradescope import container_mb, failure

    results = failure("grading the submission", MemoryError(), get("ch03"))
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and results["tests"] == []
    assert "while grading the submission: MemoryError" in results["output"]
    assert "out of memory" in results["output"] and f"needs {container_mb(get('ch03'))} MB" in results["output"]


def test_the_bundle_carries_the_graders_secret_readable_by_its_owner_alone(tmp_path):
    """The main checks draw the same inputs on Gradescope as in `grade` and `batch` (grader/unseen.py)."""
    from grader.gradescope import build_zip
    from grader.settings import DEFAULT_SECRET
    from grader.unseen import load_secret

    secret_file = os.environ["POSENC_GRADER_SECRET"]
    build_zip(tmp_path / "a.zip", secret_file=secret_file)
    info = zipfile.ZipFile(tmp_path / "a.zip").getinfo(DEFAULT_SECRET)
    assert zipfile.ZipFile(tmp_path / "a.zip").read(info) == load_secret(secret_file)
    assert (info.external_attr >> 16) & 0o777 == 0o600


def _definitions(notebook):
    """The definitions of a solution notebook, as one .py file."""
    nb = json.loads((ROOT / "solutions" / notebook).read_text())
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
                       and not {"demo", "selfcheck"} & set(c["metadata"].get("tags", [])))


# The timing attack (issue 25): the learner's code sleeps for as long as a hidden input says (here: only when
# it is asked the hidden check's size on a real device), and reads the input back from the visible time.
SLEEPY = """

import time as _time
_honest_shaw_attention = shaw_attention


def shaw_attention(q, k, v, *args, **kwargs):
    if q.shape[-2] == 2048 and q.device.type != "meta":
        _time.sleep(__SLEEP__)
    return _honest_shaw_attention(q, k, v, *args, **kwargs)
"""


def test_a_hidden_childs_time_never_reaches_what_students_see(tmp_path):
    """Two submissions that differ only in how long a hidden child runs get the same visible tests and output, and
    an execution_time that leaves the hidden child's sleep out: it counts start-up and the visible work alone.
    (Two runs' times differ by seconds on a loaded machine, so the test compares each with the time waited.)"""
    hidden = next(c for c in get("ch03").checks if c.key == "shaw_attention.main_runs_at_scale_within_3_gib")
    assert not hidden.visible and hidden.params["args"][0]["shape"][-2] == 2048
    # the one call at L = 2048 (a main check, on inputs drawn for the student) sleeps
    bundle = build(tmp_path / "autograder-ch03.zip", "--assignment", "ch03", "--wall-seconds", "60")
    sleep = 3  # seconds, in the hidden check: without the fix the time shown holds it
    seen = {}
    for pause in (0, sleep):
        root = tmp_path / f"autograder-{pause}"
        unpack(bundle, root)
        (root / "submission" / "notebook.py").write_text(_definitions("03_relative.ipynb")
                                                         + SLEEPY.replace("__SLEEP__", str(pause)))
        start = time.monotonic()
        assert run_autograder(root).returncode == 0
        waited = time.monotonic() - start
        results = json.loads((root / "results" / "results.json").read_text())
        valid_results(results, get("ch03"))
        seen[pause] = results
        # the sleep happened (inside `waited`), and the time shown leaves it out: without the fix it is all of `waited`
        assert results["execution_time"] <= waited - pause
    assert seen[sleep]["score"] == seen[0]["score"] == get("ch03").max_points()  # the sleep fits the budget
    visible = [[(t["name"], t["score"], t["output"]) for t in seen[p]["tests"] if t["visibility"] == "visible"]
               for p in (0, sleep)]
    assert visible[0] == visible[1] and seen[0]["output"] == seen[sleep]["output"]


def test_the_bundle_grades_however_it_was_unpacked(autograder_zip, tmp_path):
    """Python's zipfile drops file modes (the secret lands 0644, the scripts without x): run_autograder sets the
    modes it needs itself and grades."""
    from grader.settings import DEFAULT_SECRET

    root = tmp_path / "autograder"
    with zipfile.ZipFile(autograder_zip) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    secret = root / "source" / DEFAULT_SECRET
    os.chmod(secret, 0o644)  # what an umask of 022 gives: zipfile creates files with the default mode
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", root / "submission")
    assert run_autograder(root).returncode == 0
    results = json.loads((root / "results" / "results.json").read_text())
    valid_results(results, get("ch01"))
    assert results["score"] == pytest.approx(get("ch01").max_points()), results["output"]
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
