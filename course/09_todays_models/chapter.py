# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Chapter 9 — Positions in today's large models
#
# The open models people run in 2025 still use chapter 4's rotation, but rarely alone and rarely on every
# layer. Four designs show what changed, each built here the way transformers 5.23 computes it:
#
# * **Decoupled RoPE in multi-head latent attention** (DeepSeek-V2 and V3, DeepSeek-AI 2024): keys and values
#   are cached as one small latent vector per token, and RoPE had to move out of the way of that compression;
# * **NoPE layers and an attention temperature** (Llama 4, Meta 2025: a model card and code, no paper): every
#   fourth layer has no position at all, and its queries are sharpened at long context;
# * **local and global bases** (Gemma 3, Gemma Team 2025): sliding-window layers with a small base, global layers
#   with a large base and linear scaling;
# * **attention sinks** (gpt-oss, OpenAI 2025): a learned logit per head that takes part in the softmax and is
#   dropped after it, beside YaRN (Peng et al., 2023) and sliding windows on every other layer.
#
# You will implement `rope_interleave`, `mla_query_key`, `mla_softmax_scale`, `nope_layer_temperature`,
# `no_rope_layers`, `chunked_causal_mask`, `layer_rope_inv_freq`, `sliding_window_mask` and
# `attention_with_sinks`; the tests compare each with transformers' `DeepseekV3Attention`, `Llama4TextAttention`,
# Gemma 3's rotary embedding and masks, and gpt-oss's eager attention on tiny configurations. Masks follow
# transformers: `True` means "may attend".

# %%
#| export
import math

import torch

# %%
import matplotlib.pyplot as plt

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 9.1 Why RoPE does not fit multi-head latent attention
#
# Multi-head latent attention (MLA, DeepSeek-AI, 2024) caches one latent vector $c_s \in \mathbb{R}^{d_c}$ per
# token $s$ instead of every head's key and value; head $i$'s key is an up-projection of it, $k_{s,i} =
# W^{UK}_i c_s$. Without positions, the score of query $t$ for key $s$ in head $i$ is
#
# $$q_{t,i}^\top k_{s,i} = q_{t,i}^\top W^{UK}_i\, c_s = \big((W^{UK}_i)^\top q_{t,i}\big)^\top c_s,$$
#
# so $W^{UK}_i$ can be **absorbed** into the query side: each query is projected once into the latent space and
# dotted with the cached latents, and no key is ever rebuilt. Now put RoPE on the whole head. The query is rotated
# by $R_t$ and the key by $R_s$, and the score becomes
#
# $$(R_t q_{t,i})^\top R_s W^{UK}_i c_s = q_{t,i}^\top R_{s-t}\, W^{UK}_i\, c_s .$$
#
# The rotation sits **between** the query and the up-projection, and it depends on the two positions: there is
# no single matrix to absorb any more. Every cached latent would have to be up-projected and rotated again for
# every new query, or the full keys cached, which is what MLA set out to avoid.
#
# The fix is to give the position its own small channels. Each query head gets a second, rotary part
# $q^R_{t,i} \in \mathbb{R}^{d_R}$, and all heads share **one** rotary key $k^R_s = W^{KR} h_s$, computed from the
# token's hidden state and rotated once:
#
# $$q_{t,i} = [\,q^C_{t,i} ;\; R_t q^R_{t,i}\,], \qquad k_{s,i} = [\,W^{UK}_i c_s ;\; R_s k^R_s\,],$$
# $$q_{t,i}^\top k_{s,i} = \underbrace{q^{C\top}_{t,i} W^{UK}_i c_s}_{\text{absorbable}}
#   + \underbrace{(R_t q^R_{t,i})^\top R_s k^R_s}_{\text{RoPE, chapter 4}} .$$
#
# The cache holds, per token and layer, the latent and the rotated shared key: $d_c + d_R$ numbers. DeepSeek-V3
# (transformers' defaults for `DeepseekV3Config`): $d_c$ = `kv_lora_rank` = 512, $d_R$ = `qk_rope_head_dim` = 64,
# so 576 numbers, against $128 \times (192 + 128) = 40\,960$ for 128 heads caching keys of
# `qk_nope_head_dim + qk_rope_head_dim` = 192 and values of `v_head_dim` = 128. transformers' `DeepseekV3Attention`
# caches exactly these two (the normalised latent `kv_nope` and the rotated `k_rot`, each as a single head) and
# up-projects the latent after reading the cache.
#
# Two details of the code decide the numbers. DeepSeek's checkpoints lay each rotary part out in **interleaved
# pairs** $(x_0, x_1), (x_2, x_3), \dots$ (chapter 4's Meta layout), while the cos and sin tables are in the half
# layout `cat(freqs, freqs)`; with `rope_interleave=True` (the default), `apply_rotary_pos_emb_interleave` rotates
# pair $(x_{2j}, x_{2j+1})$ by angle $j$ and writes the result in the **half layout**: first coordinates first,
# then second ones. It is the permutation of chapter 4, $x \mapsto x[0, 2, 4, \dots, 1, 3, 5, \dots]$, followed by
# the usual rotation. And the query's nope part comes **first**, its rope part last.

