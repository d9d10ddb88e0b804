"""Turn a submission file's bytes into the top-level statements the sandbox will run (no execution).

Runs in a limited child process (`parse_limited`): parsing hostile text is itself an attack surface
(a notebook of JSON nested 100,000 deep, a 4 MB list literal that makes `ast.parse` take gigabytes). The child is
a fork of the grading process, so it starts in a few milliseconds (a fresh interpreter spent 80 ms a file starting):
before it reads the file it closes every descriptor but its result pipe, and takes its limits of address space
(beyond what it shares with the grading process), CPU and wall clock; what it sends back is JSON, read by the parent.
No torch: the standard library and the sandbox's own descriptor and address-space helpers.

From each file we keep the statements that define things (imports, functions, classes,
assignments, `if`/`try` blocks) and drop the ones that only do things (bare expressions such as
plots and self-check calls, `for` and `while` loops such as training, `with` blocks). A cell with a
syntax error is dropped on its own, so the rest of the notebook is still graded. Cells tagged `demo`
or `selfcheck` are not run. What was dropped, and why, is said in notes: messages (posenc_selfcheck/messages.py),
which cross from the child as their JSON form.
"""

from __future__ import annotations

import ast
import gc
import json
import math
import os
import re
import resource
import select
import signal
import sys
import time
import warnings

# imported here, never in the forked parser: a fork of a process with threads (a submission's lanes) must not wait on
# an import lock that one of them held at the fork
from .files import code_cells
from .records import messages
from .sandbox import procs
from .sandbox.confine.confine import detach

# Patterns in a submission's code (all of it, executed or not) that a person should look at: they
# do not change a grade, the batch's gradebook lists them.
FLAGS = {
    "exits the process": r"\bos\._exit\b|\bsys\.exit\b",
    "forks or signals": r"\bos\.fork\b|\bos\.kill\b|\bsetsid\b|\bsignal\.signal\b",
    "runs programs": r"\bsubprocess\b|\bos\.system\b|\bos\.exec|\bos\.spawn|\bpty\b",
    "inspects the process": r"/proc/|\bsys\.modules\b|\bmeta_path\b|_getframe|\bgc\.get_|\binspect\.stack\b",
    "native code": r"\bctypes\b|\bcffi\b",
    "pickling hooks": r"__reduce(_ex)?__|\bpickle\b|\bmarshal\b|\bdill\b",
    "names the grader": r"\bposenc_ref\b|\bgrader\b|\bhidden_probes\b|results\.json|/autograder",
    "network": r"\bsocket\b|\burllib\b|\brequests\b|\bhttp\.client\b",
}
KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
        ast.AnnAssign, ast.AugAssign, ast.If, ast.Try)
SKIP_TAGS = {"demo", "selfcheck"}


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


def _cell(out, source, where):
    source = _strip_magics(source)
    if source is None or not source.strip():
        return
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        error = messages.msg("syntax error") if isinstance(exc, SyntaxError) else type(exc).__name__
        where = messages.verbatim(where)  # the cell's label: the learner's file
        out["notes"].append(messages.msg("{where}: {error} on line {line}; this cell was not run", where=where,
                                         error=error, line=line) if line else
                            messages.msg("{where}: {error}; this cell was not run", where=where, error=error))
        return
    lines = source.splitlines()
    for node in tree.body:
        if not isinstance(node, KEEP):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        segment = "\n".join(lines[first - 1:node.end_lineno])
        # its first line, not blank lines before it: the sandbox compiles it there (padding each statement with the
        # lines above it made the text sent to the sandbox grow with the square of a file's statements)
        out["statements"].append([where, segment, first])
        out["defines"] |= _names(node)


def _flags(text):
    return sorted(name for name, pattern in FLAGS.items() if re.search(pattern, text))


