"""The judge is bounded (issue 25): an answer that holds a complex tensor is refused before any comparison or
property reads it, and NaN and inf fail every check, whatever the floating dtype.

A probe result reaches `judge` as the sandbox sent it back (grader/results.py lets through any exact
torch.Tensor whose dtype is what the result says): here each answer is forged from the reference's own, so
that the only thing wrong with it is what each test puts there. An attack showed a complex64 answer whose
imaginary part was NaN passing a property check (cast to float64, a complex tensor keeps its real part)."""

import functools

import pytest
import torch

from grader.checks import all_checks
from grader.grading import judge
from grader.reference import answer
from posenc_selfcheck import FAILED, PASSED
from posenc_selfcheck import evaluate as evaluate_module
from posenc_selfcheck.properties import PROPERTIES
from tests.grading_support import drawn

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
NON_FINITE = (float("nan"), float("inf"), float("-inf"))


def _floating(result):
    return [k for k, v in result.items() if isinstance(v, torch.Tensor) and v.is_floating_point()
            and v.device.type != "meta" and v.numel()]


@functools.cache
def judged(kind=None):
    """Every check judged on tensors whose reference answer holds a real floating tensor (a main check: drawn), with
    that answer; of one `expect` ("match", "property") when given. Computed on first use (1.7 s): every pytest-xdist
    worker collects this file, only one runs it."""
    if kind is not None:
        return [(c, a) for c, a in judged() if c.expect == kind]
    checks = [drawn(c) for c in all_checks() if not c.cuda and c.expect in ("match", "property")]
    every = [(c, answer(c)) for c in checks]
    return [(c, a) for c, a in every if "error" not in a and "skipped" not in a and _floating(a)]


def forged(reference, change):
    """The reference's answer with `change(tensor)` applied to each of its floating tensors (their `:dtype` says
    what they now are, as a child's result must)."""
    out = dict(reference)
    for key in _floating(reference):
        out[key] = change(reference[key])
        out[f"{key}:dtype"] = str(out[key].dtype).replace("torch.", "")
    return out


def poisoned(value, dtype, where):
    """A change: the tensor in `dtype`, with `value` at its first entry, or wherever the reference is not 0 (a bias
    that is -inf off its diagonal and 0 on it looks like ALiBi's -m|j - i| with an infinite slope)."""
    def change(tensor):
        tensor = tensor.to(dtype).clone()
        if where == "first" or not tensor.any():
            tensor.view(-1)[0] = value
        else:
            tensor[tensor != 0] = value
        return tensor

    return change


def test_there_are_checks_of_each_kind_to_attack():
    assert len(judged("property")) >= 10 and len(judged("match")) >= 200
    assert {str(a.get(f"{k}:dtype")) for c, a in judged("match") for k in _floating(a)} >= {"float16", "bfloat16",
                                                                                         "float32", "float64"}


# ---- complex answers ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda t: torch.complex(t.float(), torch.full_like(t.float(), float("nan"))),  # the attack: NaN, imaginary
    lambda t: t.to(torch.complex128),  # the right values, imaginary part 0
], ids=["complex64_nan", "complex128_right_values"])
def test_a_complex_answer_is_refused_before_any_comparison_or_property(make, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("read a complex answer")

    for name in list(PROPERTIES):
        monkeypatch.setitem(PROPERTIES, name, never)
    for name in ("close", "describe", "same_answer"):
        monkeypatch.setattr(evaluate_module, name, never)
    wrong = []
    for check, reference in judged():
        verdict = judge(check, forged(reference, make))
        if verdict.status != FAILED or " is a complex tensor (complex" not in str(verdict.feedback):
            wrong.append((check.key, verdict.status, str(verdict.feedback)[:100]))
    assert wrong == []


# ---- NaN and inf --------------------------------------------------------------------------------------------
def test_the_reference_answers_pass_as_they_are():
    """The forgeries below change only what they say: unchanged, every answer passes."""
    assert [c.key for c, a in judged() if judge(c, dict(a)).status != PASSED] == []


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_and_inf_fail_every_property_check_whatever_the_dtype(dtype):
    passed = []
    for check, reference in judged("property"):
        for value in NON_FINITE:
            for where in ("first", "nonzero"):
                verdict = judge(check, forged(reference, poisoned(value, dtype, where)))
                if verdict.status != FAILED:
                    passed.append((check.key, value, where))
    assert passed == []


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_and_inf_fail_every_match_check_whatever_the_dtype(dtype):
    """On the checks whose answer is in `dtype` (so that the dtype check is not what catches them)."""
    passed, seen = [], 0
    for check, reference in judged("match"):
        if any(reference[k].dtype != dtype for k in _floating(reference)):
            continue
        seen += 1
        for value in NON_FINITE:
            for where in ("first", "nonzero"):
                verdict = judge(check, forged(reference, poisoned(value, dtype, where)))
                if verdict.status != FAILED:
                    passed.append((check.key, value, where))
    assert seen and passed == []


def test_a_property_answer_is_told_which_value_is_not_finite():
    check, reference = next((c, a) for c, a in judged("property") if c.property == "linear_distance_penalty")
    nan = judge(check, forged(reference, poisoned(float("nan"), torch.float64, "first")))
    inf = judge(check, forged(reference, poisoned(float("-inf"), torch.bfloat16, "nonzero")))
    assert str(nan.feedback) == "output holds NaN"
    assert str(inf.feedback) == "output holds inf: a correct answer is finite everywhere"