# %% [markdown]
# ### Exercise 9.1 — `rope_interleave(x)`
#
# `x` is $(\dots, d)$ with $d$ even, pairs interleaved. Return $(\dots, d)$ in the half layout: coordinate $2j$
# moved to $j$ and $2j+1$ to $j + d/2$, as DeepSeek's code does with
# `x.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)`. Raise `ValueError` naming `d` for an odd
# last dimension.

# %%
#| export
def rope_interleave(x):
    """DeepSeek's rotary layout: pairs (x0, x1), (x2, x3), ... -> the half layout [x0, x2, ..., x1, x3, ...] that
    rotate_half expects. x: (..., d) -> (..., d)."""
    ### BEGIN SOLUTION
    # Hint: the idea: view the last axis as d/2 pairs, swap the pair axis with the coordinate-in-pair axis, and
    #       flatten back: the first coordinates of every pair come first, then the second ones.
    #       Shapes: x (..., d) -> (..., d/2, 2) -> (..., 2, d/2) -> (..., d)
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"the last dimension d must be even, got d={d}")
    # out[j] = x[2j], out[j + d/2] = x[2j + 1]
    return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)  # (..., d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rope_interleave", rope_interleave)

# %% [markdown]
# ### Exercise 9.2 — `mla_query_key(q, k_nope, k_rot, cos, sin, past_k_rot=None)`
#
# The position part of `DeepseekV3Attention.forward`. Inputs, with $N$ = `qk_nope_head_dim`, $R$ =
# `qk_rope_head_dim`:
#
# * `q` $(B, H, L, N + R)$: the queries, nope part first, rope part last in interleaved pairs;
# * `k_nope` $(B, H, S, N)$: every head's up-projected key (no position), for all $S$ keys, cached ones included;
# * `k_rot` $(B, 1, L, R)$: the new tokens' shared rotary key, interleaved, not rotated yet;
# * `cos`, `sin` $(L, R)$: the half-layout tables of the new positions (chapter 4's `rope_cos_sin`);
# * `past_k_rot` $(B, 1, S - L, R)$ or `None`: the rotated shared keys already in the cache.
#
# Return `(query, key, k_rot)`: `query` $(B, H, L, N + R)$ = `cat(nope part, rotated rope part)`, `key`
# $(B, H, S, N + R)$ = `cat(k_nope, rotated shared key given to every head)`, and the cache's new content
# $(B, 1, S, R)$, the rotated shared keys of all $S$ tokens, still one head. Use `rope_interleave` and the helper
# `apply_rope_half` below. Raise `ValueError` naming `k_nope` when its last size is not $N$.

# %%
#| export
def apply_rope_half(x, cos, sin):
    """Chapter 4's half-layout rotation, x·cos + rotate_half(x)·sin. x (..., L, R); cos, sin (L, R)."""
    x1, x2 = x.chunk(2, dim=-1)  # (..., L, R/2) each
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin  # (..., L, R)


