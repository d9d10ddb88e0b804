"""Feedback text compared across machines: the same words, the same integers, and decimals equal to the
precision they are printed with.

A diagnosis quotes float32 values to 6 significant digits ("expected -0.0559564, got 0.997944"); another CPU's
kernels (vector width, threads, the order of a sum) move a float32 result by an ulp or two, and its printed last
digit with it. Everything else in the text, the integers included (counts, indices, shapes), must be equal.
"""

from __future__ import annotations

import re

# a decimal with a point or an exponent: 0.997944, -1.05, 1.0e-05, 3.1e+02 (integers are not decimals)
DECIMAL = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")


def unit(printed):
    """One unit in the last printed digit: "1.05" → 0.01, "0.997944" → 1e-06, "1.0e-05" → 1e-06."""
    mantissa, _, exponent = printed.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def split(text):
    """(the text with every decimal replaced by "#", [(value, unit of its last digit)])."""
    return DECIMAL.sub("#", text), [(float(m), unit(m)) for m in DECIMAL.findall(text)]


# float32's own noise, past the printed digit: a difference of a few ulps accumulated in a long sum
REL, ABS = 1e-4, 1e-6


def same(a, b):
    """Two feedback texts equal but for the last printed digits of their decimals: |a - b| at most one unit of
    that digit (the larger of the two), or float32's noise (REL of the value, ABS near zero: "-0.00258644" on one
    CPU is "-0.00258651" on another)."""
    (words_a, numbers_a), (words_b, numbers_b) = split(a), split(b)
    if words_a != words_b or len(numbers_a) != len(numbers_b):
        return False
    # |x - y| <= max(1.01 · max(unit_x, unit_y), REL · max(|x|, |y|), ABS)
    return all(abs(x - y) <= max(1.01 * max(ux, uy), REL * max(abs(x), abs(y)), ABS)
               for (x, ux), (y, uy) in zip(numbers_a, numbers_b))


def same_structure(a, b):
    """Two JSON-like values equal, strings compared with `same`."""
    if isinstance(a, str) and isinstance(b, str):
        return same(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a, b))
    return a == b
