"""Chapter 3: the reference against transformers 5.23.0 (T5 buckets, BLOOM's ALiBi), against a Shaw attention
written here loop by loop, and against the properties the chapter claims."""

import math
import time

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import posenc_ref as ref
from grader.checks import chapter_checks, chapter_of
from grader.mistakes import MISTAKES
from grader.twins import with_twins
from posenc_selfcheck import SelfCheckFailed, check, probes
from tests.grading_support import drawn

CHECKS = chapter_checks("ch03")


def _randn(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# ---- T5 buckets: identical to transformers -----------------------------------------------------------
@pytest.mark.parametrize("num_buckets", [8, 32, 64])
@pytest.mark.parametrize("max_distance", [128, 256])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bucket_equals_transformers_for_every_distance(num_buckets, max_distance, bidirectional):
    pytest.importorskip("transformers")  # the oracle; transformers 5.23 needs Python 3.11+
    from transformers.models.t5.modeling_t5 import T5Attention

    r = torch.arange(-2000, 2001)
    expected = T5Attention._relative_position_bucket(r, bidirectional, num_buckets, max_distance)
    got = ref.t5_bucket(r, bidirectional, num_buckets, max_distance)
    assert got.dtype == torch.int64
    assert torch.equal(got, expected)


def test_t5_bucket_on_a_decoding_matrix_equals_t5_compute_bias_positions():
    pytest.importorskip("transformers")  # the oracle; transformers 5.23 needs Python 3.11+
    from transformers.models.t5.modeling_t5 import T5Attention

    # T5's compute_bias: memory_position - (arange(q) + past), past = k_len - q_len when decoding
    q_len, k_len = 3, 300
    rel = torch.arange(k_len)[None, :] - (torch.arange(q_len)[:, None] + k_len - q_len)
    assert torch.equal(ref.relative_positions(q_len, k_len), rel)
    for bidirectional in (True, False):
        assert torch.equal(ref.t5_bucket(rel, bidirectional),
                           T5Attention._relative_position_bucket(rel, bidirectional, 32, 128))


def test_t5_buckets_grow_with_distance_and_split_by_direction():
    r = torch.arange(-500, 501)
    causal = ref.t5_bucket(r, bidirectional=False)
    past = causal[r <= 0].flip(0)  # distances 0, 1, 2, ... into the past
    assert (past.diff() >= 0).all() and past[0] == 0 and past[-1] == 31
    assert (causal[r > 0] == 0).all()  # future keys share bucket 0
    both = ref.t5_bucket(r)
    assert (both[r > 0] >= 16).all() and (both[r <= 0] < 16).all()
    assert torch.equal(both[(r > 0) & (r < 8)], 16 + r[(r > 0) & (r < 8)])  # exact buckets near the query


# ---- ALiBi: BLOOM's slopes and BLOOM's attention ----------------------------------------------------
def test_alibi_slopes_equal_bloom_to_float32_precision():
    pytest.importorskip("transformers")  # the oracle; transformers 5.23 needs Python 3.11+
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    for n in [*range(1, 65), 80, 96, 112, 128]:
        got = ref.alibi_slopes(n)
        assert got.dtype == torch.float32 and got.shape == (n,)
        # vectorised float32 pow differs by at most one unit in the last place between vector lengths
        torch.testing.assert_close(got, _get_alibi_slopes(n, "cpu"), rtol=1.2e-7, atol=0, msg=f"{n} heads")


def test_alibi_slopes_by_the_formula():
    assert torch.equal(ref.alibi_slopes(8), 2.0 ** -torch.arange(1, 9, dtype=torch.float32))
    twelve = ref.alibi_slopes(12).double()
    expected = torch.cat([2.0 ** -torch.arange(1, 9.0), 2.0 ** -(torch.arange(4.0) + 0.5)]).double()
    torch.testing.assert_close(twelve, expected, rtol=2e-7, atol=0)


@pytest.mark.parametrize("num_heads", [8, 12, 24, 112])
@pytest.mark.parametrize("q_len,k_len", [(10, 10), (3, 10), (1, 17)])
def test_alibi_attention_equals_bloom_after_softmax(num_heads, q_len, k_len):
    pytest.importorskip("transformers")  # the oracle; transformers 5.23 needs Python 3.11+
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    batch, head_dim = 2, 8
    q = _randn(batch, num_heads, q_len, head_dim, seed=1, dtype=torch.float32)
    k = _randn(batch, num_heads, k_len, head_dim, seed=2, dtype=torch.float32)
    logits = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
    future = ref.relative_positions(q_len, k_len) > 0
    bloom = build_alibi_tensor(torch.ones(batch, k_len), num_heads, torch.float32)  # (B*H, 1, Lk): m * j
    bloom = bloom.reshape(batch, num_heads, 1, k_len)
    ours = ref.alibi_bias(num_heads, q_len, k_len)  # (1, H, Lq, Lk): -m |j - i|
    expected = (logits + bloom).masked_fill(future, float("-inf")).softmax(-1)
    got = (logits + ours).masked_fill(future, float("-inf")).softmax(-1)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    # the biases themselves differ: only the attention is the same
    assert not torch.allclose(ours.expand(batch, -1, -1, -1), bloom.expand(-1, -1, q_len, -1))


def test_alibi_bias_is_minus_slope_times_distance():
    bias = ref.alibi_bias(4, 3, 7)
    assert bias.shape == (1, 4, 3, 7) and bias.dtype == torch.float32
    slopes = ref.alibi_slopes(4)
    for h in range(4):
        for i in range(3):
            for j in range(7):
                assert bias[0, h, i, j] == -slopes[h] * abs(j - (4 + i))
    assert ref.alibi_bias(8, 5, 5, device="meta").device.type == "meta"


# ---- Shaw et al.: against a loop-by-loop version written here --------------------------------------------
def _shaw_loops(q, k, v, rel_k, rel_v, K, causal):
    """e_ij = q_i·(k_j + w^K[clip(j-i)+K]) / sqrt(d); z_i = sum_j alpha_ij (v_j + w^V[clip(j-i)+K]), pair by pair."""
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    out = torch.zeros_like(q)
    for b in range(B):
        for h in range(H):
            for i in range(Lq):
                pos_i = Lk - Lq + i  # queries aligned to the end
                logits, values = [], []
                for j in range(Lk):
                    row = max(-K, min(K, j - pos_i)) + K
                    score = float(q[b, h, i] @ (k[b, h, j] + rel_k[row])) / math.sqrt(d)
                    logits.append(float("-inf") if causal and j > pos_i else score)
                    values.append(v[b, h, j] + rel_v[row])
                alpha = torch.tensor(logits, dtype=q.dtype).softmax(0)
                out[b, h, i] = sum(a * val for a, val in zip(alpha, values))
    return out


@pytest.mark.parametrize("q_len,k_len,K,causal", [
    (5, 5, 2, False), (5, 5, 2, True), (3, 8, 2, True), (1, 6, 1, True), (4, 4, 10, False), (4, 6, 0, True),
])
def test_shaw_both_forms_equal_the_loops(q_len, k_len, K, causal):
    q, k, v = _randn(2, 3, q_len, 5, seed=1), _randn(2, 3, k_len, 5, seed=2), _randn(2, 3, k_len, 5, seed=3)
    rel_k, rel_v = _randn(2 * K + 1, 5, seed=4), _randn(2 * K + 1, 5, seed=5)
    expected = _shaw_loops(q, k, v, rel_k, rel_v, K, causal)
    for fn in (ref.shaw_attention, ref.shaw_attention_direct):
        got = fn(q, k, v, rel_k, rel_v, K, causal=causal)
        assert got.dtype == torch.float64
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-12, msg=fn.__name__)


