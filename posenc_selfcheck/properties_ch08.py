# Generated from course/08_positions_in_2d/properties.py by `python -m grader build`: edit there.
"""Chapter 8 properties: a 2-D property test gives the right verdict on correct and broken 2-D RoPEs."""

from __future__ import annotations

from .messages import msg
from .probes_base import registry
from .properties_ch04 import judge_verdicts

PROPERTIES, prop = registry()


@prop
def verdicts_2d(got, expected, about):
    """The learner's check_axial_property returned expected[name] for every candidate."""
    return judge_verdicts(
        got, expected, about,
        msg("norms are kept, every score depends only on the displacement (Δrow, Δcolumn), and the rotation changes "
            "along a row and along a column. Compare each score with the score of the same (Δrow, Δcolumn), not of "
            "the same offset b − a between flattened cell numbers, which two displacements share ((1, −1) and (0, "
            "W − 1) are both W − 1 cells apart); test the property, not Qwen2-VL's layout, and allow for float32 "
            "rounding (a few 1e-6 of |q| |k|)"),
        msg("Check that |f(x, a)| = |x|, that every score equals the score of the same displacement from a fixed "
            "cell, over a grid of at least 12 x 12, and that f(q, (r, 0)) changes with r and f(q, (0, c)) with c"))
