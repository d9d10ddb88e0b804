"""Chapter 4 grading: full marks for the solution and for an independent correct submission, zero for
the untouched notebook, and each learner-style mistake under tests/submissions named in the feedback."""

from functools import lru_cache

import pytest

import posenc_ref
from grader.checks import chapter_checks
from grader.checks.ch04 import ACCEPT, PUBLIC_ACCEPT, PUBLIC_REJECT, REJECT
from grader.grading import judge
from grader.mistakes import MISTAKES
from grader.reference import mistakes as mistake_results
from posenc_selfcheck import SelfCheckFailed, check, probes, probes_ch04
from tests.conftest import ROOT
from tests.conftest import grade as grade_submission
from tests.grading_support import drawn

CHECKS = chapter_checks("ch04")
SUBMISSIONS = ROOT / "tests" / "submissions"


@lru_cache(maxsize=None)
def grade(path):
    """{check key: Verdict} and the notes, for one submission (graded once per test session)."""
    result = grade_submission(path, CHECKS)
    return {v.check.key: v for v in result.verdicts}, tuple(str(n) for n in result.notes)


def feedback(path, exercise):
    results, _ = grade(path)
    return " | ".join(str(r.feedback) for r in results.values()
                      if r.check.exercise == exercise and r.status == "failed")


@pytest.mark.parametrize("submission,exercise,words", [
    # layout mismatch: repeat_interleave tables with rotate_half
    ("ch04_layout_mix", "rope_cos_sin", "repeat_interleave, interleaved layout"),
    ("ch04_layout_mix", "RoPEAttention", "layout mismatch"),
    ("ch04_layout_mix", "apply_rope_interleaved", "layout mismatch"),
    # rotate_half sign, exponent i/d
    ("ch04_sign_exponent", "rotate_half", "minus sign on the wrong half"),
    ("ch04_sign_exponent", "rope_inv_freq", "the exponent is i/d"),
    ("ch04_sign_exponent", "apply_rope", "turns the wrong way"),
    ("ch04_sign_exponent", "interleaved_to_half_perm", "inverse permutation"),
    # V rotated, K not rotated, positions not offset when decoding
    ("ch04_rotates_v", "RoPEAttention", "the values are rotated too"),
    ("ch04_k_not_rotated", "RoPEAttention", "the keys are not rotated"),
    ("ch04_no_decode_offset", "RoPEAttention", "positions are not offset when decoding"),
    # cos/sin on the wrong device or in the wrong dtype
    ("ch04_device_dtype", "rope_cos_sin", "mixes tensors on ['cpu', 'meta']. Hint: build positions, frequencies"),
    ("ch04_device_dtype", "RoPEAttention", "mixes tensors on ['cpu', 'meta']. Hint: build positions, frequencies"),
    ("ch04_device_dtype", "apply_rope", "were not cast to x.dtype"),
    ("ch04_device_dtype", "RoPEAttention", "cos/sin were built in the input's dtype"),
])
def test_a_learner_mistake_is_named(submission, exercise, words):
    assert words in feedback(SUBMISSIONS / f"{submission}.py", exercise)


def _property_results(submission):
    results, _ = grade(SUBMISSIONS / f"{submission}.py")
    return {r.check.name: r for r in results.values() if r.check.exercise == "check_relative_property"}


def test_a_too_strict_property_test_fails_on_the_reversed_rotation():
    """It compares rope_fn with its own RoPE, so it rejects correct RoPEs that differ in convention."""
    results = _property_results("ch04_rotates_v")
    reversed_ = results[f"accepts {ACCEPT['rope_half_reversed']}"]
    assert reversed_.status == "failed"
    assert f"returned False for {ACCEPT['rope_half_reversed']}, which has the property" in str(reversed_.feedback)
    assert "Test the property, not one implementation's numbers" in str(reversed_.feedback)
    assert sum(r.score for r in results.values()) <= 2


def test_a_too_lax_property_test_fails_on_the_layout_mix():
    """It looks at position 0 only, where every RoPE, broken or not, is the identity."""
    results = _property_results("ch04_k_not_rotated")
    mix = results["rejects the layout mix of section 4.7 (rotate_half with repeat_interleave tables)"]
    assert mix.status == "failed"
    assert "returned True for the layout mix of section 4.7" in str(mix.feedback)
    assert "|f(x, m)| = |x|" in str(mix.feedback)
    assert sum(r.score for r in results.values()) <= 2


def test_every_known_mistake_is_named_by_some_check():
    """Judged in-process on the mistake's own answers: each one differs from the reference somewhere,
    and that check's feedback names it."""
    named = {}
    for check_ in CHECKS:
        if check_.cuda:
            continue
        check_ = drawn(check_)  # a main check: on inputs drawn as for a submission
        for name, (message, result) in zip(check_.mistakes, mistake_results(check_)):
            verdict = judge(check_, result)
            if verdict.status == "failed" and verdict.feedback.leads_with(message):
                named.setdefault(name, check_.key)
    ch04 = {name for name, m in MISTAKES.items() if m.exercise in {c.exercise for c in CHECKS}}
    assert ch04 - set(named) == set()


def test_the_reference_passes_its_public_self_checks_and_a_mistake_is_named(capsys):
    for exercise in dict.fromkeys(c.exercise for c in CHECKS):
        check(exercise, getattr(posenc_ref, exercise))
    assert capsys.readouterr().out.count("checks passed") == 8
    mistake = MISTAKES["attn_rotates_v"]
    with pytest.raises(SelfCheckFailed, match="the values are rotated too"):
        check(mistake.exercise, mistake.impl)


def test_hidden_candidates_stay_out_of_the_student_release():
    import grader.hidden_probes  # importing the hidden candidates adds nothing to the public registry

    public = set(probes_ch04.CANDIDATES)
    assert all(fn.__module__ == probes_ch04.__name__ for fn in probes_ch04.CANDIDATES.values())
    merged = grader.hidden_probes.catalog()["relative_property"].keywords["table"]
    assert set(merged) == public | set(ACCEPT) | set(REJECT)
    assert public == {"rope_other_frequencies", "rope_layout_mix", *PUBLIC_ACCEPT, *PUBLIC_REJECT}
    for check_ in CHECKS:
        if check_.public and check_.probe == "relative_property":
            assert set(check_.params["candidates"]) <= public, check_.name
    stored = (ROOT / "posenc_selfcheck" / "data" / "ch04.json").read_text()
    published = (ROOT / "posenc_selfcheck" / "probes_ch04.py").read_text()
    for name in {**ACCEPT, **REJECT}:
        assert name not in stored and name not in published, name
    assert "relative_property" in probes.CATALOG
