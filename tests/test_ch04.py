"""Chapter 4: the reference against transformers 5.23.0, Meta's complex-number RoPE (written here),
explicit rotation matrices in float64, and RoPE's properties."""

import math

import pytest
import torch
import torch.nn.functional as F

import posenc_ref as ref
from grader.checks.ch04 import ACCEPT, REJECT
from grader.mistakes import MISTAKES

transformers = pytest.importorskip("transformers")  # its models: on first use (tests/lazy_import.py)
from tests.lazy_import import Lazy  # noqa: E402

GPTNeoXConfig, LlamaConfig = Lazy("transformers", "GPTNeoXConfig"), Lazy("transformers", "LlamaConfig")
neox = Lazy("transformers.models.gpt_neox.modeling_gpt_neox")
llama = Lazy("transformers.models.llama.modeling_llama")

# float32 rounding: what two correct float32 computations of the same numbers may differ by
F32 = {"rtol": 1.3e-6, "atol": 1e-5}


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def llama_cos_sin(head_dim, theta, position_ids, heads=2):
    config = LlamaConfig(hidden_size=heads * head_dim, num_attention_heads=heads, num_key_value_heads=heads,
                         rope_theta=theta, max_position_embeddings=8192)
    return llama.LlamaRotaryEmbedding(config)(torch.zeros(1), position_ids)


def half_rotation64(position, head_dim, base=10000.0):
    """The block-diagonal rotation R_m of the half layout as an explicit (d, d) float64 matrix."""
    r = torch.zeros(head_dim, head_dim, dtype=torch.float64)
    half = head_dim // 2
    for i in range(half):
        angle = position * base ** (-2 * i / head_dim)
        c, s = math.cos(angle), math.sin(angle)
        r[i, i], r[i, i + half], r[i + half, i], r[i + half, i + half] = c, -s, s, c
    return r


def meta_rope(x, position_ids, base=10000.0):
    """Meta's LLaMA reference (precompute_freqs_cis + apply_rotary_emb), for x laid out (B, H, L, D)."""
    d = x.shape[-1]
    freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].float() / d))
    freqs = position_ids[..., None].float() * freqs  # (L, d/2) or (B, L, d/2)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    if freqs_cis.dim() == 3:
        freqs_cis = freqs_cis[:, None]
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)


# ---- against transformers ------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 5, 8), (7, 64), (2,)])
def test_rotate_half_matches_transformers(shape):
    x = randn(*shape)
    torch.testing.assert_close(ref.rotate_half(x), llama.rotate_half(x), rtol=0, atol=0)


@pytest.mark.parametrize("head_dim,theta", [(64, 10000.0), (128, 500000.0), (128, 1e6), (16, 10000.0)])
def test_rope_cos_sin_matches_llama_rotary_embedding(head_dim, theta):
    position_ids = torch.randint(0, 8192, (3, 40), generator=torch.Generator().manual_seed(1))
    want_cos, want_sin = llama_cos_sin(head_dim, theta, position_ids)
    cos, sin = ref.rope_cos_sin(position_ids, head_dim, theta)
    assert cos.dtype == torch.float32 and cos.shape == (3, 40, head_dim)
    torch.testing.assert_close(cos, want_cos, **F32)
    torch.testing.assert_close(sin, want_sin, **F32)
    torch.testing.assert_close(ref.rope_inv_freq(head_dim, theta),
                               llama.LlamaRotaryEmbedding.compute_default_rope_parameters(
                                   LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2,
                                               rope_theta=theta))[0], **F32)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, F32), (torch.bfloat16, {"rtol": 1.6e-2, "atol": 1.6e-2})])
def test_apply_rope_matches_apply_rotary_pos_emb(dtype, tol):
    q, k = randn(2, 4, 33, 64, seed=1, dtype=dtype), randn(2, 4, 33, 64, seed=2, dtype=dtype)
    position_ids = torch.stack((torch.arange(33), torch.arange(100, 133)))  # (B, L)
    cos, sin = llama_cos_sin(64, 10000.0, position_ids)  # float32 (B, L, D)
    want_q, want_k = llama.apply_rotary_pos_emb(q, k, cos.to(dtype), sin.to(dtype))
    got_q, got_k = ref.apply_rope(q, cos, sin), ref.apply_rope(k, cos, sin)
    assert got_q.dtype == dtype
    torch.testing.assert_close(got_q, want_q, **tol)
    torch.testing.assert_close(got_k, want_k, **tol)
    # (L, D) tables broadcast over the batch as well as the heads
    want_q, _ = llama.apply_rotary_pos_emb(q, k, cos[:1].to(dtype), sin[:1].to(dtype))
    torch.testing.assert_close(ref.apply_rope(q, cos[0], sin[0]), want_q, **tol)


