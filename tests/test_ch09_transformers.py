"""Chapter 9 against transformers 5.23.0 on tiny configurations (no weights, no downloads): DeepseekV3Attention with
and without a cache, its softmax scale under YaRN; Llama4TextAttention's NoPE layers and their temperature, its
no_rope_layers and chunked masks; Gemma 3's per-layer rotary tables and sliding-window masks; gpt-oss's eager
attention with sinks; and the facts the chapter states about these configurations."""

import pytest
import torch

from posenc_ref import ch09_todays_models as ref

F32 = {"rtol": 1.3e-6, "atol": 1e-5}

transformers = pytest.importorskip("transformers")  # its models: on first use (tests/lazy_import.py)
from tests.lazy_import import Lazy  # noqa: E402

DynamicCache = Lazy("transformers", "DynamicCache")
chunked_causal_mask_function = Lazy("transformers.masking_utils", "chunked_causal_mask_function")
sdpa_mask = Lazy("transformers.masking_utils", "sdpa_mask")
sliding_window_causal_mask_function = Lazy("transformers.masking_utils", "sliding_window_causal_mask_function")
deepseek = Lazy("transformers.models.deepseek_v3.modeling_deepseek_v3")
DeepseekV3Config = Lazy("transformers.models.deepseek_v3.configuration_deepseek_v3", "DeepseekV3Config")
gemma3 = Lazy("transformers.models.gemma3.modeling_gemma3")
Gemma3TextConfig = Lazy("transformers.models.gemma3.configuration_gemma3", "Gemma3TextConfig")
gpt_oss = Lazy("transformers.models.gpt_oss.modeling_gpt_oss")
GptOssConfig = Lazy("transformers.models.gpt_oss.configuration_gpt_oss", "GptOssConfig")
llama4 = Lazy("transformers.models.llama4.modeling_llama4")
Llama4TextConfig = Lazy("transformers.models.llama4.configuration_llama4", "Llama4TextConfig")


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def additive(allowed):
    """A boolean (L, S) mask (True = may attend) as the (1, 1, L, S) float mask eager attention adds."""
    return torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)[None, None]


def causal(new, past=0):
    q = torch.arange(past, past + new)[:, None]
    return torch.arange(past + new)[None, :] <= q  # (L, P + L)


def softmax_attention(query, key, value, scaling, allowed):
    """Plain attention, (B, H, L, D): the part of every model's eager path that is not about positions."""
    scores = (query @ key.transpose(-2, -1)) * scaling
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ value


# ---- DeepSeek-V3: multi-head latent attention --------------------------------------------------------------------
def deepseek_attention(**rope):
    config = DeepseekV3Config(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=16,
                              kv_lora_rank=12, qk_nope_head_dim=8, qk_rope_head_dim=6, v_head_dim=5,
                              num_hidden_layers=1, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                    **rope})
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    attention = deepseek.DeepseekV3Attention(config, layer_idx=0).eval()
    with torch.no_grad():
        for p in attention.parameters():  # away from the initial ones (layer norms at 1)
            p.add_(0.3 * randn(*p.shape, seed=p.numel()))
    return config, attention, deepseek.DeepseekV3RotaryEmbedding(config)


def ours_deepseek(attention, x, cos, sin, past=None):
    """DeepseekV3Attention's forward with the chapter's position part: (output, (latents, k_rot cache))."""
    b, n, _ = x.shape
    heads, nope, rope, vdim = attention.num_heads, attention.qk_nope_head_dim, attention.qk_rope_head_dim, \
        attention.v_head_dim
    q = attention.q_b_proj(attention.q_a_layernorm(attention.q_a_proj(x))).view(b, n, heads, -1).transpose(1, 2)
    latent, k_rot = attention.kv_a_proj_with_mqa(x).split([attention.kv_lora_rank, rope], dim=-1)
    latent = attention.kv_a_layernorm(latent)  # (B, L, d_c): what the cache holds, with k_rot
    past_latent, past_k_rot = past if past is not None else (latent[:, :0], None)
    latents = torch.cat((past_latent, latent), dim=1)  # (B, S, d_c)
    kv = attention.kv_b_proj(latents).view(b, latents.shape[1], heads, nope + vdim).transpose(1, 2)
    k_nope, value = kv.split([nope, vdim], dim=-1)
    query, key, k_rot_cache = ref.mla_query_key(q, k_nope, k_rot[:, None], cos, sin, past_k_rot)
    scale = ref.mla_softmax_scale(nope, rope, vdim, **attention_yarn(attention))
    out = softmax_attention(query, key, value, scale, causal(n, latents.shape[1] - n))
    return attention.o_proj(out.transpose(1, 2).reshape(b, n, -1)), (latents, k_rot_cache)


