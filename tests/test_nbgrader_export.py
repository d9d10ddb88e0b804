"""`python -m grader nbgrader OUT`: an nbgrader course source that the real nbgrader releases as the course's
own student notebooks (no solution line), and the `submitted/<student>/<assignment>/` layout read back.

The nbgrader part (about 15 s: nbgrader's start, seven assignments, one validation that runs a notebook)
is skipped where nbgrader is not installed (`bash scripts/setup.sh test notebook nbgrader`; CI has it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course import chapters
from grader.nbgrader_export import assignment_name, config, export
from grader.release import scan
from tests.conftest import ROOT

CHAPTERS = chapters()

NBGRADER_SCRIPT = r"""
import json, sys
from traitlets.config import Config
from nbgrader.apps import NbGraderAPI
from nbgrader.validator import Validator

root, validate = sys.argv[1], sys.argv[2]
config = Config()
config.CourseDirectory.root = root
path = root + "/nbgrader_config.py"
exec(open(path).read(), {"get_config": lambda: config, "__file__": path})
api = NbGraderAPI(config=config)
report = {}
for assignment in sys.argv[3:]:
    result = api.generate_assignment(assignment, force=True, create=True)
    report[assignment] = {"success": result["success"], "error": result.get("error", "")[-2000:]}
report["validate"] = Validator(config=config).validate(validate)
print("REPORT " + json.dumps(report))
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    out = tmp_path_factory.mktemp("nbgrader") / "course"
    run = subprocess.run([sys.executable, "-m", "grader", "nbgrader", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture(scope="module")
def released(course):
    pytest.importorskip("nbgrader")
    assignments = [assignment_name(c) for c in CHAPTERS]
    validate = course / "release" / "ch01_sinusoidal" / "01_sinusoidal.ipynb"
    # nbgrader calls its own console scripts (alembic): the environment's bin folder goes first on PATH
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run([sys.executable, "-c", NBGRADER_SCRIPT, str(course), str(validate), *assignments],
                         cwd=course, capture_output=True, text=True, timeout=300, env=env)
    lines = [line for line in run.stdout.splitlines() if line.startswith("REPORT ")]
    assert run.returncode == 0 and lines, run.stderr[-3000:]
    report = json.loads(lines[0][len("REPORT "):])
    for assignment in assignments:
        assert report[assignment]["success"], report[assignment]["error"]
    return course / "release", report["validate"]


def cells_with(nb, **meta):
    return [c for c in nb.cells if all(c.metadata.get("nbgrader", {}).get(k) == v for k, v in meta.items())]


def test_every_chapter_becomes_an_assignment_with_its_notebook_selfchecks_and_config(course):
    for chapter in CHAPTERS:
        folder = course / "source" / assignment_name(chapter)
        assert (folder / f"{chapter.stem}.ipynb").exists()
        assert (folder / "posenc_selfcheck" / "__init__.py").exists()
        assert sorted(p.name for p in (folder / "posenc_selfcheck" / "data").iterdir()) == \
            sorted(p.name for p in (ROOT / "posenc_selfcheck" / "data").iterdir())
    assert (course / "nbgrader_config.py").read_text() == config()
    assert (course / "kernels" / "posenc-course" / "posenc_nbgrader.py").exists()


def test_solution_cells_carry_nbgrader_metadata_with_hints_outside_the_region(course):
    for chapter in CHAPTERS:
        nb = nbformat.read(course / "source" / assignment_name(chapter) / f"{chapter.stem}.ipynb", as_version=4)
        marked = [c for c in nb.cells if "### BEGIN SOLUTION" in c.source]
        assert marked and marked == cells_with(nb, solution=True), chapter.name  # every region, and only those
        for cell in marked:
            lines = cell.source.splitlines()
            for n, line in enumerate(lines):
                if "### BEGIN SOLUTION" in line:
                    assert not lines[n + 1].strip().lower().startswith("# hint"), (chapter.name, lines[n + 1])
        hints = sum(line.strip().lower().startswith("# hint") for c in marked for line in c.source.splitlines())
        student = nbformat.read(ROOT / "notebooks" / f"{chapter.stem}.ipynb", as_version=4)
        assert hints == sum(line.strip().lower().startswith("# hint")
                            for c in student.cells if c.cell_type == "code" for line in c.source.splitlines())


def test_grade_ids_are_unique_stable_and_named_after_chapter_and_exercise(course, tmp_path):
    again = tmp_path / "again"
    export(again)
    for chapter in CHAPTERS:
        name = f"{assignment_name(chapter)}/{chapter.stem}.ipynb"
        assert (course / "source" / name).read_bytes() == (again / "source" / name).read_bytes()  # stable
        nb = nbformat.read(course / "source" / name, as_version=4)
        ids = [c.metadata.nbgrader["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        assert len(ids) == len(set(ids))
        prefix = f"ch{chapter.stem[:2]}-"
        for cell in cells_with(nb, solution=True):
            defined = build_names(cell.source)
            assert cell.metadata.nbgrader["grade_id"] in {prefix + n for n in defined}
        for cell in cells_with(nb, locked=True, grade=False):
            assert "selfcheck" in cell.metadata.get("tags", [])
            exercise = cell.source.split('"')[1]
            assert cell.metadata.nbgrader["grade_id"] == f"{prefix}{exercise}-selfcheck"
        assert len(cells_with(nb, locked=True)) == sum("selfcheck" in c.metadata.get("tags", []) for c in nb.cells)


def test_every_exercise_has_an_autograded_test_cell_worth_the_graders_points(course):
    """nbgrader's gradebook holds the grader's points: one test cell per exercise, after its self-check,
    worth the exercise's points on the CPU checks (summed here from the check registry)."""
    from grader.checks import chapter_checks

    for chapter in CHAPTERS:
        nb = nbformat.read(course / "source" / assignment_name(chapter) / f"{chapter.stem}.ipynb", as_version=4)
        key = f"ch{chapter.stem[:2]}"
        expected = {}
        for check in chapter_checks(key):
            if not check.cuda:
                expected[check.exercise] = expected.get(check.exercise, 0) + check.points
        tests = cells_with(nb, grade=True)
        assert {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in tests} == \
            {f"{key}-{ex}-points": points for ex, points in expected.items()}, chapter.name
        for cell in tests:
            exercise = cell.metadata.nbgrader["grade_id"].split("-")[1]
            before = nb.cells[nb.cells.index(cell) - 1]
            assert "selfcheck" in before.metadata.get("tags", []) and f'"{exercise}"' in before.source
            assert cell.metadata.nbgrader["locked"] and not cell.metadata.nbgrader["solution"]
            assert f'grade("{assignment_name(chapter)}", "{exercise}")' in cell.source
            assert f'check("{exercise}", {exercise})' in cell.source  # the self-check stands in for learners
            assert not re.search(r"\bgrader\b", cell.source)  # the batch would flag every notebook otherwise


def test_the_kernel_is_the_course_s_own_and_needs_no_environment_variable(course):
    spec = json.loads((course / "kernels" / "posenc-course" / "kernel.json").read_text())
    assert spec["argv"][0] == sys.executable
    env = {**os.environ, "PYTHONPATH": spec["env"]["PYTHONPATH"]}
    run = subprocess.run([sys.executable, "-c", "from posenc_nbgrader import grade; print(grade.func.__module__)"],
                         env=env, cwd=course, capture_output=True, text=True)
    assert run.stdout.strip() == "grader.nbgrader_cell", run.stderr
    config = {}
    namespace = {"get_config": lambda: type("C", (), {"__getattr__": lambda self, k: config.setdefault(k, type(
        "S", (), {})())})(), "__file__": str(course / "nbgrader_config.py")}
    saved = os.environ.get("JUPYTER_PATH")
    try:
        exec((course / "nbgrader_config.py").read_text(), namespace)
        assert os.environ["JUPYTER_PATH"].split(os.pathsep)[0] == str(course)  # nbgrader finds kernels/ there
    finally:
        os.environ.pop("JUPYTER_PATH") if saved is None else os.environ.__setitem__("JUPYTER_PATH", saved)


def execute_timeout(path):
    """c.Execute.timeout as nbgrader reads it from an nbgrader_config.py (traitlets' Config)."""
    from traitlets.config import Config

    config, saved = Config(), os.environ.get("JUPYTER_PATH")
    try:
        exec(path.read_text(), {"get_config": lambda: config, "__file__": str(path)})
    finally:
        os.environ.pop("JUPYTER_PATH") if saved is None else os.environ.__setitem__("JUPYTER_PATH", saved)
    return config.Execute.timeout


def kernel_timeout(course):
    """The grading limit the course's test cells pass to grader.nbgrader_cell.grade (kernels/.../posenc_nbgrader.py)."""
    import importlib.util

    path = course / "kernels" / "posenc-course" / "posenc_nbgrader.py"
    spec = importlib.util.spec_from_file_location(f"posenc_nbgrader_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.grade.keywords["timeout"]


def test_the_cell_timeout_follows_the_grading_limit_and_the_margin_in_settings(course, tmp_path, monkeypatch):
    """nbgrader's limit on a test cell is the notebook's grading limit (what the cell's grader waits) plus the
    margin in Settings, so the grading limit is reached first; with either changed, the regenerated export follows."""
    import dataclasses
    import math

    from grader import nbgrader_export, settings
    from grader.assignment import get

    margin = settings.WAITS.nbgrader_cell_margin_seconds
    assert kernel_timeout(course) == settings.BATCH_TIMEOUT_SECONDS
    assert execute_timeout(course / "nbgrader_config.py") == math.ceil(settings.BATCH_TIMEOUT_SECONDS + margin)
    assert margin > 0
    monkeypatch.setattr(nbgrader_export, "WAITS", dataclasses.replace(settings.WAITS, nbgrader_cell_margin_seconds=7.5))
    export(tmp_path, get("ch00"), timeout=90)
    cell = execute_timeout(tmp_path / "nbgrader_config.py")
    assert (cell, type(cell), kernel_timeout(tmp_path)) == (98, int, 90.0)  # nbgrader's trait is an integer


def test_the_nbgrader_command_passes_its_timeout_to_the_export(tmp_path):
    out = tmp_path / "course"
    run = subprocess.run([sys.executable, "-m", "grader", "nbgrader", str(out), "--assignment", "ch00", "--timeout",
                          "120"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert kernel_timeout(out) == 120.0


def cells_with_grade(cell):
    return cell.metadata.get("nbgrader", {}).get("grade", False)


def build_names(source):
    import ast

    return [n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def test_nbgrader_releases_the_courses_student_notebooks_with_no_solution_line(released):
    release, _ = released
    for chapter in CHAPTERS:
        folder = release / assignment_name(chapter)
        nb = nbformat.read(folder / f"{chapter.stem}.ipynb", as_version=4)
        # the build's student notebook, made on its own from the same chapter: the same code, cell by cell
        student = nbformat.read(ROOT / "notebooks" / f"{chapter.stem}.ipynb", as_version=4)
        # (the autograded test cells, which the build's notebooks do not have, aside)
        assert [c.source for c in nb.cells if c.cell_type == "code" and not cells_with_grade(c)] == \
            [c.source for c in student.cells if c.cell_type == "code"], chapter.name
        assert scan(folder) == [], chapter.name  # the release's own leak scan: no solution line, no marker


def test_nbgrader_validate_fails_an_untouched_notebook_and_locks_the_selfchecks(released):
    release, validation = released
    # the untouched chapter 1: every autograded test fails (each scored 0 by the grader), no locked cell changed
    assert "changed" not in validation
    assert sorted(cell["source"].split('"')[3] for cell in validation["failed"]) == \
        sorted(["sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"])
    # each says why it earned nothing, never nbgrader's "Partial credit; passed some but not all of the tests"
    for cell in validation["failed"]:
        assert "Partial credit" not in cell["error"] and "not implemented yet" in cell["error"], cell["error"]
    from nbgrader.utils import compute_checksum

    nb = nbformat.read(release / "ch01_sinusoidal" / "01_sinusoidal.ipynb", as_version=4)
    locked = cells_with(nb, locked=True)
    assert locked and all(c.metadata.nbgrader["checksum"] == compute_checksum(c) for c in locked)
    locked[0].source = locked[0].source.replace("check(", "print(")  # a learner edits a self-check
    assert compute_checksum(locked[0]) != locked[0].metadata.nbgrader["checksum"]  # what validate reports
