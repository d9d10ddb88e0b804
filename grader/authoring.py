"""What every exercise must have, checked by `python -m grader build --check` (docs/authoring.md):

- checks declared in grader/checks/chNN.py (the chapter's registry entry), a main check among them;
- its line in that module's `CONVENTIONS` (docs/conventions.md's table is generated from it);
- a self-check cell in its chapter source (`check("<name>", ...)` in a cell tagged selfcheck);
- a hint ladder, `HINTS[name]` in posenc_selfcheck/hints.py: three levels or more, the last a key line
  (`"key line: `...`"`) that is a statement of its solution in the chapter (tests/test_hints.py checks more:
  that it runs where a learner pastes it);
- an independent implementation in examples/complete/ (which the tests grade to full marks), and a
  practitioner-style one in tests/submissions/practitioner/ (graded to full marks too);
- every known mistake registered for it (posenc_ref/mistakes/) named by at least one of its checks, with a hint
  ladder of its own (`MISTAKE_HINTS[mistake]`: tests/test_hints.py proves its key line fixes that mistake).

And nothing is declared for an exercise no chapter teaches: no checks, no conventions line, no hint ladder, no
mistake hint (`MISTAKE_HINTS`) for a mistake that is not registered. All of it is read from the files, without
running the reference or torch, so `python -m grader build --check` stays fast.

An exercise is a function or class of a chapter source whose body holds a `### BEGIN SOLUTION` region.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELFCHECK = re.compile(r"""^check\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""", re.M)
KEY = re.compile(r"`([^`]+)`")


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


def _code(line):
    """A line of code without its comment, whitespace collapsed (how a key line is found in a solution)."""
    return " ".join(line.split("  #")[0].split()) if not line.strip().startswith("#") else ""


def _solution_code(path, name):
    """The whitespace-collapsed code of `name`'s definition in a chapter source."""
    text = Path(path).read_text()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return " ".join(_code(line) for line in text.splitlines()[node.lineno - 1:node.end_lineno])
    return ""


def _ladder_problems(exercise, levels, source):
    """What is wrong with an exercise's hint ladder (HINTS[exercise]), if anything."""
    where = f"HINTS[{exercise!r}] in posenc_selfcheck/hints.py"
    if levels is None:
        return [f"no hint ladder: {where}, three levels or more, from the idea to its key line"]
    if len(levels) < 3:
        return [f"only {len(levels)} hint levels in {where}: three or more"]
    if not levels[-1].startswith("key line: `") or any("key line" in level for level in levels[:-1]):
        return [f"{where} must end, and only end, with its key line (\"key line: `...`\")"]
    key = _code(KEY.findall(levels[-1])[-1]) if KEY.findall(levels[-1]) else ""
    if not key or key not in _solution_code(source, exercise):
        return [f"the key line `{key}` of {where} is not a line of its solution in chapters/{source.name}"]
    return []


def problems(chapters=None):
    """[(exercise, what is missing)] over every chapter source."""
    from posenc_ref.mistakes import MISTAKES
    from posenc_selfcheck.hints import HINTS, MISTAKE_HINTS

    from .checks import CHAPTERS, CONVENTIONS
    from .leaks import chapter_sources

    out = []
    example = _defined(ROOT / "examples" / "complete")
    practitioner = _defined(ROOT / "tests" / "submissions" / "practitioner")
    sources = chapters or chapter_sources()
    taught = {name for source in sources for name in chapter_exercises(source)}
    if chapters is None:
        out += [(c.exercise, f"checked in grader/checks/{chapter}.py but taught in no chapter source")
                for chapter, checks in CHAPTERS.items() for c in checks if c.exercise not in taught]
        out += [(name, f"a conventions line in grader/checks/{chapter}.py but taught in no chapter source")
                for chapter, lines in CONVENTIONS.items() for name in lines if name not in taught]
        out += [(name, "a hint ladder in posenc_selfcheck/hints.py but taught in no chapter source")
                for name in HINTS if name not in taught]
        out += [(MISTAKES[name].exercise if name in MISTAKES else name,
                 f"MISTAKE_HINTS[{name!r}] in posenc_selfcheck/hints.py names no registered mistake")
                for name in MISTAKE_HINTS if name not in MISTAKES]
    for source in sources:
        registry = f"ch{source.name[:2]}"
        checks = CHAPTERS.get(registry, ())
        conventions = CONVENTIONS.get(registry, {})
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
            if exercise not in practitioner:
                out.append((exercise, "no practitioner-style implementation in tests/submissions/practitioner/ "
                                      "(written as popular libraries write it; the tests grade it to full marks)"))
            if exercise not in conventions:
                out.append((exercise, f"no conventions line: CONVENTIONS[{exercise!r}] in grader/checks/{registry}.py "
                                      "(what it computes, shapes: docs/conventions.md's table is generated from it)"))
            out += [(exercise, what) for what in _ladder_problems(exercise, HINTS.get(exercise), source)]
            named = {m for c in mine for m in c.mistakes}
            for name, mistake in MISTAKES.items():
                if mistake.exercise == exercise and name not in named:
                    out.append((exercise, f"the known mistake {name} is named by none of its checks"))
                if mistake.exercise == exercise and name not in MISTAKE_HINTS:
                    out.append((exercise, f"the known mistake {name} has no ladder of its own: MISTAKE_HINTS[{name!r}]"
                                          " in posenc_selfcheck/hints.py (the idea, where to look, its key line)"))
    return out
