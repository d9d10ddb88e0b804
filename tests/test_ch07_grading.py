"""Chapter 7 grading: each learner-style wiring mistake under tests/submissions/ch07_*.py is named, every known
mistake is named by some check, and the reference passes its own self-checks."""

import pytest

import posenc_ref
from grader.checks import chapter_checks
from grader.grading import judge
from grader.mistakes import MISTAKES
from grader.reference import mistakes as mistake_results
from posenc_selfcheck import SelfCheckFailed, check
from tests.conftest import ROOT
from tests.conftest import grade as grade_submission
from tests.grading_support import drawn

CHECKS = chapter_checks("ch07")
SUBMISSIONS = ("ch07_bias_after_softmax", "ch07_no_decode_offset", "ch07_alibi_no_causal")


@pytest.fixture(scope="module")
def graded():
    """{submission: {check key: Verdict}} for the three submissions (each graded once per test session)."""
    out = {}
    for name in SUBMISSIONS:
        result = grade_submission(ROOT / "tests" / "submissions" / f"{name}.py", CHECKS)
        out[name] = {v.check.key: v for v in result.verdicts if not v.check.cuda}
    return out


def feedback(graded, submission, exercise):
    return " | ".join(str(r.feedback) for r in graded[submission].values()
                      if r.check.exercise == exercise and r.status == "failed")


@pytest.mark.parametrize("submission,exercise,words", [
    ("ch07_bias_after_softmax", "PositionalAttention", "the bias is added after the softmax"),
    ("ch07_bias_after_softmax", "TinyDecoder", "the absolute table is added after the first layer"),
    ("ch07_no_decode_offset", "PositionalAttention", "positions are not offset when decoding: with a cache of"),
    ("ch07_no_decode_offset", "TinyDecoder", "positions are not offset when decoding: with caches holding"),
    ("ch07_alibi_no_causal", "PositionalAttention", "with a bias the causal mask is gone"),
    ("ch07_alibi_no_causal", "TinyDecoder", "the scheme's learned bias table never changed"),
    ("ch07_alibi_no_causal", "TinyDecoder", "mixes tensors on ['cpu', 'meta']"),
])
def test_a_learner_mistake_is_named(graded, submission, exercise, words):
    assert words in feedback(graded, submission, exercise)


def test_a_wiring_mistake_costs_points_but_the_rest_is_still_graded(graded):
    results = graded["ch07_no_decode_offset"]
    # the full forward passes are right: only the decoding checks fail
    assert results["PositionalAttention.all_hooks_forward"].status == "passed"
    assert results["TinyDecoder.all_hooks_logits"].status == "passed"
    assert results["PositionalAttention.rotary_decode"].status == "failed"
    assert results["TinyDecoder.it_trains"].status == "passed"


def test_every_known_mistake_is_named_by_some_check():
    """Judged in-process on each mistake's own answers: it differs from the reference somewhere, and that
    check's feedback names it."""
    named = set()
    for check_ in CHECKS:
        if check_.cuda:
            continue
        check_ = drawn(check_)  # a main check: on inputs drawn as for a submission
        for name, (message, result) in zip(check_.mistakes, mistake_results(check_)):
            verdict = judge(check_, result)
            if verdict.status == "failed" and verdict.feedback.leads_with(message):
                named.add(name)
    exercises = {c.exercise for c in CHECKS}
    assert {name for name, m in MISTAKES.items() if m.exercise in exercises} - named == set()


def test_the_reference_passes_its_public_self_checks_and_a_mistake_is_named(capsys):
    for exercise in ("PositionalAttention", "TinyDecoder"):
        check(exercise, getattr(posenc_ref, exercise))
    assert capsys.readouterr().out.count("checks passed") == 2
    mistake = MISTAKES["decoder_embed_every_layer"]
    with pytest.raises(SelfCheckFailed, match="the absolute table is added before every layer"):
        check(mistake.exercise, mistake.impl)
