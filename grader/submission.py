"""Read a submission (a notebook, a .py file, or a folder of them) into top-level statements.

Nothing here executes learner code: files are parsed, never imported. From each file we keep the
statements that define things (imports, functions, classes, assignments, `if`/`try` blocks) and
drop the ones that only do things (bare expressions such as plots and self-check calls, `for` and
`while` loops such as training, `with` blocks). A cell with a syntax error is dropped on its own,
so the rest of the notebook is still graded. Cells tagged `demo` or `selfcheck` are not run.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 50 << 20
KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
        ast.AnnAssign, ast.AugAssign, ast.If, ast.Try)
SKIP_TAGS = {"demo", "selfcheck"}


class SubmissionError(ValueError):
    """The submission path itself is unusable (missing, or holds no notebook or .py file)."""


@dataclass
class SourceFile:
    name: str
    statements: list = field(default_factory=list)  # [(label, source)]
    defines: set = field(default_factory=set)
    notes: list = field(default_factory=list)  # what was dropped, and why


def _names(node):
    """Names a top-level statement binds (looking one level into if/try blocks)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.If, ast.Try)):
        handlers = [s for h in getattr(node, "handlers", []) for s in h.body]
        body = list(node.body) + list(getattr(node, "orelse", [])) + handlers
        return set().union(*[_names(s) for s in body]) if body else set()
    return set()


def _strip_magics(source):
    """IPython magics and shell escapes are not Python: blank them (keeping line numbers)."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return None  # a cell magic: the whole cell is not Python
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)


def _add_cell(sf, source, where):
    source = _strip_magics(source)
    if source is None or not source.strip():
        return
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        sf.notes.append(f"{where}: syntax error on line {exc.lineno} ({exc.msg}); this cell was not run")
        return
    lines = source.splitlines()
    for node in tree.body:
        if not isinstance(node, KEEP):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        segment = "\n".join(lines[first - 1:node.end_lineno])
        # pad with blank lines so tracebacks show the learner's own line numbers
        sf.statements.append((f"{where}", "\n" * (first - 1) + segment))
        sf.defines |= _names(node)


def _read_notebook(path, sf):
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        sf.notes.append(f"{path.name} is not a readable notebook ({type(exc).__name__}: {str(exc)[:120]}); "
                        "nothing in it was graded")
        return
    for n, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        tags = set((cell.get("metadata") or {}).get("tags") or [])
        if tags & SKIP_TAGS:
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        _add_cell(sf, source, f"{path.name}, cell {n}")


def read_file(path: Path) -> SourceFile:
    sf = SourceFile(path.name)
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        sf.notes.append(f"{path.name} is {size / 2**20:.0f} MB, over the {MAX_FILE_BYTES >> 20} MB limit; "
                        "not graded (clear the outputs and submit again)")
        return sf
    if path.suffix == ".ipynb":
        _read_notebook(path, sf)
    else:
        try:
            _add_cell(sf, path.read_text(encoding="utf-8"), path.name)
        except UnicodeDecodeError:
            sf.notes.append(f"{path.name} is not UTF-8 text; not graded")
    return sf


def read_submission(path) -> list[SourceFile]:
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"submission {str(path)!r} does not exist")
    if path.is_file():
        if path.suffix not in (".ipynb", ".py"):
            raise SubmissionError(f"submission {path.name!r} is neither a notebook (.ipynb) nor a .py file")
        return [read_file(path)]
    # posenc_mine/ holds the learner's exported copies of their notebooks' exercises: the notebooks are the source
    files = sorted(p for p in path.rglob("*") if p.suffix in (".ipynb", ".py") and p.is_file()
                   and not any(part.startswith((".", "__pycache__")) or part == "posenc_mine"
                               for part in p.relative_to(path).parts))
    if not files:
        raise SubmissionError(f"folder {str(path)!r} holds no .ipynb or .py file")
    return [read_file(p) for p in files]


def defining_file(files, name):
    """The last file that defines `name` (files are in sorted order), or None."""
    found = [f for f in files if name in f.defines]
    return found[-1] if found else None