def test_shaw_efficient_and_direct_have_the_same_gradients():
    q, k, v = (_randn(2, 2, 7, 4, seed=s).requires_grad_() for s in (1, 2, 3))
    rel_k, rel_v = (_randn(2 * 9 + 1, 4, seed=s).requires_grad_() for s in (4, 5))
    grads = []
    for fn in (ref.shaw_attention, ref.shaw_attention_direct):
        out = fn(q, k, v, rel_k, rel_v, 9, causal=True)
        grads.append(torch.autograd.grad((out * _randn(*out.shape, seed=6)).sum(), (q, k, v, rel_k, rel_v)))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    # causal, L = 7: only distances -6 .. 0 occur, so rows 3 .. 9 of the 19 get gradient, no others
    used = grads[0][3].abs().sum(-1) > 0
    assert torch.equal(used, (torch.arange(19) >= 3) & (torch.arange(19) <= 9))


class _Largest(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.nbytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.nbytes = max(self.nbytes, t.untyped_storage().nbytes())
        return out


def test_efficient_shaw_never_builds_a_five_dimensional_tensor():
    """The chapter's numbers, on the meta device: 8.6 GB for the direct form, L² floats per head for the other."""
    q, table = torch.empty(1, 8, 2048, 64, device="meta"), torch.empty(33, 64, device="meta")
    sizes = {}
    for fn in (ref.shaw_attention, ref.shaw_attention_direct):
        with _Largest() as rec:
            out = fn(q, q, q, table, table, 16, causal=True)
        assert out.shape == (1, 8, 2048, 64) and out.device.type == "meta"
        sizes[fn.__name__] = rec.nbytes
    assert sizes["shaw_attention_direct"] == 1 * 8 * 2048 * 2048 * 64 * 4  # 8.6 GB
    assert sizes["shaw_attention"] == 1 * 8 * 2048 * 2048 * 4  # the (B, H, L, L) logits are the largest


def test_shaw_rejects_bad_tables():
    q = torch.zeros(1, 1, 3, 4)
    with pytest.raises(ValueError, match="rel_k"):
        ref.shaw_attention(q, q, q, torch.zeros(4, 4), torch.zeros(5, 4), 2)
    with pytest.raises(ValueError, match="rel_v"):
        ref.shaw_attention_direct(q, q, q, torch.zeros(5, 4), torch.zeros(5, 3), 2)
    with pytest.raises(ValueError, match="max_distance"):
        ref.shaw_attention(q, q, q, torch.zeros(1, 4), torch.zeros(1, 4), -1)


# ---- relative positions and the learned bias -------------------------------------------------------
def test_relative_positions_by_hand_and_on_meta():
    assert ref.relative_positions(2, 4).tolist() == [[-2, -1, 0, 1], [-3, -2, -1, 0]]
    assert ref.relative_positions(3, 3).tolist() == [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]]
    assert ref.relative_positions(2, 4).dtype == torch.int64
    assert ref.relative_positions(2, 4, device="meta").device.type == "meta"
    for args, word in (((0, 3), "q_len"), ((3, 0), "k_len")):
        with pytest.raises(ValueError, match=word):
            ref.relative_positions(*args)


