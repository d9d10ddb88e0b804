"""One chapter source rendered in memory: its student notebook, its solution notebook, its reference module.

`course/NN_name/chapter.py` (jupytext py:percent) is the only hand-edited source of a chapter's text. From it:
  student notebook   each `### BEGIN SOLUTION` ... `### END SOLUTION` region becomes its hint comments plus
                     `raise NotImplementedError`; cells tagged solution-only are left out
  solution notebook  the complete notebook, markers removed
  reference module   the cells marked `#| export`, solutions included, each part under a comment naming its cell
Notebooks carry no outputs or execution counts, and in their metadata where they came from and a fingerprint of
their cells (`posenc.cells_sha256`: grader/build.py keeps a notebook whose cells no longer match it).

A cell's id is its own, never its position: the name the source gives it (`# %% name="intro"`), else a short
hash of its kind and source, with its ordinal among cells of equal source (`py-1a2b3c4d`, `py-1a2b3c4d-2`).
Inserting a cell changes no other cell's id, so only its own lines change in every generated notebook.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import nbformat

from . import course
from .files import cells_fingerprint
from .leaks import BEGIN, END

ROOT = Path(__file__).resolve().parent.parent
EXPORT = "#| export"
STUB = 'raise NotImplementedError("exercise not finished: replace this line with your code")'
GENERATED = '"""Generated from {src} by `python -m grader build`: edit the chapter."""\n'
PART = "# from {src}#{cell}"  # above each exported part: where to edit it (as nbdev's `# %%` lines)
MARK = "posenc"  # the notebook metadata key the build writes: {"generated_from": ..., "cells_sha256": ...}
NAME = "name"  # the cell metadata key that names a cell in the chapter source: `# %% name="intro"`
CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # nbformat 4.5's rule for a cell id
KERNEL = {"display_name": "Python 3 (posenc-course)", "language": "python", "name": "posenc-course"}
PLACEHOLDER = re.compile(r"\{\{([^{}:]+)(?::([^{}]+))?\}\}")


def cell_ids(cells, where):
    """[id] of a chapter's cells, in order: the name each was given, else `md-`/`py-` + 8 hex digits of
    sha256(kind, source), `-2`, `-3` ... for a repeated source. Raises ValueError on a bad or repeated name."""
    repeats, out = Counter(), []
    for cell in cells:
        name = cell.metadata.get(NAME)
        if name is None:
            digest = hashlib.sha256(json.dumps([cell.cell_type, cell.source]).encode()).hexdigest()[:8]
            repeats[digest] += 1
            kind = "md" if cell.cell_type == "markdown" else "py"
            name = f"{kind}-{digest}" + (f"-{repeats[digest]}" if repeats[digest] > 1 else "")
        if not isinstance(name, str) or not CELL_ID.match(name):
            raise ValueError(f"{where}: the cell name {name!r} is not a notebook cell id (letters, digits, - and _)")
        out.append(name)
    twice = sorted(n for n, count in Counter(out).items() if count > 1)
    if twice:
        raise ValueError(f"{where}: cells named twice: {twice}")
    return out


def _regions(source, student):
    """Rewrite solution regions: keep them (markers dropped) or replace them by hints + a stub.

    A region may open with a block of comment lines whose first says `# Hint`: the student
    notebook keeps that block above the stub."""
    out, region, indent = [], None, ""
    for line in source.splitlines():
        begin = BEGIN.match(line)
        if begin:
            if region is not None:
                raise ValueError("nested ### BEGIN SOLUTION")
            region, indent = [], begin.group(1)
            continue
        if END.match(line):
            if region is None:
                raise ValueError("### END SOLUTION without BEGIN")
            if student:
                hints = []
                if region and region[0].strip().lower().startswith("# hint"):
                    for kept in region:
                        if not kept.strip().startswith("#"):
                            break
                        hints.append(kept)
                out.extend(hints + [indent + STUB])
            else:
                out.extend(region)
            region = None
            continue
        (out if region is None else region).append(line)
    if region is not None:
        raise ValueError("### BEGIN SOLUTION without END")
    return "\n".join(out)


def _clean(nb):
    """No outputs, no execution counts, no jupytext bookkeeping or cell names (the name is the id)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("lines_to_next_cell", "lines_to_end_of_cell_marker", NAME):
            cell.metadata.pop(key, None)
    nb.metadata.pop("jupytext", None)
    # the course's own kernel (scripts/setup.sh registers it inside the course's environment)
    nb.metadata["kernelspec"] = dict(KERNEL)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _without_export_line(source):
    lines = source.splitlines()
    if lines and lines[0].strip() == EXPORT:
        lines = lines[1:]
    return "\n".join(lines)


def results_of(path):
    """The measured results a chapter's text quotes (docs/chapterN/results.json), or None."""
    results = ROOT / "docs" / f"chapter{int(course.of_file(path).stem[:2])}" / "results.json"
    return json.loads(results.read_text()) if results.exists() else None


def fill(text, results, where="text"):
    """Replace each {{path.to.value}} or {{path.to.value:format}} (default .2f) by the value in `results`:
    the numbers the text quotes come from the measurement, never typed by hand. A negative number gets a
    typographic minus."""

    def value(match):
        node = results
        for key in match.group(1).strip().split("."):
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise ValueError(f"{where}: {{{{{match.group(1)}}}}} is not in the results") from None
        return format(node, match.group(2) or ".2f").replace("-", "\u2212")

    if results is None and PLACEHOLDER.search(text):
        raise ValueError(f"{where}: quotes results, but there is no results.json for it")
    return PLACEHOLDER.sub(value, text)


def reference_module_name(path):
    number, name = course.of_file(path).stem.split("_", 1)
    return f"ch{number}_{name}"


def render(path):
    """(student notebook text, solution notebook text, reference module text) for one chapter."""
    import jupytext

    src = course.of_file(path).relative("source")  # course/NN_name/chapter.py: what the generated files name
    nb = jupytext.read(path)
    ids = cell_ids(nb.cells, src)  # from the source as written, before any number is filled in
    results = results_of(path)
    exported = []
    student, solution = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    for cell, cell_id in zip(nb.cells, ids):
        if cell.cell_type == "markdown":
            cell.source = fill(cell.source, results, src)
        for target, is_student in ((student, True), (solution, False)):
            copy = nbformat.from_dict(dict(cell))
            copy.id = cell_id
            if cell.cell_type == "code":
                copy.source = _regions(_without_export_line(cell.source), is_student)
                if is_student and "solution-only" in cell.metadata.get("tags", []):
                    continue
            target.cells.append(copy)
        if cell.cell_type == "code" and cell.source.splitlines()[:1] == [EXPORT]:
            part = _regions(_without_export_line(cell.source), student=False)
            exported.append(PART.format(src=src, cell=cell_id) + "\n" + part)
    for target in (student, solution):
        target.metadata = nbformat.from_dict(dict(nb.metadata))
        _clean(target)
        target.metadata[MARK] = {"generated_from": src,
                                 "cells_sha256": cells_fingerprint(target.cells)}
    module = GENERATED.format(src=src) + "\n" + "\n\n\n".join(exported).strip() + "\n"
    return nbformat.writes(student) + "\n", nbformat.writes(solution) + "\n", module