# %%
#| export
def mla_query_key(q, k_nope, k_rot, cos, sin, past_k_rot=None):
    """MLA's decoupled RoPE (DeepseekV3Attention): rotate the last R coordinates of each query head and the one
    rotary key shared by all heads (interleaved pairs -> half layout first), append the cached rotary keys, give
    every head the shared key. Returns query (B, H, L, N + R), key (B, H, S, N + R), k_rot cache (B, 1, S, R)."""
    ### BEGIN SOLUTION
    # Hint: the idea: R = cos.shape[-1] is the rope part's width and `nope` = N the rest; split each query head
    #       there (nope first), bring the rope parts from interleaved pairs to the half layout with rope_interleave,
    #       rotate them with apply_rope_half, put the cached rotated keys in front, then concatenate.
    #       Shapes: q (B, H, L, N + R); k_nope (B, H, S, N); k_rot (B, 1, L, R); cos, sin (L, R)
    rope = cos.shape[-1]
    nope = q.shape[-1] - rope
    if k_nope.shape[-1] != nope:
        raise ValueError(f"k_nope's last size must be qk_nope_head_dim={nope}, got k_nope of shape "
                         f"{tuple(k_nope.shape)}")
    q_pass, q_rot = q[..., :nope], q[..., nope:]  # (B, H, L, N), (B, H, L, R)
    # DeepSeek's weights interleave the rotary pairs: to the half layout first
    q_rot, k_rot = rope_interleave(q_rot), rope_interleave(k_rot)  # (B, H, L, R), (B, 1, L, R)
    # x·cos + rotate_half(x)·sin: each query head, and the one key all heads share (rotated once)
    q_rot, k_rot = apply_rope_half(q_rot, cos, sin), apply_rope_half(k_rot, cos, sin)
    if past_k_rot is not None:
        # the cache holds keys rotated at their own positions: the new ones go after them
        k_rot = torch.cat((past_k_rot, k_rot), dim=-2)  # (B, 1, S, R)
    query = torch.cat((q_pass, q_rot), dim=-1)  # (B, H, L, N + R)
    # one rotary key for every head: a view (expand), never a copy per head
    key = torch.cat((k_nope, k_rot.expand(-1, k_nope.shape[1], -1, -1)), dim=-1)  # (B, H, S, N + R)
    return query, key, k_rot
    ### END SOLUTION


# %% tags=["selfcheck"]
check("mla_query_key", mla_query_key)

# %% [markdown]
# ### Exercise 9.3 — `mla_softmax_scale(qk_nope_head_dim, qk_rope_head_dim, v_head_dim, factor=1.0, mscale_all_dim=0.0)`
#
# The scores are dot products over the nope and the rope parts together, so the softmax scale is
# $1/\sqrt{N + R}$ ($1/\sqrt{192}$ in DeepSeek-V3), whatever the value heads' size. Under YaRN (DeepSeek-V3's
# released configuration: `factor` 40, `mscale` = `mscale_all_dim` = 1), the attention is sharpened as chapter 5
# derived, by $m = 0.1\cdot$`mscale_all_dim`$\cdot\ln s + 1$; DeepSeek puts it into the softmax scale, **squared**
# (it stands for a factor on the query and one on the key), and transformers' YaRN then leaves the cos and sin
# tables unscaled ($m(\text{mscale}) / m(\text{mscale\_all\_dim}) = 1$). Return the scale as a Python float:
# `qk_head_dim ** -0.5`, times $m^2$ when `factor` > 1 and `mscale_all_dim` is not 0 (as
# `yarn_apply_mscale` in transformers).

# %%
#| export
def mla_softmax_scale(qk_nope_head_dim, qk_rope_head_dim, v_head_dim, factor=1.0, mscale_all_dim=0.0):
    """DeepseekV3Attention.scaling: (N + R)^(-1/2), times (0.1·mscale_all_dim·ln(factor) + 1)^2 under YaRN."""
    ### BEGIN SOLUTION
    # Hint: the idea: the softmax scale is one over the square root of the size of the dot product, the query's
    #       head: nope part plus rope part. YaRN's factor m multiplies it twice.
    #       Shapes: numbers only; return a float
    qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
    # 1/sqrt(N + R)
    scale = qk_head_dim ** -0.5
    if factor > 1 and mscale_all_dim:
        # m = 0.1·mscale_all_dim·ln(s) + 1
        mscale = 0.1 * mscale_all_dim * math.log(factor) + 1.0
        scale = scale * mscale * mscale
    return float(scale)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("mla_softmax_scale", mla_softmax_scale)

# %% tags=["demo"]
@demo
def mla_cache_per_token(heads=128, nope=128, rope=64, v=128, latent=512):
    mla, full = latent + rope, heads * (nope + rope + v)
    print(f"MLA caches {mla} numbers per token and layer; full keys and values: {full} ({full / mla:.0f}x)")
    scale, yarn = mla_softmax_scale(nope, rope, v), mla_softmax_scale(nope, rope, v, 40.0, 1.0)
    print(f"softmax scale: {scale:.5f} = 1/sqrt({nope + rope}); with YaRN factor 40: {yarn:.5f}")


