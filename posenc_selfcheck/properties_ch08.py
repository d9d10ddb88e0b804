"""Chapter 8 properties: a 2-D property test gives the right verdict on correct and broken 2-D RoPEs."""

from __future__ import annotations

from .properties import registry

PROPERTIES, prop = registry()


@prop
def verdicts_2d(got, expected, about):
    """The learner's check_axial_property returned expected[name] for every candidate; `expected` lists the
    candidate under test first, then a correct and a broken anchor, so a constant answer scores nothing."""
    for n, (name, want) in enumerate(expected.items()):
        what = about.get(name, name)
        if f"{name}:error" in got:
            return False, (f"on {what}, your test failed: {got[f'{name}:error']}. Return True or False; "
                           "a broken RoPE should make it return False, not raise")
        if name not in got:
            return False, f"no verdict on {what}"
        if got[name] != want:
            anchor = "" if n == 0 else " (every check also asks about this one)"
            if want:
                return False, (f"returned False for {what}, which has the property{anchor}: norms are kept, every "
                               "score depends only on the displacement (Δrow, Δcolumn), and the rotation changes "
                               "along a row and along a column. Test the property, not Qwen2-VL's layout, and allow "
                               "for float32 rounding (a few 1e-6 of |q| |k|)")
            return False, (f"returned True for {what}, which does not have the property{anchor}. Check that "
                           "|f(x, a)| = |x|, that every score equals the score of the same displacement from a "
                           "fixed cell, over a grid of at least 12 x 12, and that f(q, (r, 0)) changes with r and "
                           "f(q, (0, c)) with c")
    return True, ""
