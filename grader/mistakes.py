"""The known mistakes with their implementations, for the grader's own process and the build (the answers of
a mistake are computed beside the reference's: grader/reference.py). Imports torch and the reference.

A mistake is declared beside its exercise (grader/checks/chNN.py `MISTAKES`: its message, its ladder, the key
line as the mistake writes it in `wrong`, the other statements it rewrites in `also`). Its implementation is
the reference solution with those statements rewritten: the code of a learner who makes it. Where a mistake
reaches further than its statements (chapter 1's table swapped in every row the module computes, not only in
its buffer), posenc_ref/mistakes/chNN.py writes it by hand, and that implementation is the one used.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass

import posenc_ref
from posenc_ref.mistakes import IMPLEMENTATIONS

from .checks import mistakes as declared

KEY = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Known:
    exercise: str  # the contract name it replaces
    message: str  # what the learner reads
    impl: object  # a function or class with the exercise's signature
    by_hand: bool  # written in posenc_ref/mistakes/ (else: the solution with the mistake's statements rewritten)


def key_line(levels):
    """The code of a ladder's last level, `key line: `...``."""
    return KEY.findall(levels[-1])[-1]


def statement(tree, key):
    """The run of statements of `tree` whose code is `key` (one statement, or adjacent ones written `a; b`), with
    the chain of nodes around it (outermost first). Raises ValueError unless there is exactly one such run."""
    want = [ast.unparse(s) for s in ast.parse(key).body]
    found = []

    def walk(node, chain):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i in range(len(block) - len(want) + 1):
                run = block[i: i + len(want)]
                if all(isinstance(s, ast.stmt) for s in run) and [ast.unparse(s) for s in run] == want:
                    module = ast.Module(body=run, type_ignores=[])
                    module.lineno, module.end_lineno = run[0].lineno, run[-1].end_lineno
                    found.append((module, chain + [node]))
        for child in ast.iter_child_nodes(node):
            walk(child, chain + [node])

    walk(tree, [])
    if len(found) != 1:
        raise ValueError(f"`{key}` is {len(found)} runs of statements of the solution, not one")
    return found[0]


def rewritten(source, edits):
    """`source` with each (statement node, its mistaken form: one or more lines) put in place of the node."""
    lines = source.splitlines()
    for node, mistaken in sorted(edits, key=lambda edit: edit[0].lineno, reverse=True):
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        lines[node.lineno - 1: node.end_lineno] = [indent + line for line in mistaken.splitlines()]
    return "\n".join(lines)


def edits(source, mistake):
    """[(statement node, mistaken form)]: the key line first, then `also`'s statements."""
    tree = ast.parse(source)
    key, _ = statement(tree, key_line(mistake.hints))
    out = [(key, mistake.wrong)]
    for other, mistaken in mistake.also.items():
        node, _ = statement(tree, other)
        if node.lineno == key.lineno:
            raise ValueError(f"`{other}` is the key line itself")
        out.append((node, mistaken))
    return out


def derive(name, mistake):
    """The reference's `mistake.exercise` with the mistake's statements rewritten, defined in a copy of the
    reference module's namespace (it calls the module's other functions as the solution does)."""
    solution = getattr(posenc_ref, mistake.exercise)
    source = inspect.getsource(solution)
    namespace = dict(vars(importlib.import_module(solution.__module__)))
    exec(compile(rewritten(source, edits(source, mistake)), f"<mistake {name}>", "exec"), namespace)  # noqa: S102
    return namespace[mistake.exercise]


def _known():
    unknown = set(IMPLEMENTATIONS) - set(declared())
    if unknown:
        raise ValueError(f"posenc_ref/mistakes/ implements mistakes no chapter declares: {sorted(unknown)}")
    out = {}
    for name, mistake in declared().items():
        by_hand = name in IMPLEMENTATIONS
        impl = IMPLEMENTATIONS[name] if by_hand else derive(name, mistake)
        out[name] = Known(mistake.exercise, mistake.message, impl, by_hand)
    return out


MISTAKES = _known()
