"""Chapter 4 properties: decoding with a KV cache reproduces the full forward pass; a property test
gives the right verdict on correct and broken RoPEs."""

from __future__ import annotations

from .compare import describe
from .probes_base import registry

PROPERTIES, prop = registry()


@prop
def decode_matches_full(got, atol=1e-5, rtol=1e-4):
    """Feeding the sequence in pieces with the cache gives the rows of one full causal forward pass."""
    message = describe(got.get("out"), got["full"], atol, rtol, what="decoded output")
    if message:
        return False, (f"decoding with the cache differs from the full forward pass: {message}. The new tokens sit "
                       "at positions past, past + 1, ... (past = cached length), the cache holds keys already "
                       "rotated, and the queries of a chunk are aligned to the end of the keys")
    return True, ""


def judge_verdicts(got, expected, about, has_property, lacks_property):
    """The learner's property test returned expected[name] for every candidate (`expected` lists the candidate
    under test first, then anchors, a correct and a broken one, that every check also asks about, so a test that
    answers the same for everything scores nothing). `has_property` and `lacks_property` explain a wrong False and
    a wrong True."""
    for n, (name, want) in enumerate(expected.items()):
        what = about.get(name, name)
        if f"{name}:error" in got:
            return False, (f"on {what}, your test failed: {got[f'{name}:error']}. Return True or False; "
                           "a broken RoPE should make it return False, not raise")
        if name not in got:
            return False, f"no verdict on {what}"
        if got[name] != want:
            # an anchor (n > 0) is said to be one; each wording is whole, one message of the catalogs
            if want:
                return False, (f"returned False for {what}, which has the property"
                               + (" (every check also asks about this one)" if n else "") + f": {has_property}")
            return False, (f"returned True for {what}, which does not have the property"
                           + (" (every check also asks about this one)" if n else "") + f". {lacks_property}")
    return True, ""


@prop
def verdicts(got, expected, about):
    """The learner's check_relative_property returned expected[name] for every candidate."""
    return judge_verdicts(
        got, expected, about,
        "scores depend only on m - n, norms are kept, and the rotation changes with the position. Test the "
        "property, not one implementation's numbers, and allow for float32 rounding (a few 1e-6 of |q| |k| at "
        "positions in the hundreds)",
        "Check that |f(x, m)| = |x|, that every score f(q, m)·f(k, n) equals the score at the same distance from "
        "position 0, over positions spread across a few hundred, and that f(q, m) changes with m at all")
