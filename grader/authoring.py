"""What every exercise must have, checked by `python -m grader build --check` (docs/authoring.md). Its
declaration, course/NN_name/exercises.py, holds:

- its checks (`CHECKS`), a main check among them;
- its line in `CONVENTIONS` (docs/conventions.md's table is generated from it);
- its hint ladder, `HINTS[name]`: three levels or more, the last, and only the last, a key line
  (`"key line: `...`"`) that is one run of statements of its solution in the chapter (tests/test_hints.py checks
  more: that it runs where a learner pastes it);
- its known mistakes, `MISTAKES[mistake]`, each named by at least one of its checks, each with a ladder of its
  own: the idea (no code), where to look, its key line, a run of statements of the solution, as are the other
  statements it rewrites (`also`), and the mistaken forms parse (tests/test_hints.py proves that the solution
  with them rewritten is diagnosed as that very mistake).

Beside it: a self-check cell in its chapter source (`check("<name>", ...)` in a cell tagged selfcheck). Nothing
else: the chapter, its declaration and its catalog are the three files an exercise needs. An independent
implementation in examples/complete/ and a practitioner-style one in tests/submissions/practitioner/ are welcome
(the tests grade each one there to full marks), never required.

And nothing is declared for an exercise no chapter teaches: no checks, no conventions line, no hint ladder, no
mistake. All of it is read from the files, without running the reference or torch, so
`python -m grader build --check` stays fast.

An exercise is a function or class of a chapter source whose body holds a `### BEGIN SOLUTION` region.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from . import course
from .settings import AUTHORING
from .statements import KEY, statement

SELFCHECK = re.compile(r"""^check\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""", re.M)
# a mask made of ones, triangular: it must say dtype=torch.bool, or SDPA adds it to the scores (masks nothing)
FLOAT_MASK = re.compile(r"ones(_like)?\((?:(?!dtype=torch\.bool)[^()]|\([^()]*\))*\)\s*\.\s*(tril|triu)")
# "−" (U+2212) reads well in a formula and is a syntax error in a method call someone copies
TYPOGRAPHIC_MINUS = re.compile(r"\.\w+\([^)]*\u2212")


def definitions(path):
    """{name: (its source, its AST)} of the functions and classes a chapter source defines at its top, in order."""
    text = Path(path).read_text()
    lines = text.splitlines()
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            source = "\n".join(lines[node.lineno - 1:node.end_lineno])
            out[node.name] = (source, ast.parse(source))
    return out


def chapter_exercises(path, defined=None):
    """Names defined with a solution region in their body, in a chapter source (`defined`: its definitions(),
    when already read)."""
    return [name for name, (source, _) in (defined or definitions(path)).items() if "### BEGIN SOLUTION" in source]


def _selfchecks(path):
    import jupytext

    cells = jupytext.read(path).cells
    return {name for c in cells if c.cell_type == "code" and "selfcheck" in c.metadata.get("tags", [])
            for name in SELFCHECK.findall(c.source)}


def _one_run(tree, code):
    """(the run of statements of `tree` that `code` is, the nodes around it), or None unless there is exactly one."""
    try:
        return statement(tree, code)
    except (ValueError, SyntaxError):
        return None


def _stub_hint(source):
    """The `# Hint` blocks of a solution (what the student notebook keeps of it), as one text."""
    out, inside = [], False
    for line in source.splitlines():
        text = line.strip()
        inside = text.startswith("# Hint") or (inside and text.startswith("#"))
        if inside:
            out.append(text.lstrip("#").strip())
    return " ".join(out)


def _context_problems(where, levels, source, key, chain):
    """A key line pasted into the stub must run: every `if` it sits under is written (in backticks) and every local
    name it uses is named by the stub's `# Hint` block or an earlier level."""
    said = " ".join(levels[:-1]) + " " + _stub_hint(source)
    spans = {ast.unparse(ast.parse(s)) for s in KEY.findall(said) if _parses(s)}
    out = [f"{where}: its key line holds only when `{ast.unparse(node.test)}`, which no earlier level writes"
           for node in chain if isinstance(node, ast.If) and ast.unparse(node.test) not in spans]
    function = next((n for n in reversed(chain) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return out
    arguments = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    local = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {n.name for n in ast.walk(function) if isinstance(n, ast.FunctionDef) and n is not function}
    used = {n.id for n in ast.walk(ast.parse(key)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out += [f"{where}: its key line uses `{word}`, which exists only in the solution: name it in the stub's hint "
            "or an earlier level" for word in sorted((used & local) - arguments) if not re.search(rf"\b{word}\b", said)]
    return out


def _parses(code):
    try:
        ast.parse(code)
        return True
    except SyntaxError:
        return False


def text_problems(where, text):
    """What is wrong with a text a learner reads (a hint level, a check's hint, a mistake's message): code that
    is wrong when copied. Every backticked span parses as Python; no mask is built as a float tensor; no method
    call holds a typographic minus."""
    out = [f"{where}: `{span}` is not Python" for span in KEY.findall(text)
           if not _parses("x" + span if span.startswith((".", "[")) else span)]
    if FLOAT_MASK.search(text):
        out.append(f"{where}: a mask built as a float tensor (write dtype=torch.bool)")
    if TYPOGRAPHIC_MINUS.search(text):
        out.append(f"{where}: a typographic minus (U+2212) inside a method call")
    return out


def _ladder_problems(exercise, levels, chapter, where, exactly=None):
    """What is wrong with a ladder of hints (an exercise's: AUTHORING.ladder_levels or more; a mistake's: `exactly`
    AUTHORING.mistake_levels), if anything; `chapter`: (its path, its definitions())."""
    least = exactly or AUTHORING.ladder_levels
    if levels is None:
        return [f"no hint ladder: {where}, {least} levels or more, from the idea to its key line"]
    if len(levels) < least or (exactly and len(levels) > exactly):
        return [f"{len(levels)} hint levels in {where}: " + (f"{exactly}" if exactly else f"{least} or more")]
    if not levels[-1].startswith("key line: `") or any("key line" in level for level in levels[:-1]):
        return [f"{where} must end, and only end, with its key line (\"key line: `...`\")"]
    if "`" in levels[0]:
        return [f"level 1 of {where} holds code: level 1 is the idea"]
    texts = [p for n, level in enumerate(levels, start=1) for p in text_problems(f"level {n} of {where}", level)]
    if texts:
        return texts
    key = KEY.findall(levels[-1])[-1] if KEY.findall(levels[-1]) else ""
    source, tree = chapter[1].get(exercise, (None, None))
    found = _one_run(tree, key) if key and tree is not None else None
    if found is None:
        return [f"the key line `{key}` of {where} is not one run of statements of its solution in "
                f"{course.of_file(chapter[0]).relative('source')}"]
    solution_lines = [line for line in (" ".join(raw.split("  #")[0].split()) for raw in source.splitlines())
                      if len(line) >= AUTHORING.solution_line_chars and not line.startswith(("#", '"', "'"))]
    if any(line in " ".join(levels[0].split()) for line in solution_lines):
        return [f"level 1 of {where} writes a line of the solution: level 1 is the idea"]
    return _context_problems(where, levels, source, key, found[1])


def _mistake_problems(name, mistake, chapter, declaration):
    """What is wrong with a known mistake's declaration (its ladder, its mistaken statements), if anything."""
    where = f"MISTAKES[{name!r}] in {declaration}"
    out = _ladder_problems(mistake.exercise, mistake.hints, chapter, where, exactly=AUTHORING.mistake_levels)
    out += text_problems(f"the message of {where}", mistake.message)
    if not _parses(mistake.wrong):
        out.append(f"the `wrong` form of {where} is not Python")
    _, tree = chapter[1].get(mistake.exercise, (None, None))
    for other, mistaken in mistake.also.items():
        if not _parses(mistaken) or tree is None or _one_run(tree, other) is None:
            out.append(f"`{other}` in `also` of {where} is not one statement of the solution (or a form is "
                       "not Python)")
    return out


def twin_problems(checks):
    """What keeps a scored check of `checks` (one exercise's) from resting on inputs no learner has seen: no twin,
    a twin without draws, or draws that can give fewer than Settings' twins.min_space inputs (a main check is its
    own twin)."""
    from .settings import TWINS
    from .spec import named_among
    from .twins import scored, twins_of
    from .unseen import space

    out = []
    for check in checks:
        if check.main:
            drawn = (check,)
        elif scored(check):
            drawn = twins_of(check, checks)
        else:
            continue
        if not drawn:
            out.append(f"{check.key} has no twin: declare twin= (params with draws) beside it (grader/twins.py)")
            continue
        out += [f"twin {t.key} draws nothing" for t in drawn if not t.unseen]
        out += [f"twin {t.key}: draw_among's options hold a named draw (declare them with draw_choice)" for t in drawn
                if named_among([t.params, t.property_params])]
        n = 1
        for t in drawn:
            n *= space([t.params, t.property_params])
        if n < TWINS.min_space:
            out.append(f"{check.key}: its {'draws' if check.main else 'twins'} give at most {n} inputs, fewer than "
                       f"{TWINS.min_space}: draw more of the arguments (sizes, values, dtype, batch)")
    return out


def _declaration(key):
    """'ch01' -> 'course/01_sinusoidal/exercises.py': where its checks, ladders and mistakes are declared."""
    chapter = course.chapter(key)
    return chapter.relative("exercises") if chapter else f"course/{key[2:]}_*/exercises.py (no such folder)"


def problems(chapters=None):
    """[(exercise, what is missing)] over every chapter source (`chapters`: some course/NN_name/chapter.py)."""
    from .checks import CHAPTERS, CONVENTIONS, HINTS, MISTAKES
    from .leaks import chapter_sources

    out = []
    sources = chapters or chapter_sources()
    defined = {source: definitions(source) for source in sources}  # each chapter read and parsed once
    taught = {name for source in sources for name in chapter_exercises(source, defined[source])}
    if chapters is None:
        out += [(c.exercise, f"checked in {_declaration(chapter)} but taught in no chapter source")
                for chapter, checks in CHAPTERS.items() for c in checks if c.exercise not in taught]
        out += [(name, f"a conventions line in {_declaration(chapter)} but taught in no chapter source")
                for chapter, lines in CONVENTIONS.items() for name in lines if name not in taught]
        out += [(name, f"a hint ladder in {_declaration(chapter)} but taught in no chapter source")
                for chapter, ladders in HINTS.items() for name in ladders if name not in taught]
        out += [(m.exercise, f"the known mistake {name} in {_declaration(chapter)} but its exercise is taught in "
                             "no chapter source")
                for chapter, table in MISTAKES.items() for name, m in table.items() if m.exercise not in taught]
    for source in sources:
        registry = course.of_file(source).key
        declaration = _declaration(registry)
        checks = CHAPTERS.get(registry, ())
        conventions = CONVENTIONS.get(registry, {})
        selfchecks = _selfchecks(source)
        for exercise in chapter_exercises(source, defined[source]):
            mine = [c for c in checks if c.exercise == exercise]
            out += [(exercise, what) for c in mine if c.hint for what in text_problems(f"the hint of {c.key}", c.hint)]
            if not mine:
                out.append((exercise, f"no checks in {declaration}"))
            if not any(c.unseen for c in mine):
                out.append((exercise, "no main check (spec.unseen_like, inputs drawn per submission): the grader "
                                      "counts its other checks only once a main check is answered"))
            out += [(exercise, f"main check {c.key} must draw its inputs per submission and stay out of the "
                               "self-check data (spec.unseen_like)")
                    for c in mine if c.main and (c.public or not c.unseen)]
            out += [(exercise, what) for what in twin_problems(mine)]
            if exercise not in selfchecks:
                out.append((exercise, f"no self-check cell in {course.of_file(source).relative('source')}"))
            if exercise not in conventions:
                out.append((exercise, f"no conventions line: CONVENTIONS[{exercise!r}] in {declaration} "
                                      "(what it computes, shapes: docs/conventions.md's table is generated from it)"))
            out += [(exercise, what) for what in _ladder_problems(
                exercise, HINTS.get(registry, {}).get(exercise), (source, defined[source]),
                f"HINTS[{exercise!r}] in {declaration}")]
            named = {m for c in mine for m in c.mistakes}
            for name, mistake in MISTAKES.get(registry, {}).items():
                if mistake.exercise != exercise:
                    continue
                if name not in named:
                    out.append((exercise, f"the known mistake {name} is named by none of its checks"))
                out += [(exercise, what)
                        for what in _mistake_problems(name, mistake, (source, defined[source]), declaration)]
    return out
