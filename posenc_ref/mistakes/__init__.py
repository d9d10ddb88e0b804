"""Known mistakes, written as wrong implementations (instructor-only).

The grader recognises a mistake when a learner's wrong answer equals the answer of one of these on
the same probe, and then names it. Self-check data stores their answers on the public inputs, so a
learner's kernel can name them too without this code. Each chapter's list lives in chNN.py.
"""

from __future__ import annotations

from . import ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08
from .mistake import Mistake  # noqa: F401  (the record each chapter's file fills in)


def _registry():
    """Every chapter's mistakes, listed explicitly (a chapter's file counts once it is named here)."""
    out = {}
    for chapter in (ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08):
        clash = set(out) & set(chapter.MISTAKES)
        if clash:
            raise ValueError(f"mistake names used twice: {sorted(clash)}")
        out.update(chapter.MISTAKES)
    return out


MISTAKES = _registry()
