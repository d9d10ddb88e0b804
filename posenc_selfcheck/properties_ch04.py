# Generated from course/04_rope/properties.py by `python -m grader build`: edit there.
"""Chapter 4 properties: decoding with a KV cache reproduces the full forward pass; a property test
gives the right verdict on correct and broken RoPEs."""

from __future__ import annotations

from .compare import describe
from .messages import msg, verbatim
from .probes_base import registry

PROPERTIES, prop = registry()


@prop
def decode_matches_full(got, atol=1e-5, rtol=1e-4):
    """Feeding the sequence in pieces with the cache gives the rows of one full causal forward pass."""
    message = describe(got.get("out"), got["full"], atol, rtol, what=msg("decoded output"))
    if message:
        return False, msg("decoding with the cache differs from the full forward pass: {problem}. The new tokens sit "
                          "at positions past, past + 1, ... (past = cached length), the cache holds keys already "
                          "rotated, and the queries of a chunk are aligned to the end of the keys", problem=message)
    return True, ""


def judge_verdicts(got, expected, about, has_property, lacks_property):
    """The learner's property test returned expected[name] for every candidate (`expected` lists the candidate
    under test first, then anchors, a correct and a broken one, that every check also asks about, so a test that
    answers the same for everything scores nothing). `has_property` and `lacks_property` explain a wrong False and
    a wrong True (messages). A candidate is named by its description (a declared text), else by its name."""
    for n, (name, want) in enumerate(expected.items()):
        what = msg(about[name]) if name in about else name
        if f"{name}:error" in got:
            return False, msg("on {what}, your test failed: {error}. Return True or False; a broken RoPE should make "
                              "it return False, not raise", what=what, error=verbatim(got[f"{name}:error"]))
        if name not in got:
            return False, msg("no verdict on {what}", what=what)
        if got[name] != want:
            # an anchor (n > 0) is said to be one; each wording is whole, one message of the catalogs
            if want and n:
                return False, msg("returned False for {what}, which has the property (every check also asks about "
                                  "this one): {why}", what=what, why=has_property)
            if want:
                return False, msg("returned False for {what}, which has the property: {why}", what=what,
                                  why=has_property)
            if n:
                return False, msg("returned True for {what}, which does not have the property (every check also asks "
                                  "about this one). {why}", what=what, why=lacks_property)
            return False, msg("returned True for {what}, which does not have the property. {why}", what=what,
                              why=lacks_property)
    return True, ""


@prop
def verdicts(got, expected, about):
    """The learner's check_relative_property returned expected[name] for every candidate."""
    return judge_verdicts(
        got, expected, about,
        msg("scores depend only on m - n, norms are kept, and the rotation changes with the position. Test the "
            "property, not one implementation's numbers, and allow for float32 rounding (a few 1e-6 of |q| |k| at "
            "positions in the hundreds)"),
        msg("Check that |f(x, m)| = |x|, that every score f(q, m)·f(k, n) equals the score at the same distance from "
            "position 0, over positions spread across a few hundred, and that f(q, m) changes with m at all"))
