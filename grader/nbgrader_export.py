"""python -m grader nbgrader OUT: the course as an nbgrader course source, one assignment per chapter.

    OUT/nbgrader_config.py
    OUT/source/chNN_name/NN_name.ipynb        the chapter with its solutions, in nbgrader's cell metadata
    OUT/source/chNN_name/posenc_selfcheck/    the public self-check package (what the notebook imports)

From the chapter sources (chapters/NN_name.py), like the build:
  - a code cell with `### BEGIN SOLUTION` ... `### END SOLUTION` regions is an nbgrader solution cell.
    The hint that opens a region moves above its BEGIN marker, so `nbgrader generate_assignment` keeps the
    hint and replaces the rest by the course's stub;
  - a self-check cell (tag `selfcheck`) is read-only (nbgrader's locked cell);
  - grade_ids are stable: `chNN-<exercise>` for a solution cell, `chNN-<exercise>-selfcheck` for its check;
  - cells tagged `solution-only` are left out (nbgrader cannot remove a cell from the release).
Grading stays with this grader: `python -m grader batch` reads nbgrader's `submitted/<student>/<assignment>/`
(grader/batch/discovery.py finds the submissions there).
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import nbformat

from . import build
from .leaks import BEGIN

COURSE_ID = "posenc-course"
SELFCHECK = re.compile(r"""\bcheck\(\s*["'](\w+)["']""")

CONFIG = f'''# nbgrader's configuration for the course source written by `python -m grader nbgrader`.
# Release to students:   nbgrader generate_assignment ch01_sinusoidal   (one assignment per chapter)
# Grade what they hand in (submitted/<student>/<assignment>/):   python -m grader batch submitted/ --out grading/
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = "{COURSE_ID}"
# where a solution was, students find the course's own stub (the self-checks report "not implemented yet")
c.ClearSolutions.code_stub = {{"python": {build.STUB!r}}}
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
'''


def assignment_name(chapter):
    """chapters/01_sinusoidal.py -> ch01_sinusoidal"""
    return f"ch{chapter.stem}"


def _hints_outside(source):
    """Move the comment block that opens a solution region (its `# Hint`) above the BEGIN marker."""
    lines, out, i = source.splitlines(), [], 0
    while i < len(lines):
        out.append(lines[i])
        if BEGIN.match(lines[i]):
            j = i + 1
            if j < len(lines) and lines[j].strip().lower().startswith("# hint"):
                while j < len(lines) and lines[j].strip().startswith("#") and not build.END.match(lines[j]):
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


def _meta(grade_id, solution=False, locked=False):
    return {"grade": False, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}


def notebook(chapter):
    """The nbgrader source notebook of one chapter (an nbformat NotebookNode)."""
    import jupytext

    prefix = f"ch{chapter.stem[:2]}"
    nb = jupytext.read(chapter)
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
        if cell.cell_type == "code":
            copy.source = build._without_export_line(cell.source)
            if any(BEGIN.match(line) for line in copy.source.splitlines()):
                copy.source = _hints_outside(copy.source)
                names = _defined(copy.source) or [f"cell{index}"]
                copy.metadata["nbgrader"] = _meta(unique(f"{prefix}-{names[0]}"), solution=True)
            elif "selfcheck" in tags:
                found = SELFCHECK.search(copy.source)
                name = found.group(1) if found else f"cell{index}"
                copy.metadata["nbgrader"] = _meta(unique(f"{prefix}-{name}-selfcheck"), locked=True)
        cells.append(copy)
    out = nbformat.v4.new_notebook()
    out.cells = cells
    out.metadata = nbformat.from_dict(dict(nb.metadata))
    return build._clean(out)


def export(out):
    """Write the course source under `out`; return the files written (relative to `out`)."""
    out = Path(out)
    selfcheck = build.ROOT / "posenc_selfcheck"
    written = []
    for chapter in build.chapter_sources():
        folder = out / "source" / assignment_name(chapter)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(notebook(chapter), folder / f"{chapter.stem}.ipynb")
        shutil.copytree(selfcheck, folder / "posenc_selfcheck", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        written += [p for p in folder.rglob("*") if p.is_file()]
    config = out / "nbgrader_config.py"
    if not config.exists() or config.read_text().startswith(CONFIG.splitlines()[0]):  # never the instructor's own
        config.write_text(CONFIG)
        written.append(config)
    return sorted(str(p.relative_to(out)) for p in written)


def main(out):
    files = export(out)
    chapters = len([f for f in files if f.endswith(".ipynb")])
    print(f"wrote {out}: an nbgrader course source, {chapters} assignments (one per chapter).\n"
          f"Release one with:  cd {out} && nbgrader generate_assignment {assignment_name(build.chapter_sources()[1])}")
    return 0