def test_relative_position_bias_reads_the_table_by_clipped_distance():
    torch.manual_seed(0)
    module = ref.RelativePositionBias(3, 2)
    table = module.bias.weight.detach()  # (5, 3)
    out = module(4, 6)
    assert out.shape == (1, 3, 4, 6)
    for i in range(4):
        for j in range(6):
            row = max(-2, min(2, j - (2 + i))) + 2
            assert torch.equal(out[0, :, i, j], table[row])
    assert [n for n, _ in module.named_parameters()] == ["bias.weight"]
    assert abs(ref.RelativePositionBias(16, 64).bias.weight.std().item() - 0.02) < 2e-3


def test_relative_position_bias_follows_the_module_device_and_dtype():
    module = ref.RelativePositionBias(4, 3)
    assert module.to(torch.float64)(3, 5).dtype == torch.float64
    assert module.to("meta")(3, 5).device.type == "meta"
    for args, word in (((0, 3), "num_heads"), ((4, -1), "max_distance")):
        with pytest.raises(ValueError, match=word):
            ref.RelativePositionBias(*args)


def test_relative_position_bias_trains_through_sdpa():
    torch.manual_seed(0)
    module = ref.RelativePositionBias(2, 3)
    q = torch.randn(1, 2, 5, 4)
    out = torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=module(5, 5))
    out.sum().backward()
    assert module.bias.weight.grad is not None and module.bias.weight.grad.abs().sum() > 0


# ---- mistakes, probes, self-checks -------------------------------------------------------------------
def _mistake_input(exercise):
    """(args, kwargs) on which every mistake of the exercise must differ from the reference."""
    if exercise in ("shaw_attention", "shaw_attention_direct"):
        K = 2
        return [_randn(2, 2, 7, 4, seed=1), _randn(2, 2, 7, 4, seed=2), _randn(2, 2, 7, 4, seed=3),
                _randn(2 * K + 1, 4, seed=4), _randn(2 * K + 1, 4, seed=5), K], {"causal": True}
    return {
        "relative_positions": ([3, 7], {}),
        "t5_bucket": ([torch.arange(-300, 301)], {"bidirectional": False}),
        "alibi_slopes": ([12], {}),
        "alibi_bias": ([12, 4, 6], {}),
    }[exercise]