mla_cache_per_token()

# %% [markdown]
# Later DeepSeek models keep MLA's decoupled RoPE. DeepSeek-V3.2 adds an **indexer** that picks, for each query,
# the 2048 keys (`index_topk`) the attention may read; in transformers' `DeepseekV32Indexer` the indexer has its
# own single shared key, whose first `qk_rope_head_dim` coordinates are rotated in the *half* layout (the code says
# so: "NON-interleaved (half-split) RoPE — unlike the main MLA attention"), and its per-head scores pass a ReLU
# before they are weighted and summed over heads.

# %% [markdown]
# ## 9.2 Layers without positions, and a temperature for them (Llama 4)
#
# Chapter 7 found that a causal model without any position encoding (NoPE, Kazemnejad et al., 2023) still learns
# where its tokens are. Llama 4 mixes the two: three layers out of four use RoPE, every fourth uses none. In
# transformers this is `no_rope_layers`, a list with one entry per layer, built from `no_rope_layer_interval`
# (4) as `int((layer_idx + 1) % interval != 0)`. Mind the name: a **1 means the layer uses RoPE**
# (`self.use_rope = config.no_rope_layers[layer_idx]`), a 0 marks a NoPE layer, so layers 3, 7, 11, ... have no
# positions. SmolLM3 uses the same field.
#
# The RoPE layers of Llama 4 also see only their own **chunk**: `layer_types` marks them `"chunked_attention"`,
# with `attention_chunk_size` 8192, and a query attends causally within its chunk of 8192 positions only; the NoPE
# layers attend to the whole context. So the model's long-range reading happens in layers without positions.
#
# Those layers have chapter 5's entropy problem with nothing to counter it: a softmax over $n$ keys with the same
# spread of logits flattens as $n$ grows (its entropy grows like $\ln n$). Llama 4 multiplies the queries of NoPE
# layers (`attn_temperature_tuning`) by a factor that grows with the query's position $p$:
#
# $$\tau(p) = 1 + \text{attn\_scale}\cdot \ln\!\Big(1 + \big\lfloor (p + 1) / \text{floor\_scale} \big\rfloor\Big),$$
#
# with `floor_scale` 8192 and `attn_scale` 0.1: exactly 1 for the first 8191 positions, then rising like a
# logarithm in steps of 8192 tokens. The code cites Nakanishi (2025), whose scalable softmax multiplies the logits
# by $s \ln n$ for the same reason. With a cache, $p$ counts the cached tokens too.

# %% [markdown]
# ### Exercise 9.4 — `nope_layer_temperature(positions, floor_scale, attn_scale)`
#
# `positions` is an integer tensor $(L,)$ of absolute positions. Return the float32 factors $\tau(p)$, $(L,)$,
# as `Llama4TextAttention` computes them (`torch.log1p`, `torch.floor`, in float32).

# %%
#| export
def nope_layer_temperature(positions, floor_scale, attn_scale):
    """Llama 4's query scale on NoPE layers: 1 + attn_scale·log(1 + floor((p + 1)/floor_scale)). (L,) -> (L,)."""
    ### BEGIN SOLUTION
    # Hint: the idea: count how many whole blocks of floor_scale tokens lie up to and including position p, take
    #       the log of one plus that count, and turn it into a factor around 1.
    #       Shapes: positions (L,) int -> (L,) float32
    # floor((p + 1) / floor_scale)
    steps = torch.floor((positions.float() + 1.0) / floor_scale)  # (L,)
    # 1 + attn_scale · log1p(steps)
    return torch.log1p(steps) * attn_scale + 1.0  # (L,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("nope_layer_temperature", nope_layer_temperature)

# %% [markdown]
# ### Exercise 9.5 — `no_rope_layers(num_hidden_layers, interval)`
#
# Return the list of `num_hidden_layers` ints transformers builds when `no_rope_layers` is not given: 1 where the
# layer uses RoPE, 0 on every `interval`-th layer (counting from 1). Raise `ValueError` naming `interval` when it
# is not positive.

