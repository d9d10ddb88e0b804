"""The inputs whose answers ship to learners, which no draw may equal (grader/unseen.py).

Two sources, both readable by every learner:
- the public checks' params: the self-check data holds the reference's answers to them;
- the calls the chapters make with literal arguments (`sinusoidal_table(50, 64)` in a demo cell): the solution
  notebooks and the book show their answers. `python -m grader build` collects them from the chapter sources into
  grader/data/shipped_calls.json (the Gradescope bundle carries grader/, not chapters/).
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

from .unseen import canonical

CALLS = Path(__file__).resolve().parent / "data" / "shipped_calls.json"


def _literal(node, env):
    """(True, value) when `node` is a literal or a name bound to one in `env`."""
    if isinstance(node, ast.Name) and node.id in env:
        return True, env[node.id]
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _bindings(scope):
    """{name: literal} of a function's defaults and of the literal assignments in `scope`'s own body, the last one
    winning (a demo cell writes `seq_len, d_model = 50, 64` and then calls; control flow is not followed)."""
    env = {}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        positional = scope.args.posonlyargs + scope.args.args
        for arg, default in zip(positional[len(positional) - len(scope.args.defaults):], scope.args.defaults):
            ok, value = _literal(default, {})
            if ok:
                env[arg.arg] = value
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                     and len(target.elts) == len(value.elts) else [(target, value)])
            for name, expr in pairs:
                ok, literal = _literal(expr, {})
                if isinstance(name, ast.Name) and ok:
                    env[name.id] = literal
    return env


def calls_in(source, exercises):
    """[(exercise, params)] of the calls to `exercises` in `source` whose arguments are literals, or names bound to
    literals in the module or the enclosing function."""
    tree = ast.parse(source)
    module_env = _bindings(tree)
    scopes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out = []
    for scope in scopes:
        env = {**module_env, **_bindings(scope)} if scope is not tree else module_env
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in exercises):
                continue
            values = [_literal(a, env) for a in node.args]
            kwargs = [(k.arg, _literal(k.value, env)) for k in node.keywords if k.arg]
            if all(ok for ok, _ in values) and all(ok for _, (ok, _) in kwargs) and len(kwargs) == len(node.keywords):
                out.append((node.func.id, {"args": [v for _, v in values],
                                           "kwargs": {k: v for k, (_, v) in kwargs}}))
    return out


def notebook_calls():
    """The generated file's text: every chapter's literal calls of its exercises, sorted."""
    from .checks import exercises
    from .leaks import chapter_sources

    names = set(exercises())
    found = {canonical([ex, params]) for path in chapter_sources() for ex, params in calls_in(path.read_text(), names)}
    return json.dumps([json.loads(item) for item in sorted(found)], indent=0) + "\n"


def _forms(params):
    """A call's params as a check may write them: with and without an empty kwargs."""
    yield canonical(params)
    if not params.get("kwargs"):
        yield canonical({k: v for k, v in params.items() if k != "kwargs"})
        yield canonical({**params, "kwargs": {}})


@lru_cache(maxsize=1)
def inputs():
    """frozenset of canonical params (unseen.canonical) whose answers learners can read."""
    from .checks import all_checks

    found = {canonical(c.params) for c in all_checks() if c.public}
    if CALLS.exists():
        for _, params in json.loads(CALLS.read_text()):
            found.update(_forms(params))
    return frozenset(found)
