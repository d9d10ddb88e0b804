"""What every exercise must have, checked by `python -m grader build --check` (docs/authoring.md):

- checks declared in grader/checks/chNN.py (the chapter's registry entry);
- a self-check cell in its chapter source (`check("<name>", ...)` in a cell tagged selfcheck);
- an independent implementation in examples/complete/ (which the tests grade to full marks);
- every known mistake registered for it (posenc_ref/mistakes/) named by at least one of its checks.

An exercise is a function or class of a chapter source whose body holds a `### BEGIN SOLUTION` region.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELFCHECK = re.compile(r"""^check\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""", re.M)


def chapter_exercises(path):
    """Names defined with a solution region in their body, in a chapter source."""
    text = Path(path).read_text()
    tree = ast.parse(text)
    lines = text.splitlines()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.col_offset == 0:
            body = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if "### BEGIN SOLUTION" in body:
                out.append(node.name)
    return out


def _selfchecks(path):
    import jupytext

    cells = jupytext.read(path).cells
    return {name for c in cells if c.cell_type == "code" and "selfcheck" in c.metadata.get("tags", [])
            for name in SELFCHECK.findall(c.source)}


def _defined(folder):
    names = set()
    for path in sorted(Path(folder).glob("*.py")):
        names |= {n.name for n in ast.parse(path.read_text()).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names


def problems(chapters=None):
    """[(exercise, what is missing)] over every chapter source."""
    from posenc_ref.mistakes import MISTAKES

    from .checks import CHAPTERS
    from .leaks import chapter_sources

    out = []
    example = _defined(ROOT / "examples" / "complete")
    sources = chapters or chapter_sources()
    taught = {name for source in sources for name in chapter_exercises(source)}
    if chapters is None:
        out += [(c.exercise, f"checked in grader/checks/{chapter}.py but taught in no chapter source")
                for chapter, checks in CHAPTERS.items() for c in checks if c.exercise not in taught]
    for source in sources:
        registry = f"ch{source.name[:2]}"
        checks = CHAPTERS.get(registry, ())
        selfchecks = _selfchecks(source)
        for exercise in chapter_exercises(source):
            mine = [c for c in checks if c.exercise == exercise]
            if not mine:
                out.append((exercise, f"no checks in grader/checks/{registry}.py (or the chapter is not registered)"))
            if not any(c.unseen for c in mine):
                out.append((exercise, "no main check (spec.unseen_like, inputs drawn per submission): the grader "
                                      "counts its other checks only once a main check is answered"))
            out += [(exercise, f"main check {c.key} must draw its inputs per submission and stay out of the "
                               "self-check data (spec.unseen_like)")
                    for c in mine if c.main and (c.public or not c.unseen)]
            if exercise not in selfchecks:
                out.append((exercise, f"no self-check cell in chapters/{source.name}"))
            if exercise not in example:
                out.append((exercise, "no implementation in examples/complete/"))
            named = {m for c in mine for m in c.mistakes}
            for name, mistake in MISTAKES.items():
                if mistake.exercise == exercise and name not in named:
                    out.append((exercise, f"the known mistake {name} is named by none of its checks"))
    return out