# %%
#| export
def no_rope_layers(num_hidden_layers, interval):
    """Llama4TextConfig's default no_rope_layers: [int((i + 1) % interval != 0) for each layer i]; 1 = uses RoPE."""
    ### BEGIN SOLUTION
    # Hint: the idea: layer i (from 0) is a NoPE layer when i + 1 is a multiple of the interval; every other layer
    #       uses RoPE and gets a 1.
    #       Shapes: a list of num_hidden_layers ints, each 0 or 1
    if interval <= 0:
        raise ValueError(f"interval must be positive, got interval={interval}")
    # 1 = this layer uses RoPE; 0 on layers interval - 1, 2·interval - 1, ...
    return [int((i + 1) % interval != 0) for i in range(num_hidden_layers)]
    ### END SOLUTION


# %% tags=["selfcheck"]
check("no_rope_layers", no_rope_layers)

# %% [markdown]
# ### Exercise 9.6 — `chunked_causal_mask(seq_len, chunk_size, past=0)`
#
# A boolean mask $(L, P + L)$ for $L$ = `seq_len` new queries after $P$ = `past` cached tokens: query $i$ sits at
# position $q = P + i$ and may attend to key $k$ when $k \le q$ and both lie in the same chunk,
# $\lfloor k / C \rfloor = \lfloor q / C \rfloor$ (transformers' `chunked_causal_mask_function`, no padding).
# Raise `ValueError` naming `chunk_size` when it is not positive.

# %%
#| export
def chunked_causal_mask(seq_len, chunk_size, past=0):
    """Llama 4's chunked attention: query P + i may see key k iff k <= P + i and k // C == (P + i) // C.
    Returns a bool (seq_len, past + seq_len) mask, True = may attend."""
    ### BEGIN SOLUTION
    # Hint: the idea: give each query its absolute position q = past + i and each key its position k, then keep
    #       the pairs that are causal (k <= q) and fall in the same chunk of chunk_size positions.
    #       Shapes: q (L, 1), k (1, P + L) -> mask (L, P + L) bool
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got chunk_size={chunk_size}")
    q = torch.arange(past, past + seq_len)[:, None]  # (L, 1): the queries' absolute positions
    k = torch.arange(past + seq_len)[None, :]  # (1, P + L)
    # causal, and in the same chunk: k // C == q // C
    return (k <= q) & (k // chunk_size == q // chunk_size)  # (L, P + L)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("chunked_causal_mask", chunked_causal_mask)

# %% tags=["demo"]
@demo
def show_llama4_layers(positions=(0, 8191, 8192, 65535, 131071, 1048575)):
    print("no_rope_layers for 12 layers:", no_rope_layers(12, 4), "(1 = RoPE, chunked; 0 = NoPE, full)")
    tau = nope_layer_temperature(torch.tensor(positions), 8192, 0.1)
    print("NoPE query scale:", ", ".join(f"p={p}: {t:.3f}" for p, t in zip(positions, tau.tolist())))
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    axes[0].imshow(chunked_causal_mask(12, 4).numpy(), cmap="Greys")
    axes[0].set_title("chunked, C = 4 (RoPE layers)")
    axes[1].imshow(chunked_causal_mask(4, 4, past=8).numpy(), cmap="Greys")
    axes[1].set_title("the same, 4 queries after 8 cached")
    plt.tight_layout()
    plt.show()


show_llama4_layers()

# %% [markdown]
# ## 9.3 Local and global layers with their own bases (Gemma 3)
#
# Gemma 3 (Gemma Team, 2025) alternates five **local** layers, which attend to a sliding window of 1024 tokens,
# with one **global** layer; transformers spells it `layer_types`, `"sliding_attention"` or `"full_attention"`,
# and keeps one set of RoPE parameters per type (`rope_parameters["sliding_attention"]`,
# `rope_parameters["full_attention"]`). The local layers keep a base of $10^4$; the global ones get $10^6$, and in
# the released 4B, 12B and 27B configurations also linear scaling by 8 (chapter 5's position interpolation,
# $\theta_i / 8$) for their 128K context. `Gemma3RotaryEmbedding` builds one table per layer type, and each layer
# reads its own type's.
#
# In chapter 5's terms, pair $i$ turns once every $\lambda_i = 2\pi\,\text{base}^{2i/d}$ tokens. With base $10^4$
# most pairs of a local layer turn at least once inside its window, and the slowest barely move within
# 1024 tokens: the window, not the wavelengths, bounds what a local layer sees, so it never meets an unseen
# distance. The global layers' base $10^6$ and factor 8 stretch every wavelength by $100^{2i/d}\cdot 8$: their
# slow pairs stay far from a full turn across the 128K context. The demo below prints both.
#
# Sliding windows are older than Gemma 3 (Mistral 7B used one on every layer), and others mix them with global
# layers: gpt-oss alternates windows of 128 tokens with full attention; Qwen3 can put a window on its upper
# layers (`use_sliding_window`, off by default); Cohere's `cohere2` models (Command R7B) rotate only their
# sliding-window layers and leave their global layers without positions, as Llama 4 does in reverse.

# %% [markdown]
# ### Exercise 9.7 — `layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor)`
#
# Return one inverse-frequency vector $(d/2,)$ per layer, in order: $\theta_i = \text{local\_base}^{-2i/d}$ for
# `"sliding_attention"`, $\theta_i = \text{global\_base}^{-2i/d} / \text{global\_factor}$ for `"full_attention"`
# (float32, the exponents $2i/d$ computed as transformers does, `arange(0, d, 2) / d`). Raise `ValueError` naming
# the layer type for any other string.

# %%
#| export
def layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor):
    """Gemma 3's per-layer RoPE: local_base^(-2i/d) on sliding-window layers, global_base^(-2i/d)/global_factor on
    global layers. Returns a list of (head_dim/2,) float32 tensors, one per entry of layer_types."""
    ### BEGIN SOLUTION
    # Hint: the idea: two frequency ladders, one per layer type (a small base for the local layers, a large base
    #       divided by the linear factor for the global ones); each layer gets its type's ladder.
    #       Shapes: exponents (d/2,); each ladder (d/2,); a list of len(layer_types) of them
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim  # (d/2,): 2i/d
    # local layers: theta_i = local_base^(-2i/d)
    local = 1.0 / local_base ** exponents  # (d/2,)
    # global layers: theta_i = global_base^(-2i/d) / factor (linear scaling)
    global_ = 1.0 / global_base ** exponents / global_factor  # (d/2,)
    tables = dict(sliding_attention=local, full_attention=global_)
    unknown = [t for t in layer_types if t not in tables]
    if unknown:
        raise ValueError(f"layer type must be 'sliding_attention' or 'full_attention', got {unknown[0]!r}")
    return [tables[t] for t in layer_types]
    ### END SOLUTION


