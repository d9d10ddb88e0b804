"""The Gradescope bundle's set-up: requirements pinned for Python 3.10 (Ubuntu 22.04) and newer (24.04:
3.12), and a setup.sh that installs python3.X-venv where ensurepip is missing.

That the pins resolve for real is shown by `python scripts/gradescope_resolve.py` (pip's resolver against
the package registries, about 35 s: CI runs it in .ci/run); here, the logic that makes them.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from grader import gradescope
from tests.conftest import ROOT

PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]


def pins_for(requirements, python):
    env = {"python_version": python, "python_full_version": f"{python}.0"}
    reqs = [Requirement(line) for line in requirements.splitlines() if line.strip() and not line.startswith("#")]
    return [(r.name, str(r.specifier)) for r in reqs if r.marker is None or r.marker.evaluate(env)]


@pytest.mark.parametrize("python", PYTHONS)
def test_every_requirement_has_one_pin_per_python_the_tested_release_where_it_runs(python):
    pins = pins_for(gradescope._requirements(), python)
    assert sorted(name for name, _ in pins) == sorted(gradescope.REQUIREMENTS)
    for name, spec in pins:
        installed = metadata.version(name)
        # Requires-Python of the release the grader was tested with, read here on its own
        requires = metadata.metadata(name).get("Requires-Python") or ""
        if SpecifierSet(requires).contains(f"{python}.0"):
            assert spec == f"=={installed}", (name, python)
        else:
            assert spec == f"=={gradescope.FOR_OLDER_PYTHON[name]}", (name, python)


@pytest.mark.parametrize("spec, lowest", [(">=3.11", (3, 11)), (">=3.9,<3.14", (3, 9)), ("", (3, 0)),
                                          (">=3.10.2", (3, 11)), ("!=3.0.*,!=3.1.*,>=2.7", (3, 2)),
                                          ("~=3.12", (3, 12))])
def test_lowest_python_of_a_specifier(spec, lowest):
    assert gradescope._lowest_python(spec) == lowest


def test_a_release_that_needs_a_newer_python_without_an_older_pin_stops_the_build(monkeypatch):
    monkeypatch.setattr(gradescope, "FOR_OLDER_PYTHON", {})
    needs_newer = [n for n in gradescope.REQUIREMENTS
                   if gradescope._lowest_python(metadata.metadata(n).get("Requires-Python")) > (3, 10)]
    if not needs_newer:
        pytest.skip("every installed requirement runs on Python 3.10")
    with pytest.raises(RuntimeError, match=f"{needs_newer[0]} .* needs Python 3.1"):
        gradescope._requirements()


STUB_PYTHON3 = r"""#!/bin/bash
# python3 of the image: the real interpreter, without ensurepip until apt-get installed python3.X-venv
echo "python3 $*" >> "$STATE/log"
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin" && cp "$STATE/venv-python" "$3/bin/python" && exit 0
fi
[ -f "$STATE/venv-installed" ] || export PYTHONPATH="$STATE/shadow"
exec "$REAL_PYTHON" "$@"
"""
STUB_VENV_PYTHON = """#!/bin/bash
echo "venv-python $*" >> "$STATE/log"
"""
STUB_APT = r"""#!/bin/bash
echo "apt-get $*" >> "$STATE/log"
case "$*" in *-venv*) touch "$STATE/venv-installed" ;; esac
"""


def run_setup_sh(tmp_path, real_python, ensurepip):
    root, state, stubs = tmp_path / "autograder", tmp_path / "state", tmp_path / "stubs"
    for folder in (root / "source", state / "shadow", stubs):
        folder.mkdir(parents=True)
    (root / "source" / "setup.sh").write_text(gradescope.SETUP_SH)
    (state / "shadow" / "ensurepip.py").write_text("raise ImportError('no ensurepip: python3.X-venv is missing')\n")
    if ensurepip:
        (state / "venv-installed").touch()
    for path, text in ((stubs / "python3", STUB_PYTHON3), (stubs / "apt-get", STUB_APT),
                       (state / "venv-python", STUB_VENV_PYTHON)):
        path.write_text(text)
        path.chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "STATE": str(state),
           "REAL_PYTHON": real_python, "HOME": str(tmp_path)}
    run = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    return run, (state / "log").read_text().splitlines()


def python_310():
    path = Path("/root/.pyenv/versions/3.10.13/bin/python3.10")
    return str(path) if path.exists() else sys.executable


def test_setup_sh_installs_python_venv_where_ensurepip_is_missing(tmp_path):
    python = python_310()
    version = "%d.%d" % tuple(map(int, subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                                                      capture_output=True, text=True).stdout.split()))
    run, log = run_setup_sh(tmp_path, python, ensurepip=False)
    assert run.returncode == 0, run.stdout + run.stderr
    apt = [line for line in log if line.startswith("apt-get install")]
    assert apt == [f"apt-get install -y -qq python{version}-venv"]
    assert log.index(apt[0]) < log.index(f"python3 -m venv {tmp_path}/autograder/venv")
    torch = [n for n, line in enumerate(log) if "torch==2.13.0" in line]
    assert torch and "--index-url https://download.pytorch.org/whl/cpu" in log[torch[0]]
    assert torch[0] < [n for n, line in enumerate(log) if "-r requirements.txt" in line][0]


def test_setup_sh_leaves_apt_alone_where_python_can_make_venvs(tmp_path):
    run, log = run_setup_sh(tmp_path, python_310(), ensurepip=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not [line for line in log if line.startswith("apt-get")]


def test_setup_sh_refuses_a_python_older_than_3_10(tmp_path):
    old = Path("/root/.pyenv/versions/3.9.18/bin/python3.9")
    if not old.exists():
        pytest.skip("no Python 3.9 here")
    run, log = run_setup_sh(tmp_path, str(old), ensurepip=True)
    assert run.returncode != 0 and "Python 3.10 or newer is needed" in run.stdout
    assert not [line for line in log if "venv" in line and "-m venv" in line]


def test_the_resolution_script_is_named_in_the_docs_and_run_by_ci():
    assert "scripts/gradescope_resolve.py" in (ROOT / "docs" / "instructor.md").read_text()
    assert "scripts/gradescope_resolve.py" in (ROOT / ".ci" / "run").read_text()
