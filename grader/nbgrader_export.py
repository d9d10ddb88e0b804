"""python -m grader nbgrader OUT [--assignment A]: the course as an nbgrader course, one assignment per
chapter (or the one named), graded two ways.

    OUT/nbgrader_config.py
    OUT/kernels/posenc-course/kernel.json      the notebooks' kernel for nbgrader: this Python, the grader importable
    OUT/source/<assignment>/NN_name.ipynb     each chapter of the assignment, in nbgrader's cell metadata
    OUT/source/<assignment>/posenc_selfcheck/ the public self-check package (what the notebooks import)

From the chapter sources (course/NN_name/chapter.py), like the build:
  - a code cell with `### BEGIN SOLUTION` ... `### END SOLUTION` regions is an nbgrader solution cell.
    The hint that opens a region moves above its BEGIN marker, so `nbgrader generate_assignment` keeps the
    hint and replaces the rest by the course's stub;
  - a self-check cell (tag `selfcheck`) is read-only (nbgrader's locked cell);
  - after it, an autograded test cell per exercise of the assignment, worth the exercise's points on the CPU
    checks (grader/assignment.py): where the grader is importable (nbgrader's kernel, through the course's
    kernel.json) it grades the notebook's folder for that exercise in the grader's sandbox
    (grader/nbgrader_cell.py) and returns the points; elsewhere it runs the self-check, so `nbgrader validate`
    fails an unfinished notebook;
  - grade_ids are stable: `chNN-<exercise>` for a solution cell, `chNN-<exercise>-selfcheck` for its check,
    `chNN-<exercise>-points` for its test;
  - cells tagged `solution-only` are left out (nbgrader cannot remove a cell from the release).

Two ways to grade (docs/instructor.md, "nbgrader"):
  (1) `nbgrader autograde A`: nbgrader runs each notebook in its kernel, WITHOUT the sandbox (the student's
      code runs there before the test cells); the test cells grade through the grader;
  (2) `python -m grader batch OUT/submitted --assignment A --nbgrader-gradebook`: the grader grades every
      submission in its sandbox, then `save_to_gradebook` runs nbgrader's own autograde pipeline with the
      notebook's execution replaced by the batch's points (InjectGrades), so nbgrader's gradebook.db,
      autograded/ notebooks, `generate_feedback`, `release_feedback` and `export` hold the same points.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

import nbformat

from . import course, render
from .leaks import BEGIN, END
from .records import messages
from .settings import BATCH_TIMEOUT_SECONDS, REPORT, WAITS

COURSE_ID = "posenc-course"
KERNEL = "posenc-course"  # the notebooks' kernelspec name (scripts/setup.sh registers one for learners)
SELFCHECK = re.compile(r"""\bcheck\(\s*["'](\w+)["']""")
EXCEPTION = re.compile(r"^(\w+\.)*\w*(Error|Exception): ")  # the last line of a traceback

CONFIG = f'''# nbgrader's configuration for the course written by `python -m grader nbgrader`.
# Release to students:   nbgrader generate_assignment ch01_sinusoidal   (one assignment per chapter, or --assignment)
# Grade in the grader's sandbox (path 2, recommended), from the course repository's root:
#   python -m grader batch COURSE/submitted --out grading/ch01 --assignment ch01 --nbgrader-gradebook
# or with nbgrader (path 1: the notebooks run in nbgrader's kernel WITHOUT the sandbox):
#   nbgrader autograde ch01_sinusoidal
import os

c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "{COURSE_ID}"
# where a solution was, students find the course's own stub (the self-checks report "not implemented yet")
c.ClearSolutions.code_stub = {{"python": {render.STUB!r}}}
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
# the notebooks' kernel, {KERNEL!r}, from this course's kernels/ folder: the Python that wrote this course, with
# the grader importable (no environment variable to set, no kernel to install)
_here = os.path.dirname(os.path.abspath(globals().get("__file__", "nbgrader_config.py")))
os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [_here, os.environ.get("JUPYTER_PATH", "")]))
'''

# (no word "grader" in a learner's notebook: the batch flags code that names it, grader/parse.py FLAGS)
SHIM = "posenc_nbgrader"  # kernels/posenc-course/posenc_nbgrader.py: grader.nbgrader_cell.grade, on the kernel's path
TEST_CELL = """# nbgrader's test of {exercise}: {points:g} points. Where the course's autograder is installed, it
# grades this notebook for {exercise} in its sandbox; elsewhere the self-check stands in.
try:
    from posenc_nbgrader import grade
except ImportError:
    grade = None
grade("{assignment}", "{exercise}") if grade else check("{exercise}", {exercise})"""


def config(timeout=BATCH_TIMEOUT_SECONDS):
    """nbgrader_config.py: CONFIG, then nbgrader's limit on one test cell, which grades the whole assignment once
    within `timeout` seconds (the others reuse it): that limit plus WAITS.nbgrader_cell_margin_seconds, a whole
    number of seconds (nbgrader's trait is an integer), so the grading limit is reached first."""
    # cell = ⌈timeout + margin⌉
    cell = math.ceil(timeout + WAITS.nbgrader_cell_margin_seconds)
    return CONFIG + (f"# a test cell grades the whole assignment once (the others reuse it), within {timeout:g} s "
                     f"(`python -m grader nbgrader --timeout`)\nc.Execute.timeout = {cell}\n")


def shim(timeout=BATCH_TIMEOUT_SECONDS):
    """kernels/posenc-course/posenc_nbgrader.py: grader.nbgrader_cell.grade with the export's grading limit."""
    return ('"""The test cells\' entry point (grader/nbgrader_cell.py), on this kernel\'s path."""\n'
            "from functools import partial\n\nfrom grader.nbgrader_cell import grade\n\n"
            f"grade = partial(grade, timeout={float(timeout)!r})\n")


def assignment_name(chapter):
    """The chapter of course/01_sinusoidal/ (a grader.course.Chapter) -> ch01_sinusoidal"""
    return f"ch{chapter.stem}"


def _hints_outside(source):
    """Move the comment block that opens a solution region (its `# Hint`) above the BEGIN marker."""
    lines, out, i = source.splitlines(), [], 0
    while i < len(lines):
        out.append(lines[i])
        if BEGIN.match(lines[i]):
            j = i + 1
            if j < len(lines) and lines[j].strip().lower().startswith("# hint"):
                while j < len(lines) and lines[j].strip().startswith("#") and not END.match(lines[j]):
                    j += 1
                out[-1:] = lines[i + 1:j] + [lines[i]]  # hint, then the marker
                i = j
                continue
        i += 1
    return "\n".join(out)


def _defined(source):
    """Top-level function and class names a cell defines, in order."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def _meta(grade_id, solution=False, locked=False, points=None):
    meta = {"grade": points is not None, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta


def test_cell(prefix, exercise, assignment):
    """The autograded test of one exercise: worth its points on the CPU checks."""
    points = round(assignment.exercise_points(exercise), 6)
    cell = nbformat.v4.new_code_cell(TEST_CELL.format(exercise=exercise, points=points,
                                                      assignment=assignment.nbgrader_name))
    cell.metadata["nbgrader"] = _meta(f"{prefix}-{exercise}-points", locked=True, points=points)
    cell.metadata["tags"] = ["selfcheck"]  # the grader reads past it, like a self-check (no flag, nothing run)
    cell.id = cell.metadata["nbgrader"]["grade_id"]  # stable, as the chapter's own cells' ids
    return cell


def test_grade_ids(assignment):
    """{grade_id of a test cell: exercise} for the assignment's notebooks."""
    from .checks import chapter_of

    chapters = chapter_of()
    return {f"{chapters[ex]}-{ex}-points": ex for ex in assignment.exercises}


def notebook(chapter, assignment=None):
    """The nbgrader source notebook (an nbformat NotebookNode) of one chapter (a grader.course.Chapter), with a test
    cell per exercise of `assignment` (a grader.assignment.Assignment; default: the chapter's own)."""
    import jupytext

    from .assignment import get

    prefix = chapter.key
    assignment = assignment or get(prefix)
    tested = [ex for ex in assignment.exercises if f"{prefix}-{ex}-points" in test_grade_ids(assignment)
              and assignment.exercise_points(ex) > 0]
    nb = jupytext.read(chapter.path("source"))
    ids = render.cell_ids(nb.cells, chapter.relative("source"))
    cells, used = [], set()

    def unique(grade_id):
        n, candidate = 1, grade_id
        while candidate in used:
            n += 1
            candidate = f"{grade_id}-{n}"
        used.add(candidate)
        return candidate

    for index, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        if "solution-only" in tags:
            continue
        copy = nbformat.from_dict(dict(cell))
        copy.id = ids[index]
        if cell.cell_type == "code":
            copy.source = render._without_export_line(cell.source)
            if any(BEGIN.match(line) for line in copy.source.splitlines()):
                copy.source = _hints_outside(copy.source)
                names = _defined(copy.source) or [f"cell{index}"]
                copy.metadata["nbgrader"] = _meta(unique(f"{prefix}-{names[0]}"), solution=True)
            elif "selfcheck" in tags:
                found = SELFCHECK.search(copy.source)
                name = found.group(1) if found else f"cell{index}"
                copy.metadata["nbgrader"] = _meta(unique(f"{prefix}-{name}-selfcheck"), locked=True)
                if name in tested:
                    cells += [copy, test_cell(prefix, name, assignment)]
                    tested.remove(name)
                    continue
        cells.append(copy)
    cells += [test_cell(prefix, ex, assignment) for ex in tested]  # exercises without a self-check cell
    out = nbformat.v4.new_notebook()
    out.cells = cells
    out.metadata = nbformat.from_dict(dict(nb.metadata))
    return render._clean(out)


def kernel_spec(folder):
    """The notebooks' kernel for nbgrader: this Python, with the repository and the test cells' module (in
    `folder`, beside kernel.json) importable."""
    return {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "posenc-course (nbgrader)", "language": "python",
            "env": {"PYTHONPATH": f"{folder}{os.pathsep}{render.ROOT}"}}


def export(out, assignment=None, timeout=BATCH_TIMEOUT_SECONDS):
    """Write the course under `out` (every chapter's assignment, or `assignment`), its test cells grading one
    notebook within `timeout` seconds; return the files written (relative to `out`)."""
    from .assignment import default_assignments

    out = Path(out)
    selfcheck = render.ROOT / "posenc_selfcheck"
    written = []
    for a in [assignment] if assignment else default_assignments().values():
        folder = out / "source" / a.nbgrader_name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for chapter in filter(None, map(course.chapter, a.chapters)):
            nbformat.write(notebook(chapter, a), folder / f"{chapter.stem}.ipynb")
        shutil.copytree(selfcheck, folder / "posenc_selfcheck", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        written += [p for p in folder.rglob("*") if p.is_file()]
    kernel = out / "kernels" / KERNEL / "kernel.json"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_text(json.dumps(kernel_spec(kernel.parent.resolve()), indent=1) + "\n")
    entry = kernel.parent / f"{SHIM}.py"
    entry.write_text(shim(timeout))
    written += [kernel, entry]
    path = out / "nbgrader_config.py"
    if not path.exists() or path.read_text().startswith(CONFIG.splitlines()[0]):  # never the instructor's own
        path.write_text(config(timeout))
        written.append(path)
    return sorted(str(p.relative_to(out)) for p in written)


def main(out, assignment=None, course_file=None, timeout=BATCH_TIMEOUT_SECONDS):
    files = export(out, assignment, timeout)
    notebooks = len([f for f in files if f.endswith(".ipynb")])
    first = assignment.nbgrader_name if assignment else assignment_name(course.chapters()[1])
    print(f"wrote {out}: an nbgrader course source, {notebooks} notebooks"
          f"{f' (assignment {assignment.nbgrader_name})' if assignment else ' (one assignment per chapter)'}.\n"
          f"Release it with:  cd {out} && nbgrader generate_assignment {first}")
    return 0


# ---- path (2): the batch's grades into nbgrader's gradebook ------------------------------------------------------
def _inject_grades_class():
    from nbformat.v4 import new_output
    from nbgrader.preprocessors import NbGraderPreprocessor

    class InjectGrades(NbGraderPreprocessor):
        """In place of nbgrader's Execute: each test cell's output is the batch's points for its exercise (and
        the feedback of its failed checks), so nbgrader's SaveAutoGrades records them. Nothing is executed."""

        scores = {}  # {nbgrader student id: {exercise: {"score", "max", "feedback"}}}
        grade_ids = {}  # {test cell grade_id: exercise}

        def preprocess(self, nb, resources):
            self.student = resources["nbgrader"]["student"]
            return super().preprocess(nb, resources)

        def preprocess_cell(self, cell, resources, index):
            meta = cell.metadata.get("nbgrader", {})
            exercise = self.grade_ids.get(meta.get("grade_id"))
            if cell.cell_type == "code" and meta.get("grade") and exercise:
                result = self.scores[self.student][exercise]
                # nothing earned: on stderr, as grader.nbgrader_cell.grade says it, so `nbgrader validate` shows why
                # (a number alone makes it say "Partial credit; passed some but not all of the tests")
                stream = "stderr" if result["score"] <= 0 < result["max"] else "stdout"
                text = result["feedback"] or (f"{exercise}: 0/{result['max']:g}" if stream == "stderr" else "")
                outputs = [new_output("stream", name=stream, text=text + "\n") for _ in [1] if text]
                score = min(round(result["score"], 6), float(meta.get("points", 0)))
                outputs.append(new_output("execute_result", data={"text/plain": repr(score)}, execution_count=index))
                cell.outputs = outputs
            return cell, resources

    return InjectGrades


def _recorded_times_class(times):
    """nbgrader's course folder, with each submission's time taken from `times` ({real path of a submitted folder:
    naive UTC datetime}: the batch's record, the collected files' time on this machine) and never from the
    timestamp.txt that the student's side wrote (`nbgrader submit`): a forged one changes nothing in gradebook.db."""
    from nbgrader.coursedir import CourseDirectory

    class RecordedTimes(CourseDirectory):
        def get_existing_timestamp(self, dest_path):
            return times.get(os.path.realpath(dest_path))

    return RecordedTimes


def _utc(entry):
    """An entry's recorded time as nbgrader stores times (naive UTC), or None."""
    from .batch.discovery import parse_time

    return parse_time(entry.submitted).replace(tzinfo=None) if entry.submitted else None


def _record_directly(coursedir, assignment, student, scores, timestamp, note):
    """The batch's points for one student whose notebook nbgrader's conversion refused, written into gradebook.db
    with nbgrader's Gradebook API (as nbgrader itself scores a missing notebook), `note` on each comment."""
    from nbgrader.api import Gradebook

    grade_ids = test_grade_ids(assignment)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        submission = gb.update_or_create_submission(assignment.nbgrader_name, student, timestamp=timestamp)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                exercise = grade_ids.get(grade.name)
                points = scores[exercise]["score"] if exercise in scores else 0.0
                grade.auto_score = min(round(points, 6), float(grade.max_score))
                grade.needs_manual_grade = False
            for comment in notebook.comments:
                comment.auto_comment = note
        gb.db.commit()


def _why(result):
    """The exception nbgrader's failed autograde ended with ("SchemaTooOldError: Outdated schema version: 0"), from
    its traceback or log; its last line when none is found."""
    lines = [line.strip() for line in (result.get("error") or result.get("log") or "").splitlines() if line.strip()]
    raised = [re.sub(r"^(\w+\.)+", "", line) for line in lines if EXCEPTION.match(line)]  # without its module
    return (raised or lines or ["no message"])[-1]


def save_to_gradebook(submitted, assignment, out, entries, language="en"):
    """Write a batch's points (`out`/results) into the gradebook.db of the nbgrader course holding `submitted`,
    through nbgrader's own autograde (sanitising, saving grades, late penalties), each submission at the time the
    batch recorded (never the student's timestamp.txt). Needs the assignment released with `nbgrader
    generate_assignment` (so nbgrader knows its notebooks and test cells). One student's notebook that nbgrader
    cannot convert costs only that student: their points are written with nbgrader's Gradebook API, with a comment
    saying why, and every other student is recorded as usual. {student: "" (recorded by nbgrader's autograde) or
    why nbgrader's autograde failed}."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, LimitOutput, SaveAutoGrades
    from traitlets.config import Config

    from .batch.discovery import DiscoveryError
    from .escape import one_line
    from .files import read_json
    from .nbgrader_cell import per_exercise, unconverted_note

    submitted = Path(submitted)
    course = submitted.parent
    config_file = course / "nbgrader_config.py"
    if submitted.name != "submitted" or not config_file.is_file():
        raise DiscoveryError(messages.msg("--nbgrader-gradebook: {folder} is not the submitted/ folder of an nbgrader "
                                          "course (nbgrader_config.py beside it)", folder=messages.verbatim(submitted)))
    config = Config()
    config.CourseDirectory.root = str(course)
    exec(compile(config_file.read_text(), str(config_file), "exec"),  # the instructor's own file, as nbgrader runs it
         {"get_config": lambda: config, "__file__": str(config_file)})
    inject = _inject_grades_class()
    inject.grade_ids = test_grade_ids(assignment)
    inject.scores, times = {}, {}
    for student, entry in entries.items():
        record = read_json(Path(out) / "results" / f"{student}.json")
        if record and entry.path is not None and entry.folder and not record.get("refused"):
            inject.scores[entry.folder] = per_exercise(assignment, record["checks"], language)
            times[os.path.realpath(entry.path)] = _utc(entry)
    config.Autograde.autograde_preprocessors = [inject, LimitOutput, SaveAutoGrades, AssignLatePenalties,
                                                CheckCellMetadata]
    coursedir = _recorded_times_class(times)(config=config)
    api = NbGraderAPI(coursedir=coursedir, config=config)
    done = {}
    for student in sorted(inject.scores):
        with warnings.catch_warnings():
            # nbgrader 0.9's gradebook adds a submission through a relationship SQLAlchemy 2 warns about (three
            # SAWarnings per student, "... not in session, add operation along ... will not proceed"); the grades
            # are recorded all the same (tests/test_nbgrader_grading.py reads them back), and nobody can act on it
            warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session")
            result = api.autograde(assignment.nbgrader_name, student)
        done[student] = ""
        if not result["success"]:
            done[student] = one_line(_why(result).replace(str(course), "COURSE"), REPORT.title_chars)
            folder = coursedir.format_path(coursedir.submitted_directory, student, assignment.nbgrader_name)
            _record_directly(coursedir, assignment, student, inject.scores[student],
                             times.get(os.path.realpath(folder)), unconverted_note(language))
    return done
