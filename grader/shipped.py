"""The inputs whose answers ship to learners, which no draw may equal (grader/unseen.py).

Two sources, both readable by every learner:
- the public checks' params: the self-check data holds the reference's answers to them;
- the calls the chapters make with literal arguments (`sinusoidal_table(50, 64)` in a demo cell): the solution
  notebooks and the book show their answers. `python -m grader build` collects them from the chapter sources into
  grader/data/shipped_calls.json (the Gradescope bundle carries no chapter source, course/*/chapter.py).
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import operator
from functools import lru_cache
from pathlib import Path

from .settings import BOUNDS
from .unseen import canonical

CALLS = Path(__file__).resolve().parent / "data" / "shipped_calls.json"


# arithmetic a chapter writes on sizes (`seq_len + k`, `2 * d`, `-p`), followed on the values a name may hold
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _literal(node, env):
    """(True, [possible values]) when `node` is a literal, a name bound to literals in `env`, or integer arithmetic
    (+, -, *, //) on those."""
    if isinstance(node, ast.Name) and node.id in env:
        return True, env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        (ok_a, a), (ok_b, b) = _literal(node.left, env), _literal(node.right, env)
        if ok_a and ok_b and all(isinstance(v, int) for v in a + b) and not (isinstance(node.op, ast.FloorDiv)
                                                                             and 0 in b):
            return True, list(dict.fromkeys(_BINARY[type(node.op)](x, y) for x in a for y in b))
        return False, None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        ok, a = _literal(node.operand, env)
        if ok and all(isinstance(v, (int, float)) for v in a):
            return True, [_UNARY[type(node.op)](v) for v in a]
    try:
        return True, [ast.literal_eval(node)]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _bind(env, target, values):
    """Add each of `values` to what the names of `target` (a name, or a tuple of them) may hold."""
    for value in values:
        if isinstance(target, ast.Name):
            env.setdefault(target.id, [])
            if value not in env[target.id]:
                env[target.id].append(value)
        elif isinstance(target, ast.Tuple) and isinstance(value, (tuple, list)) and len(value) == len(target.elts):
            for name, item in zip(target.elts, value):
                _bind(env, name, [item])


def _bindings(scope):
    """{name: [literal values]} of a function's defaults, and of the literal assignments and the loops over literal
    iterables in `scope`'s body: every value a name is given (a demo cell writes `seq_len, d_model = 50, 64`, or
    `for base in (10000.0, 500000.0):`, then calls; control flow is not followed, so a name may hold more values than
    one run gives it: more inputs count as shipped, never fewer)."""
    env = {}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        positional = scope.args.posonlyargs + scope.args.args
        for arg, default in zip(positional[len(positional) - len(scope.args.defaults):], scope.args.defaults):
            ok, values = _literal(default, {})
            if ok:
                _bind(env, ast.Name(arg.arg), values)
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            pairs = (zip(target.elts, value.elts) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                     and len(target.elts) == len(value.elts) else [(target, value)])
            for name, expr in pairs:
                ok, values = _literal(expr, {})
                if ok:
                    _bind(env, name, values)
        elif isinstance(node, (ast.For, ast.comprehension)):
            ok, values = _literal(node.iter, {})
            if ok and len(values) == 1 and isinstance(values[0], (tuple, list, set)):
                _bind(env, node.target, list(values[0]))
    return env


def calls_in(source, exercises):
    """[(exercise, params)] of the calls to `exercises` in `source` whose arguments are literals, or names bound to
    literals in the module or the enclosing function (every combination of the values they may hold)."""
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
            if not (all(ok for ok, _ in values) and all(ok for _, (ok, _) in kwargs)
                    and len(kwargs) == len(node.keywords)):
                continue
            choices = [v for _, v in values] + [v for _, (_, v) in kwargs]
            if math.prod(len(c) for c in choices) > BOUNDS.shipped_combinations:  # too many to list: none counted
                continue
            for combination in itertools.product(*choices):
                args, kw = combination[:len(values)], combination[len(values):]
                out.append((node.func.id, {"args": list(args), "kwargs": {k: v for (k, _), v in zip(kwargs, kw)}}))
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