# %% tags=["selfcheck"]
check("layer_rope_inv_freq", layer_rope_inv_freq)

# %% [markdown]
# ### Exercise 9.8 — `sliding_window_mask(seq_len, window, past=0)`
#
# A boolean mask $(L, P + L)$: query $q = P + i$ may attend to key $k$ when $q - W < k \le q$, the query itself
# and the $W - 1$ tokens before it (transformers' `sliding_window_causal_mask_function`: `kv_idx > q_idx -
# sliding_window`, and causal). Raise `ValueError` naming `window` when it is not positive.

# %%
#| export
def sliding_window_mask(seq_len, window, past=0):
    """A causal sliding window of `window` tokens: query P + i may see key k iff P + i - window < k <= P + i.
    Returns a bool (seq_len, past + seq_len) mask, True = may attend."""
    ### BEGIN SOLUTION
    # Hint: the idea: as the chunked mask, with absolute positions q = past + i; keep the keys that are causal and
    #       fewer than `window` positions behind the query.
    #       Shapes: q (L, 1), k (1, P + L) -> mask (L, P + L) bool
    if window <= 0:
        raise ValueError(f"window must be positive, got window={window}")
    q = torch.arange(past, past + seq_len)[:, None]  # (L, 1)
    k = torch.arange(past + seq_len)[None, :]  # (1, P + L)
    # q - window < k <= q
    return (k <= q) & (k > q - window)  # (L, P + L)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("sliding_window_mask", sliding_window_mask)

# %% tags=["demo"]
@demo
def gemma3_wavelengths(head_dim=256, window=1024, context=131072):
    local, global_ = layer_rope_inv_freq(["sliding_attention", "full_attention"], head_dim, 1e6, 1e4, 8.0)
    for inv_freq, base in ((local, "1e4"), (global_, "1e6, x8")):
        wavelengths = 2 * math.pi / inv_freq.double()  # (d/2,) tokens per turn
        longest = wavelengths[-1].item()
        fast, turning = (wavelengths <= window).sum().item(), (wavelengths <= context).sum().item()
        print(f"base {base}: longest wavelength {longest:.3g} tokens; pairs turning within {window} tokens: {fast}")
        print(f"  pairs turning within {context} tokens: {turning} of {head_dim // 2}")
    plt.figure(figsize=(4, 3.2))
    plt.imshow(sliding_window_mask(12, 4).numpy(), cmap="Greys")
    plt.title("sliding window, W = 4")
    plt.show()


