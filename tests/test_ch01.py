"""Chapter 1: the reference against independent float64 formulas and properties, and grading."""

import pytest
import torch

import posenc_ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from tests.conftest import ROOT, grade_with

CHECKS = chapter_checks("ch01")


def sinusoid64(positions, d, base=10000.0):
    """Vaswani et al. (2017) eq. 3.5, written independently in float64 with a Python loop over pairs."""
    pe = torch.zeros(len(positions), d, dtype=torch.float64)
    for i in range(d // 2):
        for row, p in enumerate(positions):
            angle = p / base ** (2 * i / d)
            pe[row, 2 * i] = torch.tensor(angle, dtype=torch.float64).sin()
            pe[row, 2 * i + 1] = torch.tensor(angle, dtype=torch.float64).cos()
    return pe


@pytest.mark.parametrize("seq_len,d,base", [(1, 2, 10000.0), (17, 8, 10000.0), (40, 12, 100.0)])
def test_table_matches_the_formula(seq_len, d, base):
    got = posenc_ref.sinusoidal_table(seq_len, d, base)
    assert got.dtype == torch.float32 and got.shape == (seq_len, d)
    torch.testing.assert_close(got.double(), sinusoid64(range(seq_len), d, base), atol=1e-6 + 6e-8 * seq_len, rtol=0)


def test_table_far_positions_are_within_float32_angle_rounding():
    got = posenc_ref.sinusoidal_table(20000, 4)[[0, 511, 19999]]
    expected = sinusoid64([0, 511, 19999], 4)
    err = (got.double() - expected).abs().max(dim=1).values
    assert err[1] < 2e-5 * 2 and err[2] < 7e-4 * 2  # the contract's figures, with a factor-2 margin


@pytest.mark.parametrize("k,d", [(1, 8), (-5, 16), (37, 32)])
def test_shift_matrix_maps_every_position(k, d):
    m = posenc_ref.shift_matrix(k, d).double()
    positions = list(range(0, 300, 13))
    shifted = sinusoid64([p + k for p in positions], d)
    torch.testing.assert_close(sinusoid64(positions, d) @ m.T, shifted, atol=1e-5, rtol=0)
    torch.testing.assert_close(m @ m.T, torch.eye(d, dtype=torch.float64), atol=1e-6, rtol=0)


def test_shift_matrices_compose_and_invert():
    m = posenc_ref.shift_matrix
    torch.testing.assert_close(m(3, 16) @ m(4, 16), m(7, 16), atol=1e-6, rtol=0)
    torch.testing.assert_close(m(-9, 16), m(9, 16).T, atol=1e-6, rtol=0)


def test_module_has_no_trainable_parameters_and_follows_to():
    module = posenc_ref.SinusoidalPositionalEncoding(16, max_len=8)
    assert list(module.parameters()) == []
    assert [name for name, _ in module.named_buffers()] == ["pe"]
    assert "pe" not in module.state_dict()  # non-persistent, as Hugging Face does
    module = module.to(torch.float64)
    x = torch.randn(2, 20, 16, dtype=torch.float64)  # past max_len
    out = module(x, offset=3)
    assert out.dtype == torch.float64
    torch.testing.assert_close(out - x, sinusoid64(range(3, 23), 16).expand(2, -1, -1), atol=1e-6, rtol=0)


def test_module_runs_on_meta_without_touching_the_cpu():
    module = posenc_ref.SinusoidalPositionalEncoding(16, max_len=8).to("meta")
    assert module(torch.empty(2, 30, 16, device="meta")).device.type == "meta"


@pytest.mark.parametrize("call,word", [
    (lambda: posenc_ref.sinusoidal_table(4, 7), "d_model=7"),
    (lambda: posenc_ref.sinusoidal_table(0, 8), "seq_len=0"),
    (lambda: posenc_ref.shift_matrix(1, -2), "d_model=-2"),
    (lambda: posenc_ref.SinusoidalPositionalEncoding(8, max_len=0), "max_len=0"),
    (lambda: posenc_ref.SinusoidalPositionalEncoding(8)(torch.zeros(1, 2, 8), offset=-1), "offset=-1"),
])
def test_bad_input_raises_value_error_naming_it(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_every_known_mistake_really_is_wrong():
    """A mistake that equals the reference would make its diagnosis fire on correct code."""
    for name, mistake in MISTAKES.items():
        if mistake.exercise == "sinusoidal_table":
            assert not torch.allclose(mistake.impl(16, 8), posenc_ref.sinusoidal_table(16, 8), atol=1e-3), name
        if mistake.exercise == "shift_matrix":
            assert not torch.allclose(mistake.impl(3, 8), posenc_ref.shift_matrix(3, 8), atol=1e-3), name


def _feedback(results, exercise):
    return " | ".join(str(r.feedback) for r in results.values()
                      if r.check.exercise == exercise and r.status == "failed")


def test_diagnoses_for_swapped_table_backwards_shift_and_a_table_outside_buffers():
    results = grade_with(ROOT / "tests" / "submissions" / "ch01_swapped.py", CHECKS)
    assert "sin and cos are swapped" in _feedback(results, "sinusoidal_table")
    assert "shifts by -k" in _feedback(results, "shift_matrix")
    module = _feedback(results, "SinusoidalPositionalEncoding")
    assert "register_buffer" in module  # the table is a plain tensor: no buffer
    assert "device=x.device" in module  # positions built on the CPU: the meta-device check names it
    assert "expected ValueError, but nothing was raised" in module  # no bounds check on d_model


def test_diagnoses_for_exponent_and_a_trainable_table_that_cannot_extend():
    results = grade_with(ROOT / "tests" / "submissions" / "ch01_exponent.py", CHECKS)
    assert "the exponent is i/d" in _feedback(results, "sinusoidal_table")
    module = _feedback(results, "SinusoidalPositionalEncoding")
    assert "n_trainable: expected 0" in module
    assert "past max_len compute the missing rows" in module


def test_diagnosis_for_concatenated_table_and_missing_exercises_score_zero():
    results = grade_with(ROOT / "tests" / "submissions" / "ch01_concatenated.py", CHECKS)
    assert "concatenated" in _feedback(results, "sinusoidal_table")
    assert all(r.status == "not implemented" for r in results.values()
               if r.check.exercise != "sinusoidal_table" and not r.check.cuda)
