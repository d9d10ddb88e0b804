"""Known mistakes written by hand as wrong implementations (instructor-only): {name: function or class}.

A mistake is declared beside its exercise's checks (grader/checks/chNN.py: its message, its hints, the
statements it writes wrong), and by default it *is* the solution with those statements rewritten
(grader/mistakes.py). A chapter's file here writes one by hand where the mistake reaches further than those
statements. Each chapter's table lives in chNN.py, listed below.
"""

from __future__ import annotations

from . import ch00, ch01, ch02, ch03, ch04, ch07


def _registry():
    """Every chapter's implementations, listed explicitly (a chapter's file counts once it is named here)."""
    out = {}
    for chapter in (ch00, ch01, ch02, ch03, ch04, ch07):  # chapters 5, 6 and 8: every mistake derived
        table = chapter.IMPLEMENTATIONS
        clash = set(out) & set(table)
        if clash:
            raise ValueError(f"mistake names used twice: {sorted(clash)}")
        out.update(table)
    return out


IMPLEMENTATIONS = _registry()
