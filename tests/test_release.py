"""`python -m grader release OUT`: the student bundle holds notebooks, the self-checks and their stored
answers, and nothing of the instructor's side; its self-checks run from it alone."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.release import build_release, scan
from tests.conftest import ROOT
from tests.test_hostile import honest_source


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "bundle"
    # `build --check` is tests/test_build_sync.py's job; here the generated files are taken as they are
    build_release(out, check_sync=False)
    return out


def test_the_bundle_holds_notebooks_selfchecks_and_readme_only(bundle):
    names = {p.name for p in bundle.iterdir()}
    notebooks = {p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    assert notebooks and notebooks <= names
    assert names - notebooks == {"zh", "posenc_selfcheck", "README.md", "requirements.txt", ".posenc-release"}
    # the Chinese edition of every notebook, beside a link to the one self-check package
    assert sorted(p.name for p in (bundle / "zh").glob("*.ipynb")) == sorted(notebooks)
    assert (bundle / "zh" / "posenc_selfcheck").resolve() == (bundle / "posenc_selfcheck").resolve()
    stored = sorted(p.name for p in (bundle / "posenc_selfcheck" / "data").iterdir())
    assert stored == sorted(p.name for p in (ROOT / "posenc_selfcheck" / "data").iterdir())
    assert not list(bundle.rglob("__pycache__"))
    assert "torch" in (bundle / "requirements.txt").read_text()
    assert scan(bundle) == []


def test_the_scan_finds_solutions_reference_and_hidden_material(bundle, tmp_path):
    leaky = tmp_path / "leaky"
    shutil.copytree(bundle, leaky)
    shutil.copy(ROOT / "solutions" / "01_sinusoidal.ipynb", leaky / "01_sinusoidal.ipynb")
    shutil.copytree(ROOT / "posenc_ref", leaky / "posenc_ref", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "course" / "03_relative", leaky / "course" / "03_relative")  # hidden checks and probes
    (leaky / "posenc_selfcheck" / "helpers.py").write_text(
        (ROOT / "posenc_ref" / "ch01_sinusoidal.py").read_text())  # reference code, renamed
    data = json.loads((leaky / "posenc_selfcheck" / "data" / "ch01.json").read_text())
    data["_index"]["shift_matrix"].append("shift_matrix.6")  # answers of a hidden check
    (leaky / "posenc_selfcheck" / "data" / "ch01.json").write_text(json.dumps(data))
    problems = "\n".join(scan(leaky))
    assert "01_sinusoidal.ipynb: a solution line" in problems
    assert "posenc_ref: instructor-only folder" in problems
    assert "course: instructor-only folder" in problems
    assert "posenc_selfcheck/helpers.py:" in problems and "lines of a solution in course/01_sinusoidal/chapter.py" \
        in problems
    assert "answers of shift_matrix.6, which is not a public check" in problems


def test_release_refuses_to_overwrite_a_folder_that_is_not_a_release(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(RuntimeError, match="not an earlier release"):
        build_release(tmp_path, check_sync=False)
    assert (tmp_path / "precious.txt").exists()


CHECK_SCRIPT = """
import contextlib, importlib.util, io, json, sys
report = {"posenc_ref": importlib.util.find_spec("posenc_ref") is not None,
          "grader": importlib.util.find_spec("grader") is not None}
import posenc_selfcheck
from posenc_selfcheck import SelfCheckFailed, check, public_checks
report["package"] = posenc_selfcheck.__file__

# the student notebook as shipped: every cell but the demos runs; the self-checks say "not implemented"
nb = json.load(open("01_sinusoidal.ipynb"))
out = io.StringIO()
ns = {"__name__": "__main__"}
with contextlib.redirect_stdout(out):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "demo" not in cell["metadata"].get("tags", []):
            exec("".join(cell["source"]), ns)
report["student"] = out.getvalue()

# a finished notebook passes; a wrong one is told what is wrong
for name, path in (("honest", sys.argv[1]), ("swapped", sys.argv[2])):
    ns, out = {"__name__": "__main__"}, io.StringIO()
    exec(open(path).read(), ns)
    results = {}
    for exercise in ("sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"):
        try:
            with contextlib.redirect_stdout(out):
                check(exercise, ns[exercise])
            results[exercise] = "passed: " + out.getvalue()
        except SelfCheckFailed as exc:
            results[exercise] = "failed: " + str(exc)
    report[name] = results
report["exercises"] = {}
for stored in __import__("pathlib").Path("posenc_selfcheck/data").glob("ch*.json"):
    for exercise in json.load(open(stored))["_index"]:
        report["exercises"][exercise] = len(public_checks(exercise))
print(json.dumps(report))
"""


def test_the_selfchecks_run_from_the_bundle_in_a_fresh_venv_without_the_reference(bundle, tmp_path):
    venv = tmp_path / "venv"
    # a fresh venv that reuses the running interpreter's packages (torch) through a .pth file: this works
    # whether the tests run from a venv or from a base interpreter (--system-site-packages would see the
    # base interpreter's packages only); the repository is not on its path
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    venv_site = subprocess.run([str(venv / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
                               capture_output=True, text=True, check=True).stdout.strip()
    (Path(venv_site) / "running_interpreter.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    honest, swapped = tmp_path / "honest.py", tmp_path / "swapped.py"
    honest.write_text(honest_source().replace("from posenc_selfcheck import check", ""))
    swapped.write_text((ROOT / "tests" / "submissions" / "ch01_swapped.py").read_text())
    script = tmp_path / "check.py"
    script.write_text(textwrap.dedent(CHECK_SCRIPT))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH: only what the venv sees
    # -c, like a Jupyter kernel: the current folder (the bundle) is first on sys.path
    run = subprocess.run([str(venv / "bin" / "python"), "-c", f"exec(open({str(script)!r}).read())", str(honest),
                          str(swapped)], cwd=bundle,
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.splitlines()[-1])
    assert not report["posenc_ref"] and not report["grader"]
    assert report["package"].startswith(str(bundle))
    assert report["student"].count("not implemented yet") == 3
    assert all(v.startswith("passed") and "checks passed" in v for v in report["honest"].values()), report["honest"]
    assert report["swapped"]["sinusoidal_table"].startswith("failed") and "sin and cos are swapped" in \
        report["swapped"]["sinusoidal_table"]
    assert {"sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"} <= set(report["exercises"])
    assert all(n > 0 for n in report["exercises"].values())


def test_an_assignment_s_release_holds_its_chapters_notebooks_only(tmp_path):
    from grader.assignment import get

    files = build_release(tmp_path / "ch01", check_sync=False, assignment=get("ch01"))
    assert [f for f in files if f.endswith(".ipynb")] == ["01_sinusoidal.ipynb", "zh/01_sinusoidal.ipynb"]
    assert "posenc_selfcheck/__init__.py" in files and scan(tmp_path / "ch01") == []
