"""Chapter 3 grading: the solution scores full marks, the untouched notebook zero, and learner-style mistakes
(tests/submissions/ch03_*.py, written without posenc_ref) get their diagnoses, the scale check included."""

from functools import lru_cache

import pytest

from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from tests.conftest import ROOT
from tests.conftest import grade as grade_submission

CHECKS = chapter_checks("ch03")
SUBMISSIONS = ROOT / "tests" / "submissions"


SCALE = next(c for c in CHECKS if c.probe == "memory_capped_call")


@lru_cache(maxsize=None)
def grade(path, scale=False, only=None):
    """{check key: Verdict} of one submission, graded once: every chapter-3 check but the scale check
    (the slowest, a second per run) unless `scale`, or only the checks of exercise `only`."""
    checks = tuple(c for c in CHECKS if (scale or c is not SCALE) and only in (None, c.exercise))
    return {v.check.key: v for v in grade_submission(path, checks).verdicts}


def _check(exercise, name_start):
    return next(c for c in CHECKS if c.exercise == exercise and c.name.startswith(name_start))


@pytest.mark.parametrize("submission,mistake", [
    ("ch03_sign_flipped.py", "rel_sign_flipped"),
    ("ch03_sign_flipped.py", "shaw_sign_flipped"),
    ("ch03_sign_flipped.py", "bias_sign_flipped"),
    ("ch03_clip_and_scale.py", "shaw_clip_off_by_one"),
    ("ch03_clip_and_scale.py", "shaw_direct_unscaled"),
    ("ch03_clip_and_scale.py", "bias_clip_off_by_one"),
    ("ch03_values_buckets_slopes.py", "shaw_value_ignored"),
    ("ch03_values_buckets_slopes.py", "t5_causal_as_bidirectional"),
    ("ch03_values_buckets_slopes.py", "alibi_slopes_power_of_two_formula"),
    ("ch03_values_buckets_slopes.py", "alibi_bias_power_of_two_formula"),
])
def test_learner_mistake_gets_its_diagnosis(submission, mistake):
    results = grade(SUBMISSIONS / submission)
    exercise = MISTAKES[mistake].exercise
    failed = [r for r in results.values() if r.check.exercise == exercise and r.status == "failed"]
    assert failed, "the submission passed every check"
    assert any(MISTAKES[mistake].message in str(r.feedback) for r in failed), [str(r.feedback) for r in failed]
    others = [m.message for name, m in MISTAKES.items() if name != mistake and m.exercise == exercise]
    assert not any(message in str(r.feedback) for r in failed for message in others)


def test_power_of_two_formula_is_named_for_twelve_heads():
    results = grade(SUBMISSIONS / "ch03_values_buckets_slopes.py")
    twelve = results[_check("alibi_slopes", "12 heads").key]
    assert twelve.status == "failed" and "power-of-two formula" in str(twelve.feedback)
    assert results[_check("alibi_slopes", "8 heads").key].status == "passed"  # right where the formula holds


def test_bias_built_on_a_hard_coded_device_is_caught_on_the_meta_device():
    results = grade(SUBMISSIONS / "ch03_values_buckets_slopes.py")
    for exercise, where in (("RelativePositionBias", "self.bias.weight.device"), ("alibi_bias", "device=device")):
        meta = results[_check(exercise, "built on the").key]
        assert meta.status == "failed", exercise
        assert "built on another device" in str(meta.feedback) and where in str(meta.feedback), str(meta.feedback)
    # on this machine the numbers are right, which is why only a device check can see it
    assert results[_check("RelativePositionBias", "bias for H=4").key].status == "passed"


def test_shaw_without_value_table_leaves_rel_v_without_gradient():
    results = grade(SUBMISSIONS / "ch03_values_buckets_slopes.py")
    grads = results[_check("shaw_attention", "gradients reach").key]
    assert grads.status == "failed" and "no gradient reached rel_v" in str(grads.feedback)


def test_repeating_the_table_passes_small_inputs_and_fails_the_scale_check_saying_why():
    results = grade(SUBMISSIONS / "ch03_repeat_table.py", scale=True, only="shaw_attention")
    shaw = [r for r in results.values() if r.check.exercise == "shaw_attention" and not r.check.cuda]
    scale = next(r for r in shaw if r.check.probe == "memory_capped_call")
    on_meta = next(r for r in shaw if r.check.probe == "meta_largest_buffer")  # the self-check's counterpart
    assert all(r.status == "passed" for r in shaw if r not in (scale, on_meta))
    assert on_meta.status == "failed" and "one buffer is 8.6 GB" in str(on_meta.feedback)
    assert scale.status == "failed"
    assert "over the memory limit" in str(scale.feedback)
    assert "tried to allocate 8.6 GB" in str(scale.feedback) and "(1, 8, 2048, 2048, 64)" in str(scale.feedback)
    assert "repeated over batch and heads" in str(scale.feedback) and "scatter-add" in str(scale.feedback)
