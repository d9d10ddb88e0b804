"""`python -m grader grade`, and the same checks through plain pytest."""

import json
import subprocess
import sys

import pytest

from grader import check_ids
from grader.assignment import get
from tests.conftest import ROOT
from tests.test_gradescope import valid_results

SUB = ROOT / "tests" / "submissions" / "ch01_swapped.py"
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def run(*args, timeout=300, cwd=ROOT):
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}  # `python -m grader` from another folder too
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


def test_grade_writes_a_report_and_gradescope_json(tmp_path):
    out = run("-m", "grader", "grade", str(SUB), "--json", str(tmp_path / "results.json"))
    assert out.returncode == 0, out.stderr
    assert "Chapter 1" in out.stdout and "sin and cos are swapped" in out.stdout and "Total:" in out.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    tests = valid_results(results)
    assert tests
    locked = check_ids.load()
    for t in tests:
        exercise = t["tags"][0]
        key = t["output"].splitlines()[0].rsplit("[", 1)[1].rstrip("]")  # the check's stable key, in its output
        assert key.startswith(exercise + ".") and key in locked
        assert t["visibility"] in VISIBILITY
    failed = [t for t in tests if t.get("status") == "failed"]
    assert failed and all(t["output"] for t in failed)  # every failure says why
    assert any(t["visibility"] == "after_due_date" for t in tests)  # hidden checks are marked
    # graded without --student: one fixed set of draws, and the report says so
    assert "graded without a student id" in out.stdout


def test_student_keys_the_draws_and_silences_the_note(tmp_path):
    out = run("-m", "grader", "grade", str(SUB), "--assignment", "ch01", "--student", "alice", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "graded without a student id" not in out.stdout and "Total:" in out.stdout


def test_a_sandbox_mode_the_machine_refuses_is_a_clear_error_with_exit_status_2():
    """POSENC_SANDBOX_MODE=nojail as root where other users cannot read Python: learner code could only run as
    root, so the grader refuses, in one message that says what to do (it was a Python traceback)."""
    import os

    import pytest

    from grader.sandbox.runtime import probe
    from grader.settings import Settings

    if os.geteuid() != 0 or probe.python_readable_by(Settings().uid_base):
        pytest.skip("the refusal needs root and a Python other users cannot read")
    env = {**os.environ, "POSENC_SANDBOX_MODE": "nojail"}
    out = subprocess.run([sys.executable, "-m", "grader", "grade", str(SUB)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300, env=env)
    assert out.returncode == 2, out.stderr
    error = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert error and error[0].startswith("error: the grader runs as root but POSENC_SANDBOX_MODE=nojail asks for "
                                         "no jail, and other users cannot read this Python"), out.stderr
    assert "POSENC_SANDBOX_MODE=user" in error[0] and "Traceback" not in out.stderr


def test_a_missing_submission_is_a_clear_error_with_exit_status_2():
    out = run("-m", "grader", "grade", "no/such/folder")
    assert out.returncode == 2
    assert "does not exist" in out.stderr and "Traceback" not in out.stderr


def test_plain_pytest_collects_the_checks_and_cuda_marker_selects_only_cuda_checks():
    out = run("-m", "pytest", "course/01_sinusoidal/exercises.py", "--submission", str(SUB), "-q")
    assert out.returncode == 1  # some checks fail for this submission: a grade, reported as test failures
    assert "sin and cos are swapped" in out.stdout
    cuda = run("-m", "pytest", "course/01_sinusoidal/exercises.py", "--submission", str(SUB), "-m", "cuda", "-q", "-rs")
    assert cuda.returncode == 0, cuda.stdout
    assert "skipped" in cuda.stdout and " passed" not in cuda.stdout and "failed" not in cuda.stdout


def test_every_subcommand_describes_each_argument_and_shows_an_example():
    import argparse

    from grader.cli import parser

    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == {"grade", "build", "batch", "gradescope", "release", "nbgrader", "i18n"}
    for name, command in sub.choices.items():
        assert "example:\n  python -m grader " + name in command.epilog
        for action in command._actions:
            assert action.help, (name, action.dest)
        text = command.format_help()
        defaults = [a for a in command._actions if a.option_strings and a.default not in (None, False, "==SUPPRESS==")]
        assert all("default" in command._get_formatter()._get_help_string(a) for a in defaults), name
        assert "(default: None)" not in text


def test_version_and_one_spelling_of_quiet_everywhere():
    out = run("-m", "grader", "--version")
    assert out.returncode == 0 and out.stdout.strip() == "posenc-course grader 0.1.0"  # pyproject.toml's version
    from grader.cli import parser

    sub = next(a for a in parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    for name in ("grade", "batch", "release"):
        assert "--quiet" in sub.choices[name].format_help(), name
    batch = sub.choices["batch"]
    assert "--no-progress" not in batch.format_help()  # the old spelling still works, unlisted
    assert batch.parse_args(["f", "--out", "o", "--no-progress"]).quiet is True


@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_jobs_must_be_a_whole_number_at_least_one(jobs, tmp_path):
    out = run("-m", "grader", "batch", str(tmp_path), "--out", str(tmp_path / "o"), "--jobs", jobs)
    assert out.returncode == 2 and "--jobs" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "o").exists()


def test_defaults_are_stated_in_help():
    import os

    from grader.cli import parser

    sub = next(a for a in parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    batch = " ".join(sub.choices["batch"].format_help().split())
    assert f"(default: {len(os.sched_getaffinity(0))}, the cores this process may use" in batch
    assert "6144: 6 GB leaves a wrong but honest answer room" in batch
    gradescope = " ".join(sub.choices["gradescope"].format_help().split())
    assert "(default: 512: fits inside the container" in gradescope


def test_json_dash_writes_results_to_stdout_and_the_report_to_stderr(tmp_path):
    out = run("-m", "grader", "grade", str(SUB), "--assignment", "ch01", "--json", "-", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "-").exists()
    results = json.loads(out.stdout)
    valid_results(results, get("ch01"))
    assert "Assignment ch01" in out.stderr and "sin and cos are swapped" in out.stderr


def test_an_unknown_assignment_is_a_clear_error():
    out = run("-m", "grader", "grade", str(SUB), "--assignment", "week99")
    assert out.returncode == 2 and "no assignment 'week99'" in out.stderr and "ch01" in out.stderr
