"""Numeric limits written beside their code (issue 26: Settings is the single source of every limit and default).

`findings(text)` parses one module with `ast` and returns each numeric literal it uses as a limit:
(a) bound to a limit's name: the value of an assignment, a keyword argument or a parameter's default whose name holds
    a LIMIT_WORDS word (`timeout=600`, `def one_line(text, limit=200)`, `parse_seconds = 20`);
(b) a constant: an ALL_CAPS name assigned a number (`DRAWN_CACHE = 1024`): a module's constant is a default;
(c) passed by position into a parameter with a limit's name: of a function the scanned code defines (`clean(x, 300)`:
    clean's second parameter is `limit`), or a wait of the standard library (WAIT_POSITIONS: `select(r, w, x, 30)`);
(d) compared with a limit's name or with a length (`depth <= 6`, `len(token) > 64`);
(e) added to a clock (`time.monotonic() + 10 ** 9`): a deadline;
and (f) another name for a setting: a module's name bound to a name imported from settings, or to a field of one
(`MAX_TEXT = REPORT.message_chars`): one name from the command line to the use.
A literal is the value of a constant expression (`256 << 20`, `10 ** 9`, `-1`). Never a limit: NOT_LIMITS below, and
hexadecimal, octal and binary literals (bit patterns and file modes).
"""

from __future__ import annotations

import ast
import re

# values that are no quantity of their own, with why
NOT_LIMITS = {
    0: "nothing, the first index, a success status",
    1: "one of a thing, the next index",
    -1: "the last item",
    2: "a half or a pair (d/2 frequencies, (sin, cos))",
}
# words of a name that say it bounds something (a name is split at "_" and at lower-to-upper case changes)
LIMIT_WORDS = {"timeout", "deadline", "wait", "limit", "limits", "budget", "retries", "attempts", "cache", "maxsize",
               "seconds", "bytes", "mb", "kb", "gb", "mib", "chars", "most", "allowance", "margin", "grace", "depth"}
# standard-library calls that take a wait by position: {function name: the wait's position}
WAIT_POSITIONS = {"select": 3, "sleep": 0}
CLOCKS = {"monotonic", "time", "perf_counter"}


def words(name):
    """{"max", "seconds"} of "MAX_SECONDS" or "maxSeconds"."""
    return {w.lower() for w in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", name or "") if w}


def limit_name(name):
    return bool(words(name) & LIMIT_WORDS)


def _number(node, text):
    """The value of a numeric constant expression, or None (also for a hexadecimal, octal or binary literal)."""
    if any(isinstance(n, ast.Constant) and (ast.get_source_segment(text, n) or "").lower().lstrip("-")
           .startswith(("0x", "0o", "0b")) for n in ast.walk(node)):
        return None
    constant = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop)
    if not all(isinstance(n, constant) for n in ast.walk(node)):
        return None
    try:
        value = eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}})  # constants only
    except Exception:
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _name(node):
    """The name an expression reads (`x`, `self.x`, `f(...)`: f), or ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def parameters(tree):
    """{function name: [parameter names by position]} of every function a module defines (methods without self)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            out.setdefault(node.name, []).append(names[1:] if names[:1] in (["self"], ["cls"]) else names)
    return out


def findings(text, known=None):
    """[(line, what)] for every literal `text` uses as a limit; `known`: parameters() of every scanned module (for
    rule (c)), this module's alone by default."""
    tree = ast.parse(text)
    known = parameters(tree) if known is None else known
    found = []
    settings = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and (node.module or "").split(".")[-1] == "settings" for a in node.names}
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        while isinstance(value, ast.Attribute):
            value = value.value
        if isinstance(value, ast.Name) and value.id in settings:
            found.append((node.lineno, f"{ast.get_source_segment(text, node)}: another name for a setting"))

    def flag(node, why):
        value = _number(node, text)
        if value is not None and value not in NOT_LIMITS:
            found.append((node.lineno, f"{ast.get_source_segment(text, node)} {why}"))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = _name(target)
                if node.value is not None and (limit_name(name) or (name.isupper() and len(name) > 1)):
                    flag(node.value, f"assigned to {name}")
        elif isinstance(node, ast.Call):
            callee = _name(node.func)
            for k in node.keywords:
                if k.arg and limit_name(k.arg):
                    flag(k.value, f"as {callee}({k.arg}=)")
            for i, arg in enumerate(node.args):
                named = {names[i] for names in known.get(callee, ()) if i < len(names)}
                if WAIT_POSITIONS.get(callee) == i or any(limit_name(n) for n in named):
                    flag(arg, f"as {callee}'s argument {i + 1} ({', '.join(sorted(named)) or 'a wait'})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                if limit_name(arg.arg):
                    flag(default, f"as the default of {arg.arg}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(limit_name(_name(s)) or _name(s) == "len" for s in sides):
                for side in sides:
                    flag(side, f"compared with {' and '.join(_name(s) for s in sides if _number(s, text) is None)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if any(isinstance(s, ast.Call) and _name(s) in CLOCKS for s in (node.left, node.right)):
                flag(node.right, "added to a clock")
                flag(node.left, "added to a clock")
    return sorted(set(found))