def attention_yarn(attention):
    rope = attention.config.rope_parameters
    if rope.get("rope_type", "default") == "default":
        return {}
    return {"factor": rope["factor"], "mscale_all_dim": rope.get("mscale_all_dim", 0.0)}


def test_rope_interleave_then_half_rotation_is_apply_rotary_pos_emb_interleave():
    config, _, rotary = deepseek_attention()
    positions = torch.arange(7)[None]
    q, k = randn(2, 3, 7, 6, seed=1), randn(2, 1, 7, 6, seed=2)
    cos, sin = rotary(q, positions)  # (1, 7, 6), half layout
    theirs_q, theirs_k = deepseek.apply_rotary_pos_emb_interleave(q, k, cos, sin)
    torch.testing.assert_close(ref.apply_rope_half(ref.rope_interleave(q), cos[0], sin[0]), theirs_q, **F32)
    torch.testing.assert_close(ref.apply_rope_half(ref.rope_interleave(k), cos[0], sin[0]), theirs_k, **F32)


def test_rope_interleave_is_deepseeks_view_transpose_reshape():
    x = randn(2, 3, 5, 8)
    b, h, s, d = x.shape
    torch.testing.assert_close(ref.rope_interleave(x), x.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d),
                               rtol=0, atol=0)


@pytest.mark.parametrize("rope", [{}, {"rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                       "original_max_position_embeddings": 64, "beta_fast": 32.0, "beta_slow": 1.0}])
def test_mla_without_cache_equals_deepseek_v3_attention(rope):
    config, attention, rotary = deepseek_attention(**rope)
    x, positions = randn(2, 6, 32, seed=3), torch.arange(6)[None]
    cos, sin = rotary(x, positions)
    with torch.no_grad():
        theirs, _ = attention(x, (cos, sin), additive(causal(6)))
        ours, _ = ours_deepseek(attention, x, cos[0], sin[0])
    torch.testing.assert_close(ours, theirs, **F32)


def test_mla_with_cache_equals_deepseek_v3_attention_and_caches_the_same_two_tensors():
    config, attention, rotary = deepseek_attention()
    x = randn(1, 9, 32, seed=4)
    cache = DynamicCache(config=config)
    with torch.no_grad():
        cos, sin = rotary(x[:, :5], torch.arange(5)[None])
        attention(x[:, :5], (cos, sin), additive(causal(5)), past_key_values=cache)
        _, past = ours_deepseek(attention, x[:, :5], cos[0], sin[0])
        cos, sin = rotary(x[:, 5:], torch.arange(5, 9)[None])
        theirs, _ = attention(x[:, 5:], (cos, sin), additive(causal(4, 5)), past_key_values=cache)
        ours, (latents, k_rot) = ours_deepseek(attention, x[:, 5:], cos[0], sin[0], past)
    torch.testing.assert_close(ours, theirs, **F32)
    # per token and layer the cache holds kv_lora_rank + qk_rope_head_dim numbers, each as a single head
    layer = cache.layers[0]
    torch.testing.assert_close(layer.keys[:, 0], latents, **F32)
    torch.testing.assert_close(layer.values, k_rot, **F32)
    assert layer.keys.shape[-1] + layer.values.shape[-1] == config.kv_lora_rank + config.qk_rope_head_dim


@pytest.mark.parametrize("factor,mscale_all_dim", [(40.0, 1.0), (4.0, 0.707), (1.0, 1.0)])
def test_mla_softmax_scale_equals_deepseek_v3_scaling(factor, mscale_all_dim):
    rope = {"rope_type": "yarn", "factor": factor, "mscale": 1.0, "mscale_all_dim": mscale_all_dim,
            "original_max_position_embeddings": 64}
    config, attention, _ = deepseek_attention(**rope)
    assert ref.mla_softmax_scale(8, 6, 5, factor, mscale_all_dim) == pytest.approx(attention.scaling, rel=1e-12)
    plain = deepseek_attention()[1]
    assert ref.mla_softmax_scale(8, 6, 5) == pytest.approx(plain.scaling, rel=1e-12)


def test_deepseek_v3_defaults_the_chapter_states():
    config = DeepseekV3Config()
    assert (config.kv_lora_rank, config.qk_rope_head_dim, config.qk_nope_head_dim, config.v_head_dim,
            config.num_attention_heads, config.rope_interleave) == (512, 64, 128, 128, 128, True)


# ---- Llama 4: NoPE layers, their temperature, chunked attention ------------------------------------------------
@pytest.mark.parametrize("layers,interval", [(12, 4), (48, 4), (10, 3), (7, 1)])
def test_no_rope_layers_equals_llama4_config(layers, interval):
    config = Llama4TextConfig(num_hidden_layers=layers, no_rope_layer_interval=interval)
    assert ref.no_rope_layers(layers, interval) == config.no_rope_layers
    # the RoPE layers (1) are the chunked ones
    assert [t == "chunked_attention" for t in config.layer_types] == [bool(v) for v in config.no_rope_layers]


def test_nope_layer_temperature_equals_llama4_text_attention_with_and_without_cache():
    config = Llama4TextConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, head_dim=8,
                              num_hidden_layers=4, floor_scale=4, attn_scale=0.3, attention_chunk_size=4)
    config._attn_implementation = "eager"
    layer = 3  # no_rope_layers[3] == 0: a NoPE layer
    assert config.no_rope_layers[layer] == 0
    torch.manual_seed(0)
    attention = llama4.Llama4TextAttention(config, layer).eval()
    x = randn(2, 13, 32, seed=5)
    cache = DynamicCache(config=config)

    def ours(tokens, past):
        b, n, _ = tokens.shape
        seen = x[:, :past + n]  # the cache's tokens and the new ones
        tau = ref.nope_layer_temperature(torch.arange(past, past + n), 4, 0.3)  # (L,)
        q = heads_of(attention.q_proj(tokens)) * tau[:, None]  # (B, H, L, 8)
        keys, values = heads_of(attention.k_proj(seen)), heads_of(attention.v_proj(seen))
        out = softmax_attention(q, keys, values, 8 ** -0.5, causal(n, past))
        return attention.o_proj(out.transpose(1, 2).reshape(b, n, -1))

    with torch.no_grad():
        theirs, _ = attention(x[:, :10], None, additive(causal(10)), past_key_values=cache)
        torch.testing.assert_close(ours(x[:, :10], 0), theirs, **F32)
        theirs, _ = attention(x[:, 10:], None, additive(causal(3, 10)), past_key_values=cache)
        torch.testing.assert_close(ours(x[:, 10:], 10), theirs, **F32)


def heads_of(t):
    """(B, L, 4·8) -> (B, 4, L, 8)"""
    return t.view(t.shape[0], t.shape[1], 4, 8).transpose(1, 2)


def test_nope_layer_temperature_at_llama4_defaults():
    config = Llama4TextConfig()
    positions = torch.tensor([0, 8190, 8191, 16383, 1048575])
    tau = ref.nope_layer_temperature(positions, config.floor_scale, config.attn_scale)
    expected = torch.log1p(torch.floor((positions.double() + 1) / 8192)) * 0.1 + 1
    torch.testing.assert_close(tau, expected.float(), **F32)
    assert tau[:2].tolist() == [1.0, 1.0] and tau[2] > 1.0  # the factor first rises at position 8191


@pytest.mark.parametrize("new,chunk,past", [(12, 4, 0), (5, 4, 7), (6, 16, 3), (1, 3, 10), (9, 1, 2)])
def test_chunked_causal_mask_equals_transformers(new, chunk, past):
    theirs = sdpa_mask(batch_size=1, q_length=new, kv_length=past + new, q_offset=past,
                       mask_function=chunked_causal_mask_function(chunk, torch.zeros(1, dtype=torch.long)),
                       allow_is_causal_skip=False)
    assert torch.equal(ref.chunked_causal_mask(new, chunk, past), theirs[0, 0])


# ---- Gemma 3: local and global layers --------------------------------------------------------------------------
@pytest.mark.parametrize("head_dim,factor", [(16, 8.0), (256, 8.0), (32, 1.0)])
def test_layer_rope_inv_freq_equals_gemma3_rotary_embedding(head_dim, factor):
    full = {"rope_type": "linear", "factor": factor} if factor != 1.0 else {"rope_type": "default"}
    config = Gemma3TextConfig(head_dim=head_dim, num_hidden_layers=12, sliding_window_pattern=6,
                              rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                               "full_attention": {**full, "rope_theta": 1000000.0}})
    rotary = gemma3.Gemma3RotaryEmbedding(config)
    ours = ref.layer_rope_inv_freq(config.layer_types, head_dim, 1e6, 1e4, factor)
    assert len(ours) == 12
    for layer_type, inv_freq in zip(config.layer_types, ours):
        torch.testing.assert_close(inv_freq, getattr(rotary, f"{layer_type}_inv_freq"), rtol=0, atol=0)
    # five local layers, then a global one
    assert config.layer_types[:6] == ["sliding_attention"] * 5 + ["full_attention"]


def test_gemma3_default_bases_the_chapter_states():
    config = Gemma3TextConfig()
    assert config.rope_parameters["sliding_attention"]["rope_theta"] == 10000.0
    assert config.rope_parameters["full_attention"]["rope_theta"] == 1000000.0


@pytest.mark.parametrize("new,window,past", [(10, 4, 0), (4, 3, 6), (1, 5, 20), (7, 1, 0), (3, 50, 4)])
def test_sliding_window_mask_equals_transformers(new, window, past):
    theirs = sdpa_mask(batch_size=1, q_length=new, kv_length=past + new, q_offset=past,
                       mask_function=sliding_window_causal_mask_function(window), allow_is_causal_skip=False)
    assert torch.equal(ref.sliding_window_mask(new, window, past), theirs[0, 0])


# ---- gpt-oss: attention sinks -----------------------------------------------------------------------------------
def gpt_oss_attention(heads=3):
    config = GptOssConfig(hidden_size=16, num_attention_heads=heads, num_key_value_heads=heads, head_dim=8,
                          num_hidden_layers=2)
    attention = gpt_oss.GptOssAttention(config, layer_idx=0).eval()
    with torch.no_grad():
        attention.sinks.copy_(randn(heads, seed=9) * 2)
    return config, attention


@pytest.mark.parametrize("new,keys,masked", [(4, 6, "causal"), (5, 5, None), (3, 7, "random")])
def test_attention_with_sinks_equals_gpt_oss_eager_attention(new, keys, masked):
    config, attention = gpt_oss_attention()
    q, k, v = randn(2, 3, new, 8, seed=1), randn(2, 3, keys, 8, seed=2), randn(2, 3, keys, 8, seed=3)
    if masked == "causal":
        allowed = causal(new, keys - new)
    elif masked == "random":
        allowed = torch.rand(new, keys, generator=torch.Generator().manual_seed(4)) < 0.6
        allowed[:, 0] = True
    else:
        allowed = torch.ones(new, keys, dtype=torch.bool)
    with torch.no_grad():
        theirs, _ = gpt_oss.eager_attention_forward(attention, q, k, v, additive(allowed), attention.scaling)
        ours = ref.attention_with_sinks(q, k, v, attention.sinks, None if masked is None else allowed,
                                        attention.scaling)
    torch.testing.assert_close(ours, theirs.transpose(1, 2), **F32)


def test_gpt_oss_configuration_the_chapter_states():
    config = GptOssConfig(num_hidden_layers=4)
    assert config.layer_types == ["sliding_attention", "full_attention"] * 2
    assert config.sliding_window == 128
    rope = config.rope_parameters
    assert (rope["rope_type"], rope["factor"], rope["original_max_position_embeddings"]) == ("yarn", 32.0, 4096)