def parse(name, data, code_kb=None):
    """{"statements": [[label, source, first line]], "defines": [...], "notes": [...], "flags": [...]} of one file;
    nothing but a note when its code (a .py file, or a notebook's code cells) is over `code_kb` KB."""
    out = {"statements": [], "defines": set(), "notes": [], "flags": []}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        out["notes"].append(messages.msg("{name} is not UTF-8 text; not graded", name=messages.verbatim(name)))
        return {**out, "defines": []}
    if name.endswith(".ipynb"):
        try:
            notebook = json.loads(text)
        except (ValueError, RecursionError) as exc:
            out["notes"].append(messages.msg("{name} is not a readable notebook ({error}); nothing in it was graded",
                                             name=messages.verbatim(name), error=type(exc).__name__))
            return {**out, "defines": []}
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            out["notes"].append(messages.msg("{name} is not a readable notebook (no list of cells); nothing in it was "
                                             "graded", name=messages.verbatim(name)))
            return {**out, "defines": []}
        cells = [(f"{name}, cell {n}", source, tags) for n, source, tags in code_cells(notebook)]
    else:
        cells = [(name, text, set())]
    code = sum(len(source.encode("utf-8", "surrogatepass")) for _, source, _ in cells)
    if code_kb is not None and code > code_kb << 10:
        out["notes"].append(messages.msg("{name} holds {kb:.0f} KB of code, over the grader's limit of {limit} KB per "
                                         "file; nothing in it was graded (remove pasted data or generated code)",
                                         name=messages.verbatim(name), kb=code / 1024, limit=code_kb))
        return {**out, "defines": []}
    out["flags"] = _flags("\n".join(source for _, source, _ in cells))
    for where, source, tags in cells:
        if not tags & SKIP_TAGS:
            _cell(out, source, where)
    return {**out, "defines": sorted(out["defines"])}


def _limit(memory_mb, seconds):
    """This forked process's limits, set before it reads a byte of the file: `memory_mb` of address space more than
    it has mapped now (what it shares with the grader's process is mapped already), `seconds` of CPU, no core."""
    limit = procs.mapped_bytes() + (memory_mb << 20)
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _child(write_fd, name, data, limits, cpu):
    """The forked parser: limited first, then the file's bytes parsed, the result written as JSON; never returns."""
    code = 1
    # what the grader's process holds is out of this process's collections: they scan only what the parse makes, and
    # write nothing to the pages it shares with the grader's
    gc.freeze()
    try:
        # nothing of the grader's but its end of the pipe (a sandbox child's first step: a session of its own, 0-2 on
        # /dev/null, every other descriptor closed); sys.stdout and sys.stderr write there too, whatever the grader had
        # made of them, and the warnings Python would print while compiling (SyntaxWarning) go nowhere
        detach(write_fd)
        sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
        warnings.simplefilter("ignore")
        _limit(limits.parse_memory_mb, cpu)
        result = parse(name, data, limits.code_kb)
        out = memoryview(json.dumps({**result, "notes": [messages.to_json(n) for n in result["notes"]]}).encode())
        while out:
            out = out[os.write(write_fd, out):]
        code = 0
    except BaseException:  # a MemoryError, a RecursionError: the parent sees no result and says so
        pass
    finally:
        os._exit(code)


def _collect(read_fd, pid, deadline):
    """What the parser wrote, once it has ended within `deadline` (time.monotonic) and said all; else None (it is
    killed)."""
    chunks = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                return None
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        pid = None
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None
    finally:
        os.close(read_fd)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def parse_limited(name, data, limits=None, seconds=None):
    """parse() in a forked child process with bounded memory and time (`limits`: grader.settings.ReadLimits' parse_*
    and code_kb; None: its defaults), within `seconds` of wall clock too when given (what is left of the submission's
    budget); a file it cannot handle becomes a note."""
    from .settings import ReadLimits

    limits = limits or ReadLimits()
    wall = limits.parse_seconds if seconds is None else min(limits.parse_seconds, seconds)
    if wall <= 0:
        return _nothing(messages.msg("{name} was not read: the submission had used up its time",
                                     name=messages.verbatim(name)))
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(write_fd, name, data, limits, max(1, math.ceil(wall)))
    os.close(write_fd)
    raw = _collect(read_fd, pid, time.monotonic() + wall)
    try:
        parsed = json.loads(raw) if raw is not None else None
    except ValueError:
        parsed = None
    if parsed is not None:
        return {**parsed, "notes": [messages.from_json(n) for n in parsed["notes"]]}
    return _nothing(messages.msg("{name} could not be read within the grader's limits ({mb} MB, {seconds:.3g} s): it "
                                 "is too large or too deeply nested; nothing in it was graded",
                                 name=messages.verbatim(name), mb=limits.parse_memory_mb, seconds=wall))


def _nothing(note):
    return {"statements": [], "defines": [], "flags": [], "notes": [note]}
