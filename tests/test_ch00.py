"""Chapter 0: the reference attention against torch's SDPA and the chapter's claims, and grading."""

import math

import pytest
import torch
import torch.nn.functional as F

import posenc_ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from posenc_selfcheck import SelfCheckFailed, check
from tests.conftest import ROOT, grade_with

CHECKS = chapter_checks("ch00")
EX = "scaled_dot_product_attention"
attention = posenc_ref.scaled_dot_product_attention


def _qkv(batch, heads, q_len, k_len, d, dv=None, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(batch, heads, q_len, d), (batch, heads, k_len, d), (batch, heads, k_len, dv or d)]
    return [torch.randn(s, generator=gen, dtype=torch.float64).to(dtype) for s in shapes]


def _mask(kind, q_len, k_len, seed=0):
    gen = torch.Generator().manual_seed(seed)
    if kind is None:
        return None
    if kind == "bool":
        m = torch.rand(q_len, k_len, generator=gen) < 0.5
        m[:, -1] = True  # every query keeps a key
        return m
    if kind == "float":
        return torch.randn(1, 1, q_len, k_len, generator=gen)  # a bias, broadcast over batch and heads
    causal = torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=k_len - q_len)
    if kind == "causal":
        return causal
    return torch.zeros(q_len, k_len).masked_fill(~causal, -math.inf)  # "causal_float"


SHAPES = [(2, 3, 5, 5, 8, None), (1, 1, 1, 1, 4, None), (2, 2, 3, 7, 8, None), (1, 4, 1, 9, 16, None),
          (2, 2, 6, 6, 4, 6)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[:5])))
@pytest.mark.parametrize("mask_kind", [None, "bool", "float", "causal", "causal_float"])
def test_reference_equals_torch_sdpa(shape, mask_kind):
    batch, heads, q_len, k_len, d, dv = shape
    q, k, v = _qkv(batch, heads, q_len, k_len, d, dv)
    mask = _mask(mask_kind, q_len, k_len)
    got = attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert got.shape == expected.shape and got.dtype == torch.float32
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype,atol", [(torch.float64, 1e-12), (torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_reference_keeps_the_dtype_and_equals_torch(dtype, atol):
    q, k, v = _qkv(2, 3, 5, 7, 8, dtype=dtype, seed=1)
    mask = _mask("causal", 5, 7)
    got = attention(q, k, v, mask)
    assert got.dtype == dtype
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)
    torch.testing.assert_close(got.double(), exact, atol=atol, rtol=atol)


def test_queries_that_see_no_key_get_zeros_like_torch():
    q, k, v = _qkv(1, 2, 4, 3, 8, seed=2)
    mask = torch.tensor([[False, False, False], [True, False, True], [False, False, False], [True, True, True]])
    got = attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)
    assert got[..., [0, 2], :].abs().max() == 0
    float_mask = torch.zeros(4, 3).masked_fill(~mask, -math.inf)
    torch.testing.assert_close(attention(q, k, v, float_mask), expected, atol=1e-5, rtol=1e-4)


def test_reference_runs_on_meta():
    q, k, v = (torch.empty(2, 2, 5, 8, device="meta") for _ in range(3))
    causal = torch.ones(5, 5, dtype=torch.bool, device="meta")
    assert attention(q, k, v, causal).device.type == "meta"


@pytest.mark.parametrize("args,words", [
    (lambda: _qkv(1, 1, 3, 3, 8)[:1] + _qkv(1, 1, 3, 3, 4)[1:], ("head_dim=8", "head_dim=4")),
    (lambda: [torch.zeros(1, 1, 2, 4), torch.zeros(1, 1, 7, 4), torch.zeros(1, 1, 5, 4)], ("k_len=7", "v_len=5")),
    (lambda: _qkv(1, 1, 3, 3, 4) + [torch.ones(3, 3, dtype=torch.long)], ("mask", "int64")),
])
def test_bad_input_raises_value_error_naming_it(args, words):
    with pytest.raises(ValueError) as info:
        attention(*args())
    assert all(w in str(info.value) for w in words), str(info.value)


# ---- the chapter's claims, checked on the reference --------------------------------------------------
def test_self_attention_with_projections_is_permutation_equivariant():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(7, 16, generator=gen, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(16, 16, generator=gen, dtype=torch.float64) for _ in range(3))
    perm = torch.randperm(7, generator=gen)

    def layer(tokens):
        return attention((tokens @ w_q)[None, None], (tokens @ w_k)[None, None], (tokens @ w_v)[None, None])[0, 0]

    out, out_perm = layer(x), layer(x[perm])
    torch.testing.assert_close(out_perm, out[perm], atol=1e-12, rtol=0)
    assert (out_perm - out).abs().max() > 1e-3  # the rows did move: the test is not vacuous
    torch.testing.assert_close(out_perm.mean(0), out.mean(0), atol=1e-12, rtol=0)  # mean pooling is blind to order


def test_causal_layer_sees_each_prefix_as_a_set():
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(1, 1, 6, 8, generator=gen, dtype=torch.float64)
    perm = torch.tensor([0, 4, 2, 3, 1, 5])  # swap positions 1 and 4
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    before = attention(x, x, x, causal)[0, 0]
    xp = x[:, :, perm]
    after = attention(xp, xp, xp, causal)[0, 0]
    change = (after - before[perm]).abs().amax(dim=-1)
    # positions 0 and 5 see the same multiset of tokens: unchanged; 1..4 saw a different prefix
    assert change[[0, 5]].max() < 1e-12
    assert change[1:5].min() > 1e-3
    # and equivariance would have said "unchanged everywhere": it does hold without the mask
    full_change = (attention(xp, xp, xp)[0, 0] - attention(x, x, x)[0, 0][perm]).abs().max()
    assert full_change < 1e-12


def test_every_known_mistake_really_is_wrong():
    """A mistake that equals the reference would make its diagnosis fire on correct code."""
    q, k, v = _qkv(2, 2, 5, 5, 8, seed=5)
    mask = _mask("bool", 5, 5, seed=6)
    for name, mistake in MISTAKES.items():
        if mistake.exercise == EX:
            assert not torch.allclose(mistake.impl(q, k, v, mask), attention(q, k, v, mask), atol=1e-3), name


def test_the_reference_passes_its_self_check_and_a_mistake_is_named():
    check(EX, attention, quiet=True)
    with pytest.raises(SelfCheckFailed) as info:
        check(EX, MISTAKES["sdpa_mask_inverted"].impl, quiet=True)
    assert MISTAKES["sdpa_mask_inverted"].message in str(info.value)


# ---- grading -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("submission,mistake", [
    ("ch00_no_scale.py", "sdpa_no_scale"),
    ("ch00_scale_by_d.py", "sdpa_scale_by_d"),
    ("ch00_softmax_dim.py", "sdpa_softmax_over_queries"),
    ("ch00_mask_inverted.py", "sdpa_mask_inverted"),
    ("ch00_mask_after_softmax.py", "sdpa_mask_after_softmax"),
])
def test_learner_mistake_gets_its_diagnosis(submission, mistake):
    results = grade_with(ROOT / "tests" / "submissions" / submission, CHECKS)
    failed = [r for r in results.values() if r.status == "failed"]
    assert failed, "the submission passed every check"
    assert any(MISTAKES[mistake].message in str(r.feedback) for r in failed), [str(r.feedback) for r in failed]
    # no other known mistake is named for it
    others = [m.message for name, m in MISTAKES.items() if name != mistake and m.exercise == EX]
    assert not any(message in str(r.feedback) for r in failed for message in others)
