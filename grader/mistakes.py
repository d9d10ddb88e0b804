"""The known mistakes with their implementations, for the grader's own process and the build (the answers of
a mistake are computed beside the reference's: grader/reference.py). Imports torch and the reference.

A mistake is declared beside its exercise (grader/checks/chNN.py `MISTAKES`: its message, its ladder, the key
line as the mistake writes it in `wrong`, the other statements it rewrites in `also`). Its implementation is
the reference solution with those statements rewritten: the code of a learner who makes it. Where a mistake
reaches further than its statements (chapter 1's table swapped in every row the module computes, not only in
its buffer), its chapter's course/NN_name/mistakes.py writes it by hand (`IMPLEMENTATIONS`, instructor-only, loaded
as posenc_ref.mistakes.chNN: grader/course.py), and that implementation is the one used.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass

import posenc_ref

from . import course
from .checks import mistakes as declared
from .statements import key_line, rewritten, statement


@dataclass(frozen=True)
class Known:
    exercise: str  # the contract name it replaces
    message: str  # what the learner reads
    impl: object  # a function or class with the exercise's signature
    by_hand: bool  # written in its chapter's mistakes.py (else: the solution with the mistake's statements rewritten)


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


def _by_hand():
    """{name: function or class}: the mistakes written by hand, every chapter's mistakes.py that exists."""
    out = {}
    for chapter in course.chapters():
        table = course.load(chapter, "mistakes").IMPLEMENTATIONS if chapter.has("mistakes") else {}
        clash = set(out) & set(table)
        if clash:
            raise ValueError(f"mistake names used twice: {sorted(clash)}")
        out.update(table)
    return out


IMPLEMENTATIONS = _by_hand()


def _known():
    unknown = set(IMPLEMENTATIONS) - set(declared())
    if unknown:
        raise ValueError(f"course/*/mistakes.py implement mistakes no chapter declares: {sorted(unknown)}")
    out = {}
    for name, mistake in declared().items():
        by_hand = name in IMPLEMENTATIONS
        impl = IMPLEMENTATIONS[name] if by_hand else derive(name, mistake)
        out[name] = Known(mistake.exercise, mistake.message, impl, by_hand)
    return out


MISTAKES = _known()
