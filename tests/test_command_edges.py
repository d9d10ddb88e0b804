"""The commands' edges: `scripts/test.sh PATH` runs PATH only; `python -m grader` on a Python without torch
says which Python to use, in one line, instead of a traceback."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.fixture
def test_sh(tmp_path):
    """scripts/test.sh and env.sh as they are, a setup.sh that does nothing, and a python that writes its
    arguments (one a line) to args.txt: what test.sh hands to pytest."""
    (tmp_path / "scripts").mkdir()
    for name in ("test.sh", "env.sh"):
        shutil.copy(ROOT / "scripts" / name, tmp_path / "scripts" / name)
    (tmp_path / "scripts" / "setup.sh").write_text("#!/usr/bin/env bash\n")
    (tmp_path / "env" / "bin").mkdir(parents=True)
    python = tmp_path / "env" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/args.txt"\n')
    python.chmod(0o755)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    env = {**os.environ, "VIRTUAL_ENV": str(tmp_path / "env")}

    def run(*args, workers="1"):
        subprocess.run(["bash", str(tmp_path / "scripts" / "test.sh"), *args],
                       env={**env, "POSENC_TEST_WORKERS": workers}, check=True, capture_output=True, timeout=60)
        return (tmp_path / "args.txt").read_text().splitlines()

    return run


def test_test_sh_runs_everything_by_default_and_only_the_paths_it_is_given(test_sh):
    assert test_sh() == ["-m", "pytest", "tests", "solutions", "--nbval-lax", "-q"]
    assert test_sh("-x", "-k", "hints") == ["-m", "pytest", "tests", "solutions", "--nbval-lax", "-q", "-x", "-k",
                                            "hints"]
    assert test_sh("tests/test_x.py", "-x") == ["-m", "pytest", "--nbval-lax", "-q", "tests/test_x.py", "-x"]
    assert test_sh("tests/test_x.py::test_y") == ["-m", "pytest", "--nbval-lax", "-q", "tests/test_x.py::test_y"]
    # the whole suite on workers, one test file each at a time; a path, or the caller's own -n, runs as asked
    assert test_sh(workers="3") == ["-m", "pytest", "tests", "solutions", "-n", "3", "--dist", "loadfile",
                                    "--nbval-lax", "-q"]
    assert test_sh("tests/test_x.py", workers="3") == ["-m", "pytest", "--nbval-lax", "-q", "tests/test_x.py"]
    assert test_sh("-n", "2", workers="3") == ["-m", "pytest", "tests", "solutions", "--nbval-lax", "-q", "-n", "2"]


def test_test_sh_counts_the_cores_this_process_may_use_whatever_openmps_variables_say(tmp_path):
    """One worker per core and one more, at most 4: nproc's count, without the OMP_NUM_THREADS it honours (the
    tests set it to 1; a learner's shell may too)."""
    line = next(l for l in (ROOT / "scripts" / "test.sh").read_text().splitlines() if l.startswith("CORES="))
    cores = subprocess.run(["bash", "-c", f"{line}; echo $CORES"], env={**os.environ, "OMP_NUM_THREADS": "1"},
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert int(cores) == len(os.sched_getaffinity(0))


def test_the_grader_on_a_python_without_torch_says_which_python_to_use():
    # -S: this interpreter without its site-packages, so without torch (the grader's own modules come from the
    # working directory, as `python -m` finds them)
    run = subprocess.run([sys.executable, "-S", "-m", "grader", "grade", "examples/complete"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stdout == "" and "Traceback" not in run.stderr
    assert run.stderr.startswith("python -m grader: torch is not installed for this Python")
    assert ("use .venv/bin/python" in run.stderr) == (ROOT / ".venv" / "bin" / "python").exists()
    assert run.stderr.count("\n") == 1
