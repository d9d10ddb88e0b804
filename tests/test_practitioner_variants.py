"""Correct code in the style of widely used libraries gets full marks from the real grading path, sandbox
included (tests/submissions/practitioner/: autocast wrappers, float64 internals, einsum for matmul,
F.interpolate for the formula, a frozen nn.Parameter kept in float32, validation messages worded their own
way); and three library-style bugs get the diagnosis of their real cause, without a GPU."""

import pytest

from grader.checks import all_checks
from posenc_selfcheck import FAILED, PASSED
from tests.conftest import ROOT
from tests.grading_support import PRACTITIONER, defined, grade_in_sandbox

SUBMISSIONS = ROOT / "tests" / "submissions"
CHECKS = tuple(c for c in all_checks() if not c.cuda)


@pytest.fixture(scope="module")
def practitioner():
    return grade_in_sandbox(SUBMISSIONS / "practitioner", CHECKS)


def test_practitioner_style_code_gets_full_marks(practitioner):
    """Practitioner-style code, in tests/submissions/practitioner/ or an example of examples/complete/ itself
    written so (marked `# practitioner-style:`), gets full marks on every exercise it defines. A new exercise may
    have none (docs/authoring.md: three files make an exercise); every exercise of chapters 0-8 has one."""
    marked = defined(ROOT / "examples" / "complete", marked=PRACTITIONER)
    assert marked, "the worked example of docs/authoring.md, rope_wavelengths, is marked"
    written = defined(SUBMISSIONS / "practitioner")
    assert len({c.exercise for c in CHECKS} & (written | marked)) >= 33  # chapters 0-8's every exercise
    assert [(c.key, status, feedback) for c, status, feedback in practitioner
            if status != PASSED and c.exercise in written] == []
    examples = grade_in_sandbox(ROOT / "examples" / "complete", [c for c in CHECKS if c.exercise in marked])
    assert {c.exercise for c, _, _ in examples} == marked
    assert [(c.key, status, feedback) for c, status, feedback in examples if status != PASSED] == []


def test_autocast_wrappers_and_a_frozen_parameter_pass_the_checks_that_used_to_reject_them(practitioner):
    passed = {c.key for c, status, _ in practitioner if status == PASSED}
    assert {"rope_cos_sin.built_device_position_ids_checked_meta",  # autocast(device_type="meta") inside
            "RotaryCache.grows_device_buffers_checked_meta",
            "RoPEAttention.four_linear_layers_nothing_else_trainable",  # a frozen nn.Parameter of frequencies
            "RoPEAttention.bfloat16_positions_1000_1006_angles"} <= passed


@pytest.fixture(scope="module")
def library_bugs():
    checks = [c for c in CHECKS if c.exercise in ("RoPEAttention", "RotaryCache")]
    return {c.key: (status, feedback) for c, status, feedback in
            grade_in_sandbox(SUBMISSIONS / "library_style_bugs.py", checks)}


def test_a_frequency_buffer_cast_to_bfloat16_is_named_not_blamed_on_positions(library_bugs):
    status, feedback = library_bugs["RoPEAttention.bfloat16_positions_1000_1006_angles"]
    assert status == FAILED
    assert "module.to(torch.bfloat16) (or float16) rounded it" in feedback
    assert "compute positions and angles" not in feedback


def test_a_float_mask_is_named_as_such(library_bugs):
    status, feedback = library_bugs["RoPEAttention.3_token_chunk_after_cached_prefix"]
    assert status == FAILED and feedback.startswith("the mask is a float tensor")


def test_tables_grown_on_the_cpu_are_caught_on_the_meta_device(library_bugs):
    status, feedback = library_bugs["RotaryCache.grows_device_buffers_checked_meta"]
    assert status == FAILED and "mixes tensors on ['cpu', 'meta']" in feedback
    assert library_bugs["RotaryCache.runs_device_buffers_checked_meta_device"][0] == PASSED  # no growth: fine