@pytest.mark.parametrize("hidden,heads,pct", [(64, 4, 0.25), (160, 2, 0.4)])  # GPT-NeoX; Phi-2's 0.4 of 80
def test_partial_rotary_matches_gpt_neox(hidden, heads, pct):
    config = GPTNeoXConfig(hidden_size=hidden, num_attention_heads=heads, rotary_pct=pct, rotary_emb_base=10000)
    position_ids = torch.arange(3, 20)[None]
    cos, sin = neox.GPTNeoXRotaryEmbedding(config)(torch.zeros(1), position_ids)
    rotary = int(hidden // heads * pct)
    assert cos.shape[-1] == rotary < hidden // heads
    # the frequency ladder runs over the rotated width R: base^(-2i/R), not the first R/2 of a d-wide ladder
    head_ladder = ref.rope_inv_freq(hidden // heads)[: rotary // 2]
    neox_ladder = neox.GPTNeoXRotaryEmbedding(config).inv_freq
    torch.testing.assert_close(neox_ladder, ref.rope_inv_freq(rotary), **F32)
    assert not torch.allclose(neox_ladder, head_ladder)
    mine_cos, mine_sin = ref.rope_cos_sin(position_ids, rotary)
    torch.testing.assert_close(mine_cos, cos, **F32)
    torch.testing.assert_close(mine_sin, sin, **F32)
    q, k = randn(1, heads, 17, hidden // heads, seed=3), randn(1, heads, 17, hidden // heads, seed=4)
    want_q, want_k = neox.apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(ref.apply_rope(q, cos, sin), want_q, **F32)
    torch.testing.assert_close(ref.apply_rope(k, cos, sin), want_k, **F32)
    torch.testing.assert_close(ref.apply_rope(q, cos, sin)[..., rotary:], q[..., rotary:], rtol=0, atol=0)


def test_rope_attention_matches_llama_attention():
    """The same weights in transformers' LlamaAttention (SDPA, causal) and in RoPEAttention."""
    d_model, heads = 64, 4
    config = LlamaConfig(hidden_size=d_model, num_attention_heads=heads, num_key_value_heads=heads,
                         attention_bias=False, rope_theta=500000.0)
    config._attn_implementation = "sdpa"
    theirs = llama.LlamaAttention(config, layer_idx=0).eval()
    mine = ref.RoPEAttention(d_model, heads, base=500000.0).eval()
    mine.load_state_dict(theirs.state_dict())
    x = randn(2, 9, d_model, seed=5)
    position_ids = torch.arange(9)[None].expand(2, -1)
    with torch.no_grad():
        want, _ = theirs(x, position_embeddings=llama_cos_sin(d_model // heads, 500000.0, position_ids),
                         attention_mask=None)
        got, _ = mine(x, position_ids=position_ids)
    torch.testing.assert_close(got, want, **F32)


# ---- the interleaved layout and the permutation ----------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [(torch.float32, F32), (torch.bfloat16, {"rtol": 0, "atol": 0})])
def test_interleaved_matches_metas_complex_implementation(dtype, tol):
    x = randn(2, 3, 50, 32, seed=6, dtype=dtype)
    for position_ids, base in ((torch.arange(50), 10000.0), (torch.randint(0, 4096, (2, 50)), 1e6)):
        got = ref.apply_rope_interleaved(x, position_ids, base)
        assert got.dtype == dtype
        torch.testing.assert_close(got, meta_rope(x, position_ids, base), **tol)


@pytest.mark.parametrize("head_dim", [2, 8, 64, 128])
def test_permutation_turns_interleaved_into_half_layout(head_dim):
    perm = ref.interleaved_to_half_perm(head_dim)
    assert perm.dtype == torch.long and sorted(perm.tolist()) == list(range(head_dim))
    x = randn(2, 2, 300, head_dim, seed=7)
    positions = torch.arange(1748, 2048)
    half = ref.apply_rope(x[..., perm], *ref.rope_cos_sin(positions, head_dim))
    torch.testing.assert_close(half, ref.apply_rope_interleaved(x, positions)[..., perm], rtol=1e-5, atol=1e-4)


def test_converted_meta_checkpoint_gives_the_same_attention():
    """Meta-layout attention (complex RoPE) vs RoPEAttention loaded with W_q, W_k rows permuted per head
    the way transformers' convert_llama_weights_to_hf.py does (W_v, W_o untouched)."""
    d_model, heads, seq = 64, 4, 11
    w = {name: randn(d_model, d_model, seed=n) / 8 for n, name in enumerate(("wq", "wk", "wv", "wo"))}

    def permute(weight, n_heads=heads, dim1=d_model, dim2=d_model):  # from the conversion script
        return weight.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)

    x = randn(2, seq, d_model, seed=9)

    def split(t):
        return t.view(2, seq, heads, d_model // heads).transpose(1, 2)

    positions = torch.arange(seq)
    q, k = meta_rope(split(x @ w["wq"].T), positions), meta_rope(split(x @ w["wk"].T), positions)
    want = F.scaled_dot_product_attention(q, k, split(x @ w["wv"].T), is_causal=True)
    want = want.transpose(1, 2).reshape(2, seq, d_model) @ w["wo"].T

    layer = ref.RoPEAttention(d_model, heads)
    layer.load_state_dict({"q_proj.weight": permute(w["wq"]), "k_proj.weight": permute(w["wk"]),
                           "v_proj.weight": w["wv"], "o_proj.weight": w["wo"]})
    with torch.no_grad():
        got, _ = layer(x)
    torch.testing.assert_close(got, want, **F32)
    # the script's permutation is ours, head by head
    rows = (torch.arange(heads)[:, None] * 16 + ref.interleaved_to_half_perm(16)).flatten()
    torch.testing.assert_close(permute(w["wq"]), w["wq"][rows], rtol=0, atol=0)


# ---- properties -------------------------------------------------------------------------------------
def test_apply_rope_is_the_block_diagonal_rotation():
    head_dim, positions = 16, [0, 1, 7, 300, 2047]
    x = randn(1, 1, len(positions), head_dim, seed=10)
    got = ref.apply_rope(x, *ref.rope_cos_sin(torch.tensor(positions), head_dim))[0, 0].double()
    for row, p in enumerate(positions):
        want = half_rotation64(p, head_dim) @ x[0, 0, row].double()
        torch.testing.assert_close(got[row], want, rtol=0, atol=1e-6 + 3e-7 * p)


def test_norms_are_kept_and_scores_depend_only_on_the_distance():
    head_dim, seq = 64, 512
    q, k = randn(3, 1, 1, head_dim, seed=11), randn(3, 1, 1, head_dim, seed=12)
    cos, sin = ref.rope_cos_sin(torch.arange(seq), head_dim)
    fq = ref.apply_rope(q.expand(-1, 1, seq, -1), cos, sin)[:, 0].double()  # (3, L, d)
    fk = ref.apply_rope(k.expand(-1, 1, seq, -1), cos, sin)[:, 0].double()
    torch.testing.assert_close(fq.norm(dim=-1), q[:, 0].double().norm(dim=-1).expand(-1, seq), rtol=1e-6, atol=0)
    scores = fq @ fk.transpose(1, 2)  # (3, L, L)
    # g(q, k, n - m) = q^T R_{n-m} k, from the explicit float64 rotation
    for m, n in ((3, 1), (10, 8), (500, 498), (0, 511), (511, 0), (200, 300)):
        want = torch.stack([q[b, 0, 0].double() @ half_rotation64(n - m, head_dim) @ k[b, 0, 0].double()
                            for b in range(3)])
        torch.testing.assert_close(scores[:, m, n], want, rtol=0, atol=1e-4)


def test_the_seeds_layout_mix_breaks_both_properties():
    """Known error 1 of the seed tutorials: rotate_half with repeat_interleave tables."""
    mix = MISTAKES["cos_sin_interleaved"].impl
    q, k = randn(1, 1, 1, 8, seed=13), randn(1, 1, 1, 8, seed=14)
    positions = torch.tensor([3, 1, 10, 8])
    cos, sin = mix(positions, 8)
    fq = ref.apply_rope(q.expand(1, 1, 4, 8), cos, sin)[0, 0]
    fk = ref.apply_rope(k.expand(1, 1, 4, 8), cos, sin)[0, 0]
    assert (fq.norm(dim=-1) - q.norm()).abs().max() > 1e-2
    assert abs(fq[0] @ fk[1] - fq[2] @ fk[3]) > 1e-2
    cos, sin = ref.rope_cos_sin(positions, 8)  # the fix: cat(freqs, freqs)
    fq = ref.apply_rope(q.expand(1, 1, 4, 8), cos, sin)[0, 0]
    fk = ref.apply_rope(k.expand(1, 1, 4, 8), cos, sin)[0, 0]
    assert abs(fq[0] @ fk[1] - fq[2] @ fk[3]) < 1e-5


def test_reference_property_test_on_the_whole_catalogue_and_on_transformers():
    from grader import hidden_probes

    CANDIDATES = hidden_probes.catalog()["relative_property"].keywords["table"]  # public and hidden, merged

    for head_dim in (8, 64):
        for name in ACCEPT:
            assert ref.check_relative_property(CANDIDATES[name], head_dim), (name, head_dim)
        for name in REJECT:
            assert not ref.check_relative_property(CANDIDATES[name], head_dim), (name, head_dim)

    def hf_rope(x, position_ids):
        cos, sin = llama_cos_sin(x.shape[-1], 10000.0, position_ids[None])
        return llama.apply_rotary_pos_emb(x, x, cos, sin)[0]

    assert ref.check_relative_property(hf_rope, 32)
    assert not ref.check_relative_property(lambda x, p: ref.apply_rope(x, *MISTAKES["cos_sin_interleaved"].impl(p, 32)),
                                           32)


# ---- the attention layer -----------------------------------------------------------------------------
def _decode(layer, x, sizes, **kw):
    outs, cache, start = [], None, 0
    for size in sizes:
        out, cache = layer(x[:, start:start + size], kv_cache=cache, **kw)
        outs.append(out)
        start += size
    return torch.cat(outs, dim=1), cache


def test_decoding_with_the_cache_equals_the_full_forward_pass():
    torch.manual_seed(0)
    layer = ref.RoPEAttention(64, 4).eval()
    x = randn(2, 16, 64, seed=15)
    with torch.no_grad():
        full, (k_full, v_full) = layer(x)
        for sizes in ([1] * 16, [5] + [1] * 11, [4, 3, 3, 6]):
            out, (k, v) = _decode(layer, x, sizes)
            torch.testing.assert_close(out, full, **F32)
            torch.testing.assert_close(k, k_full, **F32)  # the cache holds rotated keys
            torch.testing.assert_close(v, v_full, **F32)
    assert k.shape == (2, 4, 16, 16)


def test_a_constant_shift_of_positions_changes_only_rounding():
    torch.manual_seed(0)
    layer = ref.RoPEAttention(32, 2).eval()
    x = randn(2, 10, 32, seed=16)
    with torch.no_grad():
        base, _ = layer(x)
        shifted, _ = layer(x, position_ids=torch.arange(1000, 1010))
        gaps, _ = layer(x, position_ids=torch.tensor([0, 1, 2, 3, 9, 10, 11, 20, 21, 22]))
    torch.testing.assert_close(shifted, base, rtol=0, atol=2e-4)
    assert (gaps - base).abs().max() > 1e-2  # other distances, other scores


def test_gradients_flow_through_apply_rope():
    x = randn(1, 2, 3, 8, seed=17, dtype=torch.float64).requires_grad_()
    cos, sin = ref.rope_cos_sin(torch.arange(3), 6)  # partial rotary: 6 of 8
    assert torch.autograd.gradcheck(lambda t: ref.apply_rope(t, cos.double(), sin.double()), (x,))
    layer = ref.RoPEAttention(16, 2)
    out, _ = layer(randn(2, 5, 16, seed=18))
    out.square().sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.parameters())


def test_the_layer_runs_on_the_meta_device():
    layer = ref.RoPEAttention(32, 4).to("meta")
    out, (k, v) = layer(torch.empty(2, 3, 32, device="meta"),
                        kv_cache=(torch.empty(2, 4, 5, 8, device="meta"), torch.empty(2, 4, 5, 8, device="meta")))
    assert out.device.type == "meta" and k.shape == (2, 4, 8, 8)


@pytest.mark.parametrize("call,word", [
    (lambda: ref.rope_inv_freq(7), "head_dim=7"),
    (lambda: ref.rope_cos_sin(torch.arange(3), 0), "head_dim=0"),
    (lambda: ref.rotate_half(torch.zeros(3, 5)), "size 5"),
    (lambda: ref.apply_rope(torch.zeros(1, 1, 2, 4), torch.zeros(2, 6), torch.zeros(2, 6)), "R=6"),
    (lambda: ref.apply_rope_interleaved(torch.zeros(1, 1, 2, 5), torch.arange(2)), "head_dim=5"),
    (lambda: ref.interleaved_to_half_perm(3), "head_dim=3"),
    (lambda: ref.RoPEAttention(30, 4), "num_heads=4"),
    (lambda: ref.RoPEAttention(12, 4), "head_dim=3"),
])
def test_bad_input_raises_value_error_naming_it(call, word):
    with pytest.raises(ValueError, match=word):
        call()
