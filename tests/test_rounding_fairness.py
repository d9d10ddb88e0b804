"""Correct code passes every check whose tolerance is set by rounding whoever the student is, with room to spare.

A check in low precision (bfloat16, float16) compares against the reference computed in that precision, so correct
code that works in float32 or float64 inside and rounds once differs from it by the reference's own rounding; a check
at large positions (a `per_position` term in its tolerance) compares float32 angles p·θ that two correct tables round
each their own way. The draws of a main check or twin (grader/unseen.py) decide the inputs, and so that difference,
per student: a tolerance that holds on the draws the other tests happen to use can still fail one student in thirty
(chapter 3's shaw_attention in bfloat16, with the default atol 0.02, failed 9 of 300 draws; chapter 6's RotaryCache
in float64 at positions up to 300, with p·6e-8, 1 of 300). Here every such check is drawn for many students and answered
by the complete example and the practitioner-style submission (trusted code, run in this process); each answer's
largest error must stay under RATIO of what the check allows, so that the rare draws beyond the ones tried keep a
margin too: chapter 6's old tolerance, which failed 6 draws in 1,000, let the complete example pass RATIO on 81 of
them, so DRAWS draws catch it with a chance of 99 in 100; today's tolerances keep every check under 0.6 over 1,000
draws."""

import json
import runpy

import pytest

from grader import hidden_probes, reference, shipped, twins, unseen
from grader.checks import all_checks
from grader.grading import SHAPED
from posenc_selfcheck import probes
from posenc_selfcheck.compare import tensor_keys, tolerance
from tests.conftest import ROOT

DRAWS = 60  # students per drawn check
RATIO = 0.7  # the largest |got - expected| / (atol + rtol |expected|) allowed to correct code
SOURCES = sorted((ROOT / "examples" / "complete").glob("*.py")) + sorted(
    (ROOT / "tests" / "submissions" / "practitioner").glob("*.py"))
LOW = ("bfloat16", "float16")
SECRET = bytes(32)  # the students' draws: the same every run, so that a failure can be replayed


def _set_by_rounding(check):
    """A check in half precision, or one whose tolerance grows with the position."""
    text = json.dumps(check.params, default=repr)
    return any(f'"{dtype}"' in text for dtype in LOW) or "per_position" in (check.tol or {})


CHECKS = [c for c in twins.with_twins(all_checks())[0]
          if not c.cuda and c.expect in SHAPED and _set_by_rounding(c)]


@pytest.fixture(scope="module")
def namespaces():
    return {str(path.relative_to(ROOT)): runpy.run_path(str(path)) for path in SOURCES}


def _worst_ratio(check, got, expected):
    """The largest error of `got` as a fraction of what `check` allows, over its tensors (inf: no comparable tensor)."""
    worst = 0.0
    for key in tensor_keys(expected):
        e = expected[key].double()
        dtype = expected.get(f"{key}:dtype", str(expected[key].dtype).replace("torch.", ""))
        atol, rtol = tolerance(check.tol, dtype)
        g = got.get(key)
        if g is None or g.shape != e.shape:
            return float("inf")
        worst = max(worst, ((g.double() - e).abs() / (atol + rtol * e.abs())).nan_to_num(nan=float("inf"))
                    .max().item())
    return worst


def test_the_checks_set_by_rounding_are_found():
    assert {c.exercise for c in CHECKS} >= {"shaw_attention", "RoPEAttention", "RotaryCache", "sinusoidal_table"}
    assert any(c.unseen for c in CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.key)
def test_correct_code_passes_with_margin_for_any_student(check, namespaces):
    tried = 0
    for name, ns in namespaces.items():
        if check.exercise not in ns:
            continue
        for n in range(DRAWS if check.unseen else 1):
            drawn = unseen.resolve(check, unseen.identity(SECRET, "course", f"s{n}"), shipped.inputs()) \
                if check.unseen else check
            expected = reference.answer(drawn)
            got = probes.run(ns, drawn.probe, drawn.params, drawn.exercise, hidden_probes.catalog())
            ratio = _worst_ratio(drawn, got, expected)
            assert ratio <= RATIO, (name, drawn.params, ratio)
            tried += 1
    assert tried, f"no correct source defines {check.exercise}"