gemma3_wavelengths()

# %% [markdown]
# ## 9.4 Attention sinks (gpt-oss)
#
# Chapter 7's attention maps showed heads that have nothing to look for: a softmax must still put its whole mass
# somewhere. Xiao et al. (2024) found that trained models park that mass on the first tokens, whatever they say,
# and that evicting those tokens from a sliding-window cache breaks the model; their StreamingLLM keeps a few of
# them as **attention sinks**, and that repairs it. gpt-oss (OpenAI, 2025) builds the sink in: each head has one
# learned logit $s_h$ (`sinks`, a parameter of shape `(num_heads,)`) that joins every query's scores as one more
# column and is dropped after the softmax:
#
# $$p_{t,j} = \frac{e^{\,q_t\cdot k_j/\sqrt d}}{e^{s_h} + \sum_{j'} e^{\,q_t\cdot k_{j'}/\sqrt d}} .$$
#
# A row now sums to less than 1: a head can attend to nothing. With a window of 128 tokens on every other layer
# (`layer_types` alternating `"sliding_attention"`, `"full_attention"`), the sink replaces the first tokens
# StreamingLLM had to keep. gpt-oss's RoPE is YaRN (chapter 5) with factor 32 over an original context of 4096
# (`rope_parameters` in `GptOssConfig`), in the half layout.

# %% [markdown]
# ### Exercise 9.9 — `attention_with_sinks(q, k, v, sinks, mask, scaling)`
#
# `q` $(B, H, L, D)$, `k`, `v` $(B, H, S, D)$, `sinks` $(H,)$, `mask` a boolean $(L, S)$ (True = may attend) or
# `None`, `scaling` a float. Return $(B, H, L, D)$ as gpt-oss's `eager_attention_forward` computes it: scores
# times `scaling`, masked positions at $-\infty$, the sink's logit appended as a last column, the row's maximum
# subtracted, softmax, the sink's column dropped, then the values.

# %%
#| export
def attention_with_sinks(q, k, v, sinks, mask, scaling):
    """gpt-oss's eager attention: softmax over [scores, sink_h] per row, the sink's share dropped.
    q (B, H, L, D); k, v (B, H, S, D); sinks (H,); mask (L, S) bool or None -> (B, H, L, D)."""
    ### BEGIN SOLUTION
    # Hint: the idea: the scores as usual (masked to -inf), one more column holding the head's sink logit for
    #       every query, a softmax over S + 1 columns, then drop the sink's column and weight the values.
    #       Shapes: scores (B, H, L, S); sink (B, H, L, 1); logits (B, H, L, S + 1); probs (B, H, L, S)
    # s = q·k · scaling, -inf where the mask is False
    scores = torch.matmul(q, k.transpose(-2, -1)) * scaling  # (B, H, L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # the head's sink logit, the same for every query
    sink = sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)  # (B, H, L, 1)
    logits = torch.cat((scores, sink), dim=-1)  # (B, H, L, S + 1)
    logits = logits - logits.max(dim=-1, keepdim=True).values  # as gpt-oss: no overflow in bf16
    # softmax over keys and sink, then the sink's share dropped: rows sum to less than 1
    probs = torch.softmax(logits, dim=-1)[..., :-1]  # (B, H, L, S)
    return torch.matmul(probs.to(v.dtype), v)  # (B, H, L, D)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("attention_with_sinks", attention_with_sinks)

# %% tags=["demo"]
@demo
def sink_share(logit_values=(-4.0, 0.0, 2.0, 4.0), keys=16):
    q, k, v = torch.zeros(1, 1, 1, 8), torch.zeros(1, 1, keys, 8), torch.ones(1, 1, keys, 8)
    for s in logit_values:
        share = attention_with_sinks(q, k, v, torch.tensor([s]), None, 8 ** -0.5)[0, 0, 0, 0].item()
        expected = 1 / (1 + math.exp(s) / keys)
        print(f"sink logit {s:+.0f}, {keys} equal keys: the keys get {share:.3f}; 1/(1 + e^s/n) = {expected:.3f}")


