"""The diagnosis never blames a mistake that is not there (issue 28): a known mistake whose answer equals the
reference's on a check's input is never named by that check, and an answer whose values are the reference's but
whose dtype is not is told the dtype, the integer dtype it should have for an integer output. Through the learner's
self-check (posenc_selfcheck, on the stored public data) and through the grader's `judge` (on the reference's and
the mistakes' answers computed here).

The two cases the issue measured: `sincos_2d_table` in float64 on one row (where numbering the patches column by
column is right) was told "the patches are numbered column by column", and `mrope_position_ids` in int32 on a
text-and-image prompt was told "after a video the text started one past the largest id"."""

import re
from dataclasses import replace

import pytest
import torch

import posenc_ref
from grader.checks import all_checks, chapter_checks
from grader.checks.ch08 import IDS_MISTAKES, SINCOS_MISTAKES
from grader.grading import judge
from grader.mistakes import MISTAKES
from grader.reference import answer
from posenc_selfcheck import FAILED, public_checks
from posenc_selfcheck.evaluate import evaluate, same_answer
from posenc_selfcheck.messages import render
from posenc_selfcheck.runner import run_checks
from tests.conftest import ROOT
from tests.grading_support import drawn, judge_in_process, mistake_answers

COLUMN_MAJOR = MISTAKES["sincos2d_column_major"].message
AFTER_VIDEO = MISTAKES["mrope_text_after_largest_id"].message
FLOATING = "floating dtype"
# every check that compares values and knows mistakes; a main check on inputs drawn as for a submission
GRADED_WITH_MISTAKES = [drawn(c) for c in all_checks() if c.expect == "match" and c.mistakes and not c.cuda]
# chapter 8's checks name only the mistakes their input tells apart; given every mistake of their exercise, two of
# them meet mistakes whose answer is the reference's there (one row; a prompt without a video)
UNPRUNED = [replace(c, mistakes=every) for c in chapter_checks("ch08")
            for key, every in (("sincos_2d_table.single_row_1x7_d_8", SINCOS_MISTAKES),
                               ("mrope_position_ids.text_image_text", IDS_MISTAKES)) if c.key == key]


def as_float64(*args, **kwargs):
    """The reference's table, right in every value, returned in float64."""
    return posenc_ref.sincos_2d_table(*args, **kwargs).double()


def as_int32(*args, **kwargs):
    """The reference's ids, right in every value, returned in int32."""
    return posenc_ref.mrope_position_ids(*args, **kwargs).int()


def _dtype_name(result, key):
    return result.get(f"{key}:dtype", str(result[key].dtype).replace("torch.", ""))


def recast(answer, mistakes=()):
    """An answer with the reference's values, each tensor in another dtype of its kind that neither the reference
    nor any of `mistakes` ((message, answer), ...) has there (its `:dtype` says so): nothing but its dtype is
    wrong, and no known mistake is wrong that way."""
    out = dict(answer)
    for key, value in answer.items():
        if not isinstance(value, torch.Tensor) or value.device.type == "meta" or value.dtype == torch.bool:
            continue
        taken = {_dtype_name(answer, key)} | {_dtype_name(r, key) for _, r in mistakes
                                              if isinstance(r.get(key), torch.Tensor)}
        choices = (torch.float64, torch.float32, torch.float16, torch.bfloat16) if value.is_floating_point() \
            else (torch.int32, torch.int64, torch.int16)
        out[key] = value.to(next(d for d in choices if str(d).replace("torch.", "") not in taken))
        out[f"{key}:dtype"] = str(out[key].dtype).replace("torch.", "")
    return out


# ---- the two cases ------------------------------------------------------------------------------------
def test_the_self_check_tells_a_float64_table_on_one_row_its_dtype_not_a_mistake():
    verdicts = {spec["name"]: (status, render(message, "en"))
                for spec, status, message in run_checks("sincos_2d_table", as_float64)}
    status, message = verdicts["a single row (1x7), d_model=8"]
    assert status == FAILED
    assert message.startswith("out: expected dtype float32, got float64"), message
    assert COLUMN_MAJOR not in message
    assert not any(m.message in text for m in MISTAKES.values() for _, text in verdicts.values())


def test_the_self_check_tells_int32_ids_their_integer_dtype_not_a_mistake():
    verdicts = {spec["name"]: (status, render(message, "en"))
                for spec, status, message in run_checks("mrope_position_ids", as_int32)}
    status, message = verdicts["text, a 1x4x4 image, text"]
    assert status == FAILED
    assert message.startswith("out: expected dtype int64, got int32"), message
    assert "torch.int64" in message and FLOATING not in message
    assert AFTER_VIDEO not in message
    assert not any(m.message in text for m in MISTAKES.values() for _, text in verdicts.values())