def test_every_known_mistake_really_is_wrong():
    """A mistake that equals the reference would make its diagnosis fire on correct code."""
    ch03 = {name: m for name, m in MISTAKES.items() if chapter_of()[m.exercise] == "ch03"}
    assert len(ch03) == 20
    for name, mistake in ch03.items():
        if mistake.exercise == "RelativePositionBias":
            torch.manual_seed(0)
            wrong = mistake.impl(2, 2)(3, 7)
            torch.manual_seed(0)
            right = ref.RelativePositionBias(2, 2)(3, 7)
        else:
            args, kwargs = _mistake_input(mistake.exercise)
            wrong = mistake.impl(*args, **kwargs)
            right = getattr(ref, mistake.exercise)(*args, **kwargs)
        assert wrong.shape == right.shape, name
        assert not torch.allclose(wrong.double(), right.double(), atol=1e-3), name


def test_memory_capped_call_reports_time_and_memory_failures_in_words():
    from grader.hidden_probes import catalog

    CATALOG = catalog()

    def sleepy(x):
        time.sleep(5)
        return x

    def hungry(x):
        return x.new_zeros(1, 8, 2048, 2048, 64)  # 8.6 GB

    spec = {"t": "randn", "shape": [2, 3], "seed": 0}
    late = probes.run({"f": sleepy}, "memory_capped_call", {"args": [spec], "allowance_mib": 2048, "timeout_s": 1},
                      "f", CATALOG)
    assert late["error_type"] == "TimeoutError" and "still running after 1 s" in late["error"]
    big = probes.run({"f": hungry}, "memory_capped_call",
                     {"args": [spec], "allowance_mib": 512, "timeout_s": 20,
                      "known_sizes": [[[1, 8, 2048, 2048, 64], 4, "five dims"]]},
                     "f", CATALOG)
    assert big["error_type"] == "MemoryError"
    assert "tried to allocate 8.6 GB" in big["error"] and "(1, 8, 2048, 2048, 64) tensor, five dims" in big["error"]
    fine = probes.run({"f": lambda x: x * 2}, "memory_capped_call", {"args": [spec], "allowance_mib": 2048,
                                                                      "timeout_s": 20, "sample_step": 2}, "f", CATALOG)
    assert torch.equal(fine["out"], probes.build(spec)[..., ::2, :] * 2)


def test_the_reference_answer_at_scale_is_the_capped_childs_answer():
    """grader/reference.py computes the reference's answer with memory_capped_call.reference, in its own process:
    the same dict, key for key and value for value, as the capped child sends back, on the scale check itself."""
    from grader import reference
    from grader.hidden_probes import catalog

    scale = drawn(next(c for c in CHECKS if c.probe == "memory_capped_call"))  # a main check: inputs drawn
    in_process = reference.answer(scale)
    forked = probes.run(reference.namespace(), scale.probe, scale.params, scale.exercise, catalog())
    assert "error" not in forked and set(in_process) == set(forked)
    for key, value in forked.items():
        assert torch.equal(in_process[key], value) if isinstance(value, torch.Tensor) else in_process[key] == value
    assert forked["out"].shape == (1, 8, 2048 // scale.params["sample_step"], 64)


def test_the_reference_passes_its_self_checks_and_a_mistake_is_named():
    for exercise in ("relative_positions", "shaw_attention_direct", "shaw_attention", "RelativePositionBias",
                     "t5_bucket", "alibi_slopes", "alibi_bias"):
        check(exercise, getattr(ref, exercise), quiet=True)
    with pytest.raises(SelfCheckFailed) as info:
        check("shaw_attention", MISTAKES["shaw_unscaled"].impl, quiet=True)
    assert MISTAKES["shaw_unscaled"].message in str(info.value)


def test_the_scale_check_is_hidden_drawn_once_and_sized_to_separate_the_forms():
    """One check at scale, a main check: its inputs drawn for each student make it its own twin, so a grade runs the
    learner's code at L = 2048 once (a fixed input would need a twin of the same size: a second run)."""
    at_scale = [c for c in chapter_checks("ch03") if c.probe == "memory_capped_call"]
    assert len(at_scale) == 1 and [c for c in with_twins(CHECKS)[0] if c.probe == "memory_capped_call"] == at_scale
    scale = at_scale[0]
    assert not scale.public and scale.main and scale.exercise == "shaw_attention" and scale.points == 3
    assert scale.params["args"][0]["shape"] == [1, 8, 2048, 64]
    assert drawn(scale).params["args"][0]["seed"] != drawn(scale, student="another").params["args"][0]["seed"]
    # the (1, 8, 2048, 2048, 64) float32 tensor is well over the allowance; two gathered (L, L, d) tables fit under it
    allowance = scale.params["allowance_mib"] << 20
    assert 1 * 8 * 2048 * 2048 * 64 * 4 > 2.5 * allowance and allowance > 2.5 * 2048 * 2048 * 64 * 4