sink_share()

# %% [markdown]
# ## 9.5 What else changed, and what did not
#
# Read in transformers 5.23's code: Qwen3 keeps plain RoPE on every layer (base $10^6$ in its released
# configurations) and normalises each head's queries and keys (`q_norm`, `k_norm`) before rotating them; GLM-4.5
# (`glm4_moe`) rotates half of each head (`partial_rotary_factor` 0.5, chapter 4's partial RoPE); SmolLM3 takes
# Llama 4's `no_rope_layers`. The rotation itself is chapter 4's in every one of them; what changed is where it
# applies (a slice of the head, some layers), with which base per layer, and what the attention does around it
# (windows, chunks, sinks, temperatures).

# %% [markdown]
# ## An experiment on the CPU
#
# Chapter 7's decoder with four layers instead of two, trained at one length $L$ and scored at $L$ to $8L$, once per
# layer pattern of this chapter: all-RoPE; Llama 4's (three RoPE layers attending within chunks, one NoPE layer with
# the temperature, its `floor_scale` set to $L$, since the default 8192 would leave it at 1 here); Gemma 3's (three
# sliding-window layers with a small base, one global layer with a large one); all-RoPE with a learned sink per
# head. The experiment runs *your* six functions of this chapter, chapter 4's `apply_rope` and chapter 7's
# `TinyDecoder`. `RUN = "reduced"` trains small models in a few minutes; the full run's numbers, figures, command and
# time are in the course's `docs/chapter9/` folder, with what holds at this scale and what does not.

# %% tags=["demo"]
import types

from posenc_selfcheck import modernlab
from posenc_selfcheck.mine import load_exercises

# RUN = "reduced": a few minutes on a CPU; RUN = "full": the stored numbers' configuration (POSENC_CH9_RUN wins)
RUN = "reduced"
earlier = load_exercises(list(modernlab.loading.EARLIER))  # apply_rope (chapter 4), TinyDecoder (chapter 7)
impl = types.SimpleNamespace(**{name: globals()[name] for name in modernlab.EXERCISES},
                             **{name: getattr(earlier, name) for name in modernlab.loading.EARLIER})
experiment = modernlab.ModernLab(impl, modernlab.config_from_env(default=RUN))
experiment.run()

# %% [markdown]
# ## 9.6 Summary
#
# * MLA caches a latent per token; RoPE on the whole head would put a position-dependent rotation between the query
#   and the key's up-projection, so DeepSeek rotates a separate rope part of each query and one rotary key shared
#   by all heads; the cache holds `kv_lora_rank + qk_rope_head_dim` numbers per token and layer. The rope parts
#   come in interleaved pairs and are rotated into the half layout; the scale is $1/\sqrt{N + R}$, times $m^2$
#   under YaRN.
# * Llama 4: `no_rope_layers` has a 1 where a layer *uses* RoPE; every fourth layer is NoPE, attends to the
#   whole context and scales its queries by $1 + 0.1\ln(1 + \lfloor (p+1)/8192 \rfloor)$; the RoPE layers attend
#   within chunks of 8192.
# * Gemma 3: local sliding-window layers with base $10^4$, global layers with base $10^6$ and linear factor 8.
# * gpt-oss: a learned sink logit per head joins the softmax and is dropped after it; windows of 128 on every
#   other layer; YaRN.
#
# **Further reading.** DeepSeek-AI (2024), *DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts
# Language Model* (MLA, decoupled RoPE), and *DeepSeek-V3 Technical Report*. Meta (2025), Llama 4 model card and
# code (no paper). Gemma Team (2025), *Gemma 3 Technical Report*. OpenAI (2025), *gpt-oss-120b & gpt-oss-20b Model
# Card*. Xiao et al. (2024), *Efficient Streaming Language Models with Attention Sinks* (ICLR 2024).
# Kazemnejad et al. (2023), *The Impact of Positional Encoding on Length Generalization in Transformers*.
# Press et al. (2022), *Train Short, Test Long* (ALiBi). Su et al. (2021), *RoFormer* (RoPE). Peng et al. (2023),
# *YaRN*. Nakanishi (2025), *Scalable-Softmax Is Superior for Attention*.

# ## Hand your code on
#
# Run the cell below to copy this chapter's exercises into `posenc_mine/ch09.py`. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("09_todays_models", globals())
