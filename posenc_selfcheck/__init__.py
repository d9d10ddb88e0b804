"""Self-checks for the positional-encodings course.

In a chapter notebook, right after an exercise:

    from posenc_selfcheck import check
    check("sinusoidal_table", sinusoidal_table)

runs your code on small inputs, compares it with answers stored in `data/` (made from the staff
reference, so no reference code is needed here), and says what is wrong, with a hint that gets more
specific at each new attempt. It takes well under a second. The grader runs the same checks and a
few more (on a GPU, at scale, against broken RoPEs it keeps to itself), in a sandbox.

Demo cells wrap their function in `demo`: while an exercise it uses is unfinished, the cell prints
one line instead of a traceback, and Run All goes on.
"""

from __future__ import annotations

import sys

from .demo import demo
from .evaluate import FAILED, MISSING, PASSED, SKIPPED
from .runner import SelfCheckFailed, _chapter_data, check, forget_attempts, public_checks

if "IPython" in sys.modules:  # a learner's kernel: pay torch's first uses now, not in the first check
    from . import warm

    warm.kernel()


def export_exercises(chapter, namespace, folder=None):
    """Copy this chapter's finished exercises into your package posenc_mine/ beside the notebook, so that
    later chapters can use them (see posenc_selfcheck.mine), and print each one's self-check verdict."""
    from .mine import export_exercises as export

    export(chapter, namespace, folder)  # (returns the verdicts; a notebook cell shows only what it prints)


__all__ = ["check", "demo", "export_exercises", "SelfCheckFailed", "PASSED", "FAILED", "SKIPPED", "MISSING",
           "public_checks", "forget_attempts", "_chapter_data"]
