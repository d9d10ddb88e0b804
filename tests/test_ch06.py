"""Chapter 6: RotaryCache against chapter 4's rope_cos_sin, its buffers, dtypes and growth, and grading."""

import pytest
import torch

import posenc_ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from posenc_selfcheck.probes import run as run_probe
from tests.conftest import ROOT, grade_with

CHECKS = chapter_checks("ch06")


@pytest.mark.parametrize("head_dim,base,max_len,positions", [
    (8, 10000.0, 16, torch.arange(6)),
    (16, 500000.0, 32, torch.randint(0, 30, (2, 5), generator=torch.Generator().manual_seed(0))),
    (64, 10000.0, 8, torch.arange(40)),  # past max_len: grows
    (32, 10000.0, 16, torch.tensor([[16], [3]])),  # exactly at max_len, decoding shape (batch, 1)
    (4, 10000.0, 2048, torch.tensor([4095, 0, 2047])),
])
def test_cache_equals_rope_cos_sin(head_dim, base, max_len, positions):
    cos, sin = posenc_ref.RotaryCache(head_dim, base=base, max_len=max_len)(positions)
    ref_cos, ref_sin = posenc_ref.rope_cos_sin(positions, head_dim, base)
    assert cos.shape == sin.shape == positions.shape + (head_dim,)
    assert cos.dtype == sin.dtype == torch.float32
    torch.testing.assert_close(cos, ref_cos, atol=1e-7, rtol=0)
    torch.testing.assert_close(sin, ref_sin, atol=1e-7, rtol=0)


def test_buffers_are_non_persistent_and_nothing_is_trainable():
    module = posenc_ref.RotaryCache(16, max_len=32)
    assert list(module.parameters()) == []
    assert sorted(name for name, _ in module.named_buffers()) == ["cos_cached", "sin_cached"]
    assert module.state_dict() == {}
    assert module.cos_cached.shape == (32, 16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_requested_dtype_is_the_float32_table_cast(dtype):
    positions = torch.arange(300)
    cos, sin = posenc_ref.RotaryCache(32, max_len=512)(positions, dtype=dtype)
    ref_cos, ref_sin = posenc_ref.rope_cos_sin(positions, 32)
    assert cos.dtype == sin.dtype == dtype
    assert torch.equal(cos, ref_cos.to(dtype)) and torch.equal(sin, ref_sin.to(dtype))


def test_growth_happens_once_on_the_buffers_device_and_keeps_buffers_non_persistent():
    module = posenc_ref.RotaryCache(8, max_len=8)
    module(torch.arange(5))
    assert module.cos_cached.shape[0] == 8  # no growth below max_len
    module(torch.tensor([8]))  # reaching max_len grows
    grown = module.cos_cached.shape[0]
    assert grown >= 9 and module.max_len == grown
    module(torch.tensor([grown - 1]))
    assert module.cos_cached.shape[0] == grown  # no second growth inside the new table
    assert module.state_dict() == {} and len(list(module.buffers())) == 2
    module = module.to(torch.float64)
    cos, _ = module(torch.arange(100))  # grows again after a cast: still float32 by default
    assert cos.dtype == torch.float32
    torch.testing.assert_close(cos, posenc_ref.rope_cos_sin(torch.arange(100), 8)[0], atol=1e-7, rtol=0)


def test_runs_on_meta_through_the_grader_probe():
    params = {"ctor_args": [16], "ctor_kwargs": {"max_len": 8},
              "forward_args": [{"t": "arange", "end": 20}]}
    assert run_probe(vars(posenc_ref), "meta_forward", params, "RotaryCache") == {"ok": True, "problem": ""}


@pytest.mark.parametrize("call,word", [
    (lambda: posenc_ref.RotaryCache(7), "head_dim=7"),
    (lambda: posenc_ref.RotaryCache(0), "head_dim=0"),
    (lambda: posenc_ref.RotaryCache(8, max_len=0), "max_len=0"),
    (lambda: posenc_ref.RotaryCache(8)(torch.tensor([3, -1])), "position_ids"),
])
def test_bad_input_raises_value_error_naming_it(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_every_known_mistake_really_is_wrong():
    """Each mistake differs from the reference on the input its checks use, and only there."""
    ref = posenc_ref.RotaryCache
    inputs = {"cache_interleaved": (8, 16, torch.arange(6), None),
              "cache_not_grown": (8, 8, torch.arange(40), None),
              "cache_low_precision_angles": (32, 128, torch.arange(100), torch.float16)}
    for name, (head_dim, max_len, positions, dtype) in inputs.items():
        mistake = MISTAKES[name]
        assert mistake.exercise == "RotaryCache"
        got = mistake.impl(head_dim, max_len=max_len)(positions, dtype=dtype)[0].float()
        expected = ref(head_dim, max_len=max_len)(positions, dtype=dtype)[0].float()
        assert not torch.allclose(got, expected, atol=3e-3), name


def _feedback(results):
    return " | ".join(str(r.feedback) for r in results.values() if r.status == "failed")


def test_diagnoses_for_interleaved_tables_kept_in_plain_attributes():
    results = grade_with(ROOT / "tests" / "submissions" / "ch06_interleaved.py", CHECKS)
    feedback = _feedback(results)
    assert "the tables are interleaved" in feedback
    assert "n_buffers should lie in [1, 8], got 0" in feedback and "register_buffer" in feedback
    assert "mixes tensors on ['cpu', 'meta']" in feedback  # plain attributes stay on the CPU


def test_diagnoses_for_a_clamped_cache_with_persistent_buffers():
    results = grade_with(ROOT / "tests" / "submissions" / "ch06_clamped.py", CHECKS)
    failed = {name for name, r in results.items() if r.status == "failed"}
    assert "the cache is not grown" in _feedback(results)
    assert "n_state_dict: expected 0, got 2" in _feedback(results)
    assert all("max_len" in name or "non-persistent" in name for name in failed)


def test_diagnosis_for_angles_in_float16_and_a_missing_position_check():
    results = grade_with(ROOT / "tests" / "submissions" / "ch06_half_angles.py", CHECKS)
    feedback = _feedback(results)
    assert "computed in the requested low-precision dtype" in feedback
    assert "expected ValueError, but nothing was raised" in feedback
    assert sum(r.status == "failed" for r in results.values()) == 2