@pytest.mark.parametrize("exercise, function, want, got", [
    ("sincos_2d_table", as_float64, "float32", "float64"), ("mrope_position_ids", as_int32, "int64", "int32")])
def test_the_grader_tells_the_same_answers_their_dtype_and_names_no_mistake(exercise, function, want, got):
    """Every check of the exercise that compares values, the main check on inputs drawn as for a submission."""
    checks = [c for c in chapter_checks("ch08") if c.exercise == exercise and c.expect == "match" and not c.cuda]
    assert any(c.main for c in checks) and any(c.key.endswith("single_row_1x7_d_8") or c.key.endswith(
        "text_image_text") for c in checks)
    for check in checks:
        verdict = judge_in_process({exercise: function}, check)
        assert verdict.status == FAILED, check.key
        feedback = render(verdict.feedback, "en")
        assert feedback.startswith(f"out: expected dtype {want}, got {got}"), (check.key, feedback)
        assert verdict.mistake == "", (check.key, verdict.mistake)
        assert (FLOATING in feedback) == want.startswith("float"), feedback


def test_exercise_8_5_states_the_dtype_its_checks_require():
    """The statement names the reference's integer dtype (the dtype message says it too)."""
    source = (ROOT / "course" / "08_positions_in_2d" / "chapter.py").read_text()
    statement = source[source.index("### Exercise 8.5"):source.index("def mrope_position_ids")]
    said = re.search(r"Return the \(3, batch, seq\) (\w+) tensor", statement)
    ids = posenc_ref.mrope_position_ids(torch.tensor([[0, 0, 0]]))
    assert said and said.group(1) == str(ids.dtype).replace("torch.", "") == "int64"


# ---- every check: a dtype-only failure names no mistake ---------------------------------------------------------
def test_no_public_check_names_a_mistake_for_the_right_values_in_another_dtype():
    """From the stored self-check data alone (what the learner's kernel has)."""
    blamed = []
    for exercise in dict.fromkeys(c.exercise for c in all_checks()):
        for spec, expected, mistakes in public_checks(exercise):
            if spec["expect"] != "match" or not mistakes or "error" in expected:
                continue
            status, feedback = evaluate(spec, recast(expected, mistakes), expected, mistakes)
            # a bool answer has no other dtype to recast to: it passes, with no feedback that could name anything
            if feedback and any(feedback.leads_with(message) for message, _ in mistakes):
                blamed.append((exercise, spec["name"], render(feedback, "en")[:100]))
    assert blamed == []


def test_no_grader_check_names_a_mistake_for_the_right_values_in_another_dtype():
    blamed = []
    for check in GRADED_WITH_MISTAKES:
        verdict = judge(check, recast(answer(check), mistake_answers(check)))
        if verdict.mistake:
            blamed.append((check.key, verdict.mistake[:60]))
    assert blamed == []


def test_a_mistake_whose_answer_is_the_references_on_this_input_is_never_named():
    """The answer of such a mistake, in another dtype (so that it fails): the dtype is what is wrong, never the
    mistake. Every grader check, and every mistake of it whose answer is the reference's on the check's input."""
    seen, blamed = [], []
    for check in GRADED_WITH_MISTAKES + UNPRUNED:
        expected = answer(check)
        for message, result in mistake_answers(check):
            if "error" in result or not same_answer(check.spec(), result, expected):
                continue
            seen.append(message.id)
            verdict = judge(check, recast(result, mistake_answers(check)))
            if verdict.status != FAILED or verdict.mistake or verdict.feedback.leads_with(message):
                blamed.append((check.key, verdict.status, message.id[:60]))
    assert {COLUMN_MAJOR, AFTER_VIDEO} <= set(seen)  # on one row; on a prompt without a video
    assert blamed == []


def test_a_device_check_names_a_mistake_only_for_its_very_operation_on_its_devices():
    """A device check (meta_call, expect "ok") names the known mistake that fails it with the same problem (the same
    operation mixing the same devices: the sink column made by torch.zeros on the CPU); a device bug elsewhere in
    the code (another operation) gets the check's own hint, not that mistake."""
    check = next(c for c in all_checks() if c.key == "attention_with_sinks.runs_q_device_checked_meta")
    known = mistake_answers(check)
    (message, result), = known
    assert result["ok"] is False and "aten::add" in result["problem"]
    status, feedback = evaluate(check.spec(), result, None, known)
    assert status == FAILED and feedback.leads_with(message)
    elsewhere = {"ok": False, "problem": result["problem"].replace("aten::add", "aten::matmul")}
    status, feedback = evaluate(check.spec(), elsewhere, None, known)
    assert status == FAILED and not feedback.leads_with(message)
    assert "sinks itself" in render(feedback, "en")  # the check's hint
