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
# # Chapter 3 — Relative positions
#
# Chapters 1 and 2 give every token a vector for its *absolute* position and add it to the
# embedding. Language mostly cares about something else: "the adjective right before this noun",
# "the verb three words back". This chapter puts the distance between two tokens directly into
# attention, in four ways that practitioners use:
#
# | scheme | what depends on the distance $j-i$ | parameters |
# | --- | --- | --- |
# | Shaw et al. (2018) | a learned vector added to the key and one added to the value | $2(2K+1)\,d$ per layer |
# | learned bias (T5, Swin) | a learned scalar per head added to the logit | $(2K+1)\,H$ or one per bucket |
# | T5 buckets (Raffel et al., 2020) | the same scalar, distances grouped in log-spaced buckets | buckets $\times H$ |
# | ALiBi (Press et al., 2022) | a fixed penalty $-m_h\,(i-j)$ on the keys before the query, one slope per head | none |
#
# You will implement `relative_positions`, `shaw_attention_direct`, `shaw_attention`,
# `RelativePositionBias`, `t5_bucket`, `alibi_slopes` and `alibi_bias`. Along the way you will
# measure why the textbook way of writing Shaw's attention does not scale, and write the form that
# does.
#
# **Conventions** (the course contract). Attention tensors are (batch, heads, seq, head_dim), the
# layout of `torch.nn.functional.scaled_dot_product_attention`. The relative distance is
# $j - i$: *key position minus query position*, as in Shaw et al. When there are fewer queries
# than keys (decoding with a cache), the queries are the *last* tokens: query $i$ sits at position
# $k_{len} - q_{len} + i$.

# %%
#| export
import math

import torch
from torch import nn

# %%
import time

import matplotlib.pyplot as plt
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 3.1 Why relative?
#
# With an absolute encoding, the token at position $i$ enters attention as $x_i + p_i$. Write
# $A = W_Q^\top W_K$ for the product of the query and key projections. The logit between query
# $i$ and key $j$ (before the $1/\sqrt d$) expands into four terms:
#
# $$(x_i + p_i)^\top A\,(x_j + p_j) = \underbrace{x_i^\top A\,x_j}_{\text{content–content}}
# + \underbrace{x_i^\top A\,p_j}_{\text{content–position}}
# + \underbrace{p_i^\top A\,x_j}_{\text{position–content}}
# + \underbrace{p_i^\top A\,p_j}_{\text{position–position}}.$$
#
# The two middle terms pair a token's *content* with the other token's *absolute* position: "how
# much does this word like position 37?". Move a phrase 50 tokens to the right and these terms
# change although nothing inside the phrase did. Even the last term depends on $j - i$ alone only
# in special cases (chapter 1 showed it for sinusoids with $A = I$; a learned $A$ breaks it).
#
# What we want instead is a logit of the form
#
# $$e_{ij} = f\big(x_i,\ x_j,\ j - i\big),$$
#
# so that a pattern learned at one place in a sequence applies everywhere. Each scheme of this
# chapter replaces the position terms by something that sees only $j - i$: Shaw et al. by
# $q_i \cdot a_{j-i}$, T5 and ALiBi by a scalar $b(j-i)$. (Chapter 4's rotary embedding makes
# $q \cdot k$ itself depend on $j - i$.)
#
# The demo places the same two tokens at positions $(i, i+3)$ for many $i$. With sinusoidal
# absolute encodings and a random $A$, the logit drifts with $i$; with a relative bias it is the
# same everywhere.

# %% tags=["demo"]
def show_absolute_drift(d=16, distance=3, n_positions=60):
    gen = torch.Generator().manual_seed(0)
    x_a, x_b = torch.randn(d, generator=gen), torch.randn(d, generator=gen)  # two fixed tokens
    A = torch.randn(d, d, generator=gen) / math.sqrt(d)  # W_Q^T W_K
    # chapter 1's table, inline: PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i)
    w = 10000.0 ** (-torch.arange(0, d, 2) / d)  # (d/2,)
    angles = torch.arange(n_positions + distance)[:, None] * w  # (P, d/2)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)  # (P, d)
    i = torch.arange(n_positions)
    absolute = ((x_a + pe[i]) @ A * (x_b + pe[i + distance])).sum(-1)  # (n,)
    relative = (x_a @ A @ x_b + 0.7).expand(n_positions)  # content + a bias b(j - i = 3)
    fig, ax = plt.subplots(figsize=(7, 2.5))
    ax.plot(i.numpy(), absolute.numpy(), label="absolute: (x_i + p_i)ᵀ A (x_j + p_j)")
    ax.plot(i.numpy(), relative.numpy(), label="relative: x_iᵀ A x_j + b(j − i)")
    ax.set_xlabel("query position i (key at i + 3)")
    ax.set_ylabel("logit")
    ax.legend(fontsize=8)
    plt.show()


show_absolute_drift()

# %% [markdown]
# ### Exercise 3.1 — `relative_positions(q_len, k_len)`
#
# Return the (q_len, k_len) int64 matrix $R_{ij} = j - (k_{len} - q_{len} + i)$: key position
# minus query position, with the queries aligned to the end. For $q_{len} = k_{len}$ it is simply
# $j - i$: zero on the diagonal, negative for keys *before* the query.
#
# Two traps. Tutorials disagree on the sign (a common implementation computes $i - j$, see
# section 3.7); Shaw et al., T5 and this course use $j - i$, and a table trained with one sign read
# with the other mirrors every learned preference. And during decoding, query 0 of a 1-token step
# is *not* at position 0: it sits after the cached keys.
#
# Raise `ValueError` naming the argument when a size is not positive. The keyword `device` lets
# the modules below build the matrix where their parameters live.

# %%
#| export
def relative_positions(q_len, k_len, device=None):
    """R[i, j] = j - (k_len - q_len + i): key position minus query position, queries aligned to the end.
    Returns a (q_len, k_len) int64 tensor."""
    ### BEGIN SOLUTION
    # Hint: the idea: key position minus query position, the queries being the last q_len of the k_len
    #       positions.
    #       Shapes: query positions (Lq,), key positions (Lk,), the result (Lq, Lk) int64
    if q_len <= 0:
        raise ValueError(f"q_len must be positive, got q_len={q_len}")
    if k_len <= 0:
        raise ValueError(f"k_len must be positive, got k_len={k_len}")
    query_pos = torch.arange(k_len - q_len, k_len, device=device)  # (Lq,)
    key_pos = torch.arange(k_len, device=device)  # (Lk,)
    # R_ij = j - i
    return key_pos[None, :] - query_pos[:, None]  # (Lq, Lk)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("relative_positions", relative_positions)

# %% [markdown]
# ## 3.2 Shaw et al. (2018): relative vectors for keys and values
#
# Shaw, Uszkoreit and Vaswani keep the content projections and add two learned tables of
# $2K+1$ vectors each, $w^K, w^V \in \mathbb{R}^{(2K+1)\times d}$, shared by all heads of a layer.
# The pair $(i, j)$ reads row $c_{ij} = \operatorname{clip}(j - i, -K, K) + K$:
#
# $$a^K_{ij} = w^K_{c_{ij}}, \qquad a^V_{ij} = w^V_{c_{ij}},$$
#
# $$e_{ij} = \frac{q_i \cdot \big(k_j + a^K_{ij}\big)}{\sqrt d}, \qquad
# \alpha_{ij} = \operatorname{softmax}_j(e_{ij}), \qquad
# z_i = \sum_j \alpha_{ij}\,\big(v_j + a^V_{ij}\big).$$
#
# Four details decide whether an implementation is Shaw's:
#
# * **Sign.** $c_{ij}$ uses $j - i$. Row $K$ is the query itself, rows below $K$ are keys *before*
#   it.
# * **Clipping.** Distances beyond $\pm K$ share the two edge rows. That is what lets the layer run
#   on sequences longer than any seen in training: there is no row that was never trained. Shaw et
#   al. report up to +1.3 BLEU over absolute sinusoids (English–German, big model), almost no
#   change for any $K \ge 2$, and no gain from adding absolute positions back.
# * **Scaling.** *Both* logit terms are divided by $\sqrt d$ (tensor2tensor scales $q$ before
#   either product). Adding $q_i \cdot a^K_{ij}$ unscaled makes the relative term $\sqrt d$ times
#   louder than the content term: 8 times at $d = 64$.
# * **Values.** $a^V$ enters the output. Computing it and never using it (as a common tutorial
#   implementation does, section 3.7) silently drops half of the method.
#
# In tensors: with $A^K = w^K[c] \in \mathbb{R}^{L_q \times L_k \times d}$ (one vector per
# query–key pair), the relative logit is $\sum_t q_{bhit}\,A^K_{ijt}$ and the relative output
# $\sum_j \alpha_{bhij} A^V_{ijt}$ ($t$ runs over the $d$ dimensions). The obvious way to write these, broadcasting
# `q[..., :, None, :] * A_K`, builds a (B, H, Lq, Lk, d) tensor: one $d$-vector for every
# batch, head, query and key.
#
# The helper below checks the inputs of both versions you will write; call it first.

# %%
#| export
def check_shaw_inputs(q, rel_k, rel_v, max_distance):
    """Raise ValueError unless rel_k and rel_v are (2K+1, head_dim) tables and K = max_distance >= 0."""
    if max_distance < 0:
        raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
    rows, head_dim = 2 * max_distance + 1, q.shape[-1]
    for name, table in (("rel_k", rel_k), ("rel_v", rel_v)):
        if tuple(table.shape) != (rows, head_dim):
            raise ValueError(f"{name} must have shape (2 * max_distance + 1, head_dim) = ({rows}, {head_dim}), "
                             f"got {name}.shape={tuple(table.shape)}")


# %% [markdown]
# ### Exercise 3.2 — `shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False)`
#
# Write Shaw's attention the direct way: gather $A^K = $ `rel_k[c]` and $A^V = $ `rel_v[c]`
# of shape (Lq, Lk, d), and form both relative terms by broadcasting and summing. `q` is
# (B, H, Lq, d), `k` and `v` are (B, H, Lk, d). With `causal=True`, query $i$ may not attend to
# keys after it ($j - i > 0$ in `relative_positions`, which already handles decoding). Return
# (B, H, Lq, d) in `q`'s dtype.

# %%
#| export
def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018), written directly: materialises (B, H, Lq, Lk, d) for both relative terms.
    e_ij = q_i·(k_j + a^K_ij)/sqrt(d), z_i = sum_j alpha_ij (v_j + a^V_ij), a_ij = w[clip(j-i, -K, K) + K]."""
    ### BEGIN SOLUTION
    # Hint: the idea: gather one table row per (query, key) pair from the clipped distance; add q·a^K to
    #       the logits and attn·a^V to the output.
    #       Shapes: index (Lq, Lk); a^K, a^V (Lq, Lk, d); scores, attn (B, H, Lq, Lk); output (B, H, Lq, d)
    check_shaw_inputs(q, rel_k, rel_v, max_distance)
    rel = relative_positions(q.shape[-2], k.shape[-2], device=q.device)  # (Lq, Lk)
    idx = rel.clamp(-max_distance, max_distance) + max_distance  # (Lq, Lk) rows of the tables
    a_k, a_v = rel_k[idx], rel_v[idx]  # (Lq, Lk, d) each
    # e_ij = (q_i·k_j + q_i·a^K_ij) / sqrt(d)
    scores = q @ k.transpose(-2, -1) + (q.unsqueeze(-2) * a_k).sum(-1)  # (B, H, Lq, Lk) via (B, H, Lq, Lk, d)
    scores = scores / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(rel > 0, float("-inf"))  # no key after the query
    attn = scores.softmax(dim=-1)  # (B, H, Lq, Lk)
    # z_i = sum_j alpha_ij v_j + sum_j alpha_ij a^V_ij
    return attn @ v + (attn.unsqueeze(-1) * a_v).sum(-2)  # (B, H, Lq, d) via (B, H, Lq, Lk, d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("shaw_attention_direct", shaw_attention_direct)

# %% [markdown]
# ### How much memory does that take?
#
# We do not need to run it at full size to find out. On the `meta` device a tensor has a shape
# and a dtype but no storage, so a whole forward pass costs nothing. A `TorchDispatchMode` sees
# every operation; the one below records the largest buffer any operation creates. (Views such
# as `expand` share their input's buffer and do not count.)

# %% tags=["demo"]
class LargestAllocation(TorchDispatchMode):
    """Remember the largest new buffer (bytes and shape) that any operation creates, and the operations' names."""

    def __init__(self):
        super().__init__()
        self.nbytes, self.shape, self.ops = 0, None, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops.append(func._schema.name)
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor) and t.untyped_storage().nbytes() > self.nbytes:
                self.nbytes, self.shape = t.untyped_storage().nbytes(), tuple(t.shape)
        return out


def largest_allocation(fn, batch=1, heads=8, seq=2048, head_dim=64, max_distance=16):
    q = torch.empty(batch, heads, seq, head_dim, device="meta")
    table = torch.empty(2 * max_distance + 1, head_dim, device="meta")
    with LargestAllocation() as rec:
        fn(q, q, q, table, table, max_distance, causal=True)
    return rec.nbytes, rec.shape


@demo
def show_direct_form_memory():
    for seq in (512, 1024, 2048):
        nbytes, shape = largest_allocation(shaw_attention_direct, seq=seq)
        print(f"direct, L = {seq:4d}: largest buffer {nbytes / 1e9:6.2f} GB, shape {shape}")


show_direct_form_memory()

# %% [markdown]
# At $L = 2048$ with 8 heads of width 64, one intermediate needs $1 \cdot 8 \cdot 2048^2 \cdot
# 64 \cdot 4$ bytes $= 8.6$ GB, for a single sequence in a single layer. It grows with $L^2 d$:
# sixteen times more at $L = 8192$. A common tutorial implementation makes it worse still by
# `.repeat`-ing the gathered table over batch and heads before multiplying
# (`table_k(idx)[None, None].repeat(B, H, 1, 1, 1)`, section 3.7), which writes the same 8.6 GB out
# explicitly.

# %% [markdown]
# ## 3.3 The efficient form: never build (B, H, Lq, Lk, d)
#
# The way out is that there are only $2K + 1$ different vectors in $A^K$, however long the
# sequence.
#
# **Keys.** $q_i \cdot a^K_{ij} = q_i \cdot w^K_{c_{ij}}$. Compute the dot product of every query
# with every *row of the table* once,
#
# $$P = Q\,(w^K)^\top \in \mathbb{R}^{B\times H\times L_q\times(2K+1)},$$
#
# then pick entry $c_{ij}$ of row $i$ for every $j$: `P.gather(-1, idx)` with the (Lq, Lk) index
# broadcast to (B, H, Lq, Lk) by `expand` (a view: no copy).
#
# **Values.** Group the keys by the table row they use:
#
# $$\sum_j \alpha_{ij}\,w^V_{c_{ij}} = \sum_{r=0}^{2K} \Big(\sum_{j:\ c_{ij}=r} \alpha_{ij}\Big)\,
# w^V_r = (S\,w^V)_i, \qquad S_{bhir} = \sum_{j:\ c_{ij} = r} \alpha_{bhij}.$$
#
# $S$ is $\alpha$ summed per relative index: `zeros(B, H, Lq, 2K+1).scatter_add_(-1, idx, attn)`.
# (Scatter-add is the transpose of gather, and autograd knows both: the tables still train.)
#
# The largest tensors left are the (B, H, Lq, Lk) logits, which any attention computed outside a
# fused kernel has, plus two of size (B, H, Lq, 2K+1). The extra work is $O(B H L_q (2K+1) d)$
# instead of $O(B H L_q L_k d)$.
#
# Music Transformer (Huang et al., 2018), a decoder, faced the unclipped case: one table row per
# distance $0, 1, \dots, L-1$ into the past, so $Q\,(w^K)^\top$ is already $L \times L$ per head and
# a gather would be as large as the logits anyway. Its "skewing" trick pads one column, reshapes
# and drops a row, which shifts row $i$ by $i$ places and lines every entry up with its key, with
# no index tensor at all: $O(L d)$ extra memory instead of $O(L^2 d)$.

# %% [markdown]
# ### Exercise 3.3 — `shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False)`
#
# Same inputs, same result as `shaw_attention_direct`, but no (B, H, Lq, Lk, d) tensor (and no
# `repeat` of anything over batch or heads). The grader runs it at B = 1, H = 8, L = 2048, d = 64
# with 3 GiB of memory to spare: the efficient form needs about 0.5 GB, the direct form 8.6 GB for
# one intermediate.

# %%
#| export
def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018) without materialising (B, H, Lq, Lk, d).

    q·a^K_ij = (q @ rel_k^T)[..., i, c_ij]  (gather from (B, H, Lq, 2K+1));
    sum_j alpha_ij a^V_ij = S @ rel_v with S[..., i, r] = sum over {j: c_ij = r} of alpha_ij  (scatter_add)."""
    ### BEGIN SOLUTION
    # Hint: the idea: only 2K + 1 table rows exist. Score every query against the rows once and pick;
    #       sum the attention weights per row before multiplying by the value table.
    #       Shapes: q against the rows (B, H, Lq, 2K+1); index (B, H, Lq, Lk); weights per row
    #       (B, H, Lq, 2K+1). Never (B, H, Lq, Lk, d)
    check_shaw_inputs(q, rel_k, rel_v, max_distance)
    batch, heads, q_len, head_dim = q.shape
    k_len = k.shape[-2]
    rel = relative_positions(q_len, k_len, device=q.device)  # (Lq, Lk)
    idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, k_len)  # view
    # q_i·a^K_ij = (q_i·w^K_r) at r = c_ij
    rel_logits = (q @ rel_k.transpose(0, 1)).gather(-1, idx)  # (B, H, Lq, 2K+1) -> (B, H, Lq, Lk)
    scores = (q @ k.transpose(-2, -1) + rel_logits) / math.sqrt(head_dim)  # both terms / sqrt(d)
    if causal:
        scores = scores.masked_fill(rel > 0, float("-inf"))  # no key after the query
    attn = scores.softmax(dim=-1)  # (B, H, Lq, Lk)
    # S[..., i, r] = sum of alpha_ij over the keys j that read row r
    per_row = attn.new_zeros(batch, heads, q_len, 2 * max_distance + 1).scatter_add_(-1, idx, attn)
    return attn @ v + per_row @ rel_v  # (B, H, Lq, d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("shaw_attention", shaw_attention)

# %% [markdown]
# Both forms give the same output; compare their largest buffers (on `meta`, for free) and their
# time at a size this notebook can afford.

# %% tags=["demo"]
@demo
def compare_shaw_forms(seq=256, heads=8, head_dim=64, max_distance=16):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, heads, seq, head_dim, generator=gen) for _ in range(3))
    rel_k, rel_v = (torch.randn(2 * max_distance + 1, head_dim, generator=gen) for _ in range(2))
    args = (q, k, v, rel_k, rel_v, max_distance)
    diff = (shaw_attention(*args, causal=True) - shaw_attention_direct(*args, causal=True)).abs().max()
    print(f"max |efficient - direct| at L = {seq}: {diff:.1e}")
    for fn in (shaw_attention_direct, shaw_attention):
        fn(*args)  # warm-up
        start = time.perf_counter()
        for _ in range(3):
            fn(*args)
        ms = (time.perf_counter() - start) / 3 * 1e3
        nbytes, shape = largest_allocation(fn, seq=2048)
        print(f"{fn.__name__:>22}: {ms:6.1f} ms at L = {seq}; largest buffer at L = 2048: "
              f"{nbytes / 1e9:.3f} GB {shape}")


compare_shaw_forms()

# %% [markdown]
# Measured with `python benchmarks/bench_relative.py` (1 CPU thread, B = 1, H = 8, d = 64, K = 16,
# causal, float32; peak = growth of the resident set during one call; time = median of 3 calls after
# a warm-up). These are the numbers of the README's measurement; on a shared 2-core machine the
# times move by tens of percent (and more) from run to run, the memory does not:
#
# | L | direct: peak | efficient: peak | memory ratio | direct: time | efficient: time |
# | --- | --- | --- | --- | --- | --- |
# | 512 | 711 MB | 48 MB | 14.7× | 613 ms | 27 ms |
# | 1024 | 2.8 GB | 136 MB | 20.5× | | |
# | 2048 | 11.1 GB | 495 MB | 22.4× | 15.6 s | 0.64 s |
#
# The efficient form is not only smaller: it is more than twenty times faster here, because the
# broadcast product writes and reads $L^2 d$ numbers where a matrix product over $2K+1$ rows does a
# fraction of that work.

# %% [markdown]
# ## 3.4 A learned bias per head, through SDPA's `attn_mask`
#
# Shaw's key term is a dot product $q_i \cdot a^K_{ij}$, different for every query. T5 (Raffel et
# al., 2020) and Swin (Liu et al., 2021) simplify it to a **scalar per head and distance**, learned
# and independent of the content:
#
# $$e^h_{ij} = \frac{q^h_i \cdot k^h_j}{\sqrt d} + b^h_{c_{ij}}, \qquad b \in
# \mathbb{R}^{(2K+1)\times H}.$$
#
# The bias depends on neither batch nor content, so one (1, H, Lq, Lk) tensor serves the whole
# batch, and T5 computes it once, in the first layer, and hands it to every other layer.
# PyTorch's `scaled_dot_product_attention` accepts it directly: a **float** `attn_mask` is *added*
# to the scaled logits, so `F.scaled_dot_product_attention(q, k, v, attn_mask=bias)` computes
# $\operatorname{softmax}(qk^\top/\sqrt d + b)\,v$. Two conventions to keep straight when porting:
# T5 does not divide $q \cdot k$ by $\sqrt d$ at all (pass `scale=1.0`), and Swin indexes its table
# by query minus key, the opposite sign to ours.
#
# What the bias costs:
#
# * **Memory.** The mask is a dense (1, H, Lq, Lk) tensor: 1 GiB in float32 at H = 16,
#   L = 4096, for something that has only $(2K+1)H$ distinct values. Fused kernels exist to avoid
#   exactly such $L^2$ tensors.
# * **Kernels.** On CUDA, SDPA's flash backend accepts no `attn_mask` at all ("Flash Attention does
#   not support non-null attn_mask"): an arbitrary float bias rules it out, and SDPA falls back to
#   the memory-efficient kernel (which reads an additive bias) or to the math path. On the CPU,
#   PyTorch's flash kernel does take a mask, but must stream the whole bias through it.
# * **Causal masking.** Do not pass `attn_mask` together with `is_causal=True`: the math backend
#   refuses the pair ("Explicit attn_mask should not be set when is_causal=True") while others
#   apply both. Fold the causal mask into the bias (`-inf` where $j > i$); that works everywhere.

# %% [markdown]
# ### Exercise 3.4 — `RelativePositionBias(num_heads, max_distance)`
#
# A module with one attribute `bias = nn.Embedding(2K + 1, num_heads)` (row $c$ holds the $H$
# biases of clipped distance $c - K$). `forward(q_len, k_len)` returns the (1, H, q_len, k_len)
# tensor $b^h_{c_{ij}}$ in the table's dtype, **on the device of the table**: build the indices
# with `device=self.bias.weight.device`. (A common tutorial implementation, shown in section 3.7,
# builds them on `'cuda' if torch.cuda.is_available() else 'cpu'`: a model kept on the CPU of a GPU
# machine then looks up CPU weights with CUDA indices and fails.) Initialise the table with
# `nn.init.trunc_normal_(std=0.02)`, as Swin does. Raise `ValueError` for a non-positive
# `num_heads` or a negative `max_distance`.

# %%
#| export
class RelativePositionBias(nn.Module):
    """Learned bias per head and clipped distance: out[0, h, i, j] = bias[clip(j - i, -K, K) + K, h]."""

    def __init__(self, num_heads, max_distance):
        super().__init__()
        ### BEGIN SOLUTION
        # Hint: the idea: one learned scalar per head and clipped distance: an embedding table with 2K + 1 rows
        #       and num_heads columns.
        #       Shapes: bias.weight (2K+1, H)
        if num_heads <= 0:
            raise ValueError(f"num_heads must be positive, got num_heads={num_heads}")
        if max_distance < 0:
            raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)  # (2K+1, H)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)
        ### END SOLUTION

    def forward(self, q_len, k_len):
        ### BEGIN SOLUTION
        # Hint: the idea: look up the row of every (query, key) pair's clipped distance, then put heads first.
        #       Shapes: index (Lq, Lk), looked-up rows (Lq, Lk, H), output (1, H, Lq, Lk)
        K = self.max_distance
        rel = relative_positions(q_len, k_len, device=self.bias.weight.device)  # (Lq, Lk)
        values = self.bias(rel.clamp(-K, K) + K)  # (Lq, Lk, H)
        return values.permute(2, 0, 1).unsqueeze(0)  # (1, H, Lq, Lk)
        ### END SOLUTION


# %% tags=["selfcheck"]
check("RelativePositionBias", RelativePositionBias)

# %% [markdown]
# In use, with the causal mask folded in. The recorder of section 3.2 names the kernel SDPA picked
# on this machine; the benchmark below compares time and memory with and without the bias.

# %% tags=["demo"]
@demo
def bias_through_sdpa(seq=256, heads=4, head_dim=32, max_distance=8):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, heads, seq, head_dim, generator=gen) for _ in range(3))
    rpb = RelativePositionBias(heads, max_distance)
    causal = relative_positions(seq, seq) > 0  # (L, L) True above the diagonal
    with torch.no_grad():
        bias = rpb(seq, seq).masked_fill(causal, float("-inf"))  # (1, H, L, L)
        manual = (q @ k.transpose(-2, -1) / math.sqrt(head_dim) + bias).softmax(-1) @ v
        with LargestAllocation() as rec:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    print(f"SDPA with the bias vs by hand: max diff {(out - manual).abs().max():.1e}; SDPA ran {rec.ops}")
    print(f"the bias tensor: {tuple(bias.shape)}, {bias.numel() * bias.element_size() / 2**20:.1f} MiB, "
          f"from {rpb.bias.weight.numel()} parameters")


bias_through_sdpa()

# %% [markdown]
# Measured with `python benchmarks/bench_relative.py` (same machine and settings; the bias is a
# prebuilt (1, 8, L, L) float32 `RelativePositionBias` output, the causal one with `-inf` folded
# in; PyTorch picked its CPU flash kernel in every case). Over L = 512, 1024 and 2048, SDPA with the
# bias took 3.3–3.5× the time of a call without a mask, and the causal bias 2.9–4.7× the time of
# `is_causal=True` (the README's run; the ratios move between runs on a shared machine). Memory:
#
# | L | SDPA peak: bias, none | bias: size |
# | --- | --- | --- |
# | 512 | 22 MB, 4 MB | 8.4 MB |
# | 1024 | 79 MB, 6 MB | 34 MB |
# | 2048 | 314 MB, 8 MB | 134 MB |
#
# A mask-free call needs a few megabytes whatever the length; with the bias, SDPA itself needs
# more than twice the bias's size again, and `is_causal=True` can skip the masked half of the work,
# which an arbitrary bias cannot tell it to do.

# %% [markdown]
# ## 3.5 T5's logarithmic buckets
#
# Clipping at $K$ treats a distance of 17 like a distance of 1000. T5 keeps *exact* buckets for
# short distances and spends the rest on log-spaced ranges up to `max_distance`, beyond which
# everything shares the last bucket. With $n$ a non-negative distance, $N$ buckets and
# $n_e = N/2$ exact ones:
#
# $$\text{bucket}(n) = \begin{cases} n & n < n_e \\[2pt]
# \min\!\Big(N - 1,\ n_e + \Big\lfloor \dfrac{\ln(n / n_e)}{\ln(\text{max\_distance} / n_e)}\,(N - n_e)
# \Big\rfloor\Big) & n \ge n_e \end{cases}$$
#
# How $n$ comes from $r = j - i$ depends on the direction:
#
# * **Bidirectional** (encoder): half the buckets for keys after the query, half for the rest.
#   Set $N \leftarrow N/2$, use $n = |r|$, and add $N$ (the halved count) when $r > 0$.
# * **Causal** (decoder): only keys at or before the query matter. Use $n = \max(-r, 0) = \max(i - j, 0)$;
#   all future keys land in bucket 0 (they are masked anyway), and all $N$ buckets serve the past.
#
# Computing the causal buckets with the bidirectional rule wastes half the buckets on keys the
# decoder never sees and halves the resolution of the past. T5 computes the logarithm in float32
# and truncates towards zero (`.to(torch.long)`); do the same. At $n = 0$ the logarithm is
# $-\infty$; that branch is discarded by the `where`, but you can also clamp $n$ to at least $n_e$
# before the log.

# %% [markdown]
# ### Exercise 3.5 — `t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128)`
#
# `relative_position` is an int64 tensor of any shape holding $j - i$; return int64 buckets of the
# same shape, identical to T5's `_relative_position_bucket`.

# %%
#| export
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's bucket of each relative position r = j - i: exact below num_buckets/2 (per direction),
    log-spaced up to max_distance, one bucket beyond. Returns int64, same shape as the input."""
    ### BEGIN SOLUTION
    # Hint: the idea: reduce r = j - i to a non-negative distance n (and an offset for the direction), keep
    #       small n exact, and put larger n into log-spaced buckets up to max_distance.
    #       Shapes: the input's shape, int64 throughout
    r = relative_position
    if bidirectional:
        num_buckets //= 2
        offset = (r > 0).long() * num_buckets  # keys after the query use the upper half
        n = r.abs()
    else:
        offset = torch.zeros_like(r, dtype=torch.long)
        n = (-r).clamp(min=0)  # max(i - j, 0): future keys fall into bucket 0
    max_exact = num_buckets // 2
    # max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (N - max_exact)), n >= max_exact
    log_ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = (max_exact + (log_ratio * (num_buckets - max_exact)).long()).clamp(max=num_buckets - 1)
    return offset + torch.where(n < max_exact, n, large)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("t5_bucket", t5_bucket)

# %% tags=["demo"]
@demo
def plot_t5_buckets(num_buckets=32, max_distance=128):
    r = torch.arange(-200, 201)
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot(r.numpy(), t5_bucket(r, True, num_buckets, max_distance).numpy(), label="bidirectional (encoder)")
    ax.plot(r.numpy(), t5_bucket(r, False, num_buckets, max_distance).numpy(), label="causal (decoder)")
    for x in (-max_distance, max_distance):
        ax.axvline(x, color="gray", lw=0.5, ls="--")
    ax.set_xlabel("relative position j − i")
    ax.set_ylabel("bucket")
    ax.set_title(f"T5 buckets, num_buckets = {num_buckets}, max_distance = {max_distance} (dashed)")
    ax.legend()
    plt.show()


plot_t5_buckets()

# %% [markdown]
# The dashed lines mark $\pm$`max_distance`, where the logarithmic formula would reach the last
# bucket; because it is truncated, the last bucket starts earlier: at $\lvert j - i\rvert = 91$
# in each direction for the bidirectional buckets, at $i - j = 113$ for the causal ones (32 buckets,
# `max_distance` 128). `max_distance` is where the formula runs out, not where the last bucket begins.
#
# A T5 layer's bias is then `nn.Embedding(num_buckets, H)` looked up at
# `t5_bucket(relative_positions(q_len, k_len), bidirectional=not is_decoder)`: the module of
# exercise 3.4 with `t5_bucket` in place of the clip.

# %% [markdown]
# ## 3.6 ALiBi: a fixed linear penalty
#
# Press, Smith and Lewis (2022) drop every positional parameter. They define ALiBi for causal language
# models: head $h$ adds
#
# $$b^h_{ij} = -m_h\,(i - j), \qquad j \le i,$$
#
# to its logits (the keys after the query are masked anyway): the further back a key, the larger the
# penalty, at a rate $m_h$ fixed per head. This chapter's `alibi_bias` writes it as
# $-m_h\,\lvert j - i\rvert$, which is the same on every key a causal query sees. For a
# bidirectional model the $\lvert\cdot\rvert$ form is a *symmetric variant*, not the paper's method,
# and it loses something: a key three tokens to the left and a key three tokens to the right get the
# same bias, so the bias alone cannot tell left from right (which word came first). The paper reports
# causal language models only; for encoders its authors point to modifications, of which the symmetric
# form is the simplest.
#
# **Slopes.** For $n$ heads, $n$ a power of two, the slopes form a geometric sequence that starts
# at $2^{-8/n}$ with that same ratio:
#
# $$m_h = 2^{-8h/n}, \qquad h = 1, \dots, n; \qquad n = 8:\ \tfrac12, \tfrac14, \dots, \tfrac1{256}.$$
#
# For other head counts, take $c = 2^{\lfloor \log_2 n\rfloor}$, the $c$ slopes of $c$ heads,
# and fill the remaining $n - c$ heads with every other slope of the $2c$-head sequence (those
# that fall *between* the first ones): `slopes(2c)[0::2][: n - c]`. For $n = 12$: $\tfrac12,
# \dots, \tfrac1{256}$ and then $2^{-0.5}, 2^{-1.5}, 2^{-2.5}, 2^{-3.5}$. Plugging $n = 12$ into the
# power-of-two formula gives a different, evenly spread set ($2^{-2/3}, 2^{-4/3}, \dots$): a
# model trained with one set does not run with the other. It matters in practice: BLOOM-176B
# has 112 heads. Like BLOOM, compute the slopes in float32.
#
# **Only differences matter.** With a causal mask, $-m(i - j) = m j - m i$, and softmax ignores
# the $-m i$ that is constant along a row. That is why BLOOM and the original code add just
# $m\,j$, and MPT $m\,(j - (L - 1))$: the attention after the softmax is the same. (Without a
# causal mask these shortcuts are *not* $-m\lvert j - i\rvert$, and neither is the symmetric form
# the paper's method: there, decide which bidirectional variant you mean.)
#
# **Why it extrapolates.** Nothing is looked up in a table, so a longer sequence never asks for a
# position or distance without a trained representation: the formula holds at every distance. A
# larger distance only makes the penalty larger, so far keys get exponentially small weight, and
# each head acts as a soft window of width about $1/m_h$ tokens: from a couple of tokens ($m = \tfrac12$)
# to hundreds ($m = \tfrac1{256}$). Press et al. trained at lengths 512 and 1024 on WikiText-103:
# the perplexity of sinusoidal, rotary and T5-bias models degrades as the evaluation length
# grows past training, ALiBi's does not (and the T5 bias was the slowest and the first to run
# out of memory). Not degrading is not the same as *using* the far context: with a window of a
# few hundred tokens, ALiBi mostly ignores it.

# %% [markdown]
# ### Exercise 3.6 — `alibi_slopes(num_heads)`
#
# Return the float32 tensor of $n$ slopes above. Raise `ValueError` naming `num_heads` when it is
# not positive. (`n.bit_length() - 1` is $\lfloor\log_2 n\rfloor$ for a positive integer, without
# floating point.)

# %%
#| export
def alibi_slopes(num_heads, device=None):
    """Press et al. (2022): c = 2^floor(log2 n) heads get 2^(-8h/c), h = 1..c; the other n - c heads get
    the odd powers of 2^(-8/(2c)), i.e. slopes(2c)[0::2][:n - c]. float32, shape (num_heads,)."""
    ### BEGIN SOLUTION
    # Hint: the idea: a geometric sequence for a power-of-two head count; for other counts, the slopes of
    #       the largest smaller power of two plus in-between slopes of the next one (section 3.6).
    #       Shapes: (num_heads,) float32
    if num_heads <= 0:
        raise ValueError(f"num_heads must be positive, got num_heads={num_heads}")

    def geometric(c, powers):
        # m = start^p, start = 2^(-8/c), computed in float32 as BLOOM does
        start = torch.tensor(2.0 ** (-8.0 / c), dtype=torch.float32, device=device)
        return start ** powers

    c = 1 << (num_heads.bit_length() - 1)  # largest power of two <= num_heads
    slopes = geometric(c, torch.arange(1, c + 1, device=device))  # (c,)
    if c < num_heads:
        # every other slope of the 2c-head sequence: powers 1, 3, 5, ...
        extra = geometric(2 * c, torch.arange(1, 2 * (num_heads - c), 2, device=device))  # (n - c,)
        slopes = torch.cat([slopes, extra])
    return slopes  # (n,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("alibi_slopes", alibi_slopes)

# %% [markdown]
# ### Exercise 3.7 — `alibi_bias(num_heads, q_len, k_len)`
#
# Return the (1, H, q_len, k_len) float32 bias $-m_h\,\lvert j - i\rvert$ with queries aligned to
# the end (reuse `relative_positions`), built on `device` when one is given: both the slopes and
# the distances.

# %%
#| export
def alibi_bias(num_heads, q_len, k_len, device=None):
    """b[0, h, i, j] = -m_h * |j - i|, queries aligned to the end. Shape (1, H, q_len, k_len), float32."""
    ### BEGIN SOLUTION
    # Hint: the idea: each head's slope times the distance |j - i|, negated.
    #       Shapes: slopes (H,), distances (Lq, Lk), bias (1, H, Lq, Lk)
    slopes = alibi_slopes(num_heads, device=device)  # (H,)
    distance = relative_positions(q_len, k_len, device=device).abs()  # (Lq, Lk)
    # b_ij = -m_h |j - i|
    return -(slopes[:, None, None] * distance).unsqueeze(0)  # (1, H, Lq, Lk)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("alibi_bias", alibi_bias)

# %% tags=["demo"]
@demo
def show_alibi(num_heads=8, seq=64):
    slopes = alibi_slopes(num_heads)
    bias = alibi_bias(num_heads, seq, seq)[0]  # (H, L, L)
    causal = relative_positions(seq, seq) > 0
    weights = bias.masked_fill(causal, float("-inf")).softmax(-1)  # attention with equal content scores
    fig, axes = plt.subplots(1, 2, figsize=(10, 3))
    for h in range(num_heads):
        axes[0].plot(weights[h, -1].numpy(), label=f"m = 1/{1 / slopes[h]:.0f}")
    axes[0].set_xlabel("key position j (query at the last position)")
    axes[0].set_ylabel("attention weight")
    axes[0].legend(fontsize=7, ncol=2)
    image = axes[1].imshow(bias[0].numpy(), cmap="viridis")
    axes[1].set_xlabel("key j")
    axes[1].set_ylabel("query i")
    axes[1].set_title("bias of head 0 (m = 1/2)")
    fig.colorbar(image, ax=axes[1])
    plt.show()
    for h, m in enumerate(slopes.tolist()):
        print(f"head {h}: slope {m:.5f}, penalty reaches -1 at distance {1 / m:6.0f}, -10 at {10 / m:6.0f}")


show_alibi()

# %% [markdown]
# ## 3.7 Find the bug
#
# This module is written the way common tutorial implementations of Shaw's attention are (rewritten
# here; do not copy it). It runs without an error on a CPU-only laptop, and trains. Find five bugs
# before opening the answers.
#
# ```python
# class RelAttention(nn.Module):
#     def __init__(self, head_dim, max_distance):
#         super().__init__()
#         self.K = max_distance
#         self.table_k = nn.Embedding(2 * max_distance + 1, head_dim)
#         self.table_v = nn.Embedding(2 * max_distance + 1, head_dim)
#
#     def forward(self, q, k, v):                                   # (B, H, L, d) each
#         B, H, L, d = q.shape
#         dev = "cuda" if torch.cuda.is_available() else "cpu"
#         pos = torch.arange(L, device=dev)
#         idx = (pos[:, None] - pos[None, :]).clamp(-self.K, self.K) + self.K
#         a_k = self.table_k(idx)[None, None].repeat(B, H, 1, 1, 1)
#         scores = q @ k.transpose(-1, -2) / math.sqrt(d)
#         scores = scores + (q[..., None, :] * a_k).sum(-1)
#         attn = scores.softmax(-1)
#         return attn @ v, self.table_v(idx)
# ```
#
# <details><summary>Answers</summary>
#
# 1. **Sign.** `pos[:, None] - pos[None, :]` is $i - j$ (row = query). Shaw et al. use $j - i$;
#    the learned rows are mirrored relative to any model or checkpoint using the standard sign.
# 2. **Unscaled relative logit.** Only $q \cdot k$ is divided by $\sqrt d$; $q \cdot a^K$ must be
#    too (both terms of $e_{ij}$).
# 3. **Value table unused.** `table_v(idx)` is returned but never added to the output:
#    $z_i = \sum_j \alpha_{ij}(v_j + a^V_{ij})$.
# 4. **Device hard-coded.** The indices go to CUDA whenever a GPU exists, not where the module
#    lives: a model kept on the CPU of a GPU machine fails. Use `device=self.table_k.weight.device`
#    (or `q.device`).
# 5. **Memory.** `.repeat(B, H, 1, 1, 1)` writes a (B, H, L, L, d) tensor: 8.6 GB at B = 1, H = 8,
#    L = 2048, d = 64. Even without `repeat`, the broadcast product `q[..., None, :] * a_k` builds
#    the same shape. Use the gather / scatter-add form of section 3.3.
#
# </details>

# %% [markdown]
# ## 3.8 Summary
#
# * Absolute encodings leave content–position cross terms in $q \cdot k$. Relative schemes make
#   the position part of the logit a function of $j - i$ only (key minus query; queries aligned
#   to the end when decoding).
# * Shaw et al.: $e_{ij} = q_i \cdot (k_j + w^K_{c_{ij}})/\sqrt d$, $z_i = \sum_j \alpha_{ij}(v_j +
#   w^V_{c_{ij}})$, $c_{ij} = \operatorname{clip}(j - i, -K, K) + K$. Compute it with a gather from
#   $Q (w^K)^\top$ and a scatter-add of $\alpha$ into $2K+1$ slots: the direct form's
#   (B, H, Lq, Lk, d) tensor is 8.6 GB at L = 2048.
# * A learned scalar bias per head goes into SDPA as a float `attn_mask`: simple, but an $L^2$
#   tensor, and no flash kernel on CUDA. T5 buckets distances logarithmically, separately for
#   each direction or only for the past.
# * ALiBi adds $-m_h \lvert j - i \rvert$ with fixed geometric slopes (with the interleaving rule for
#   head counts that are not powers of two); no table means nothing to run out of at longer
#   lengths.
#
# **Further reading.** Shaw, Uszkoreit and Vaswani (2018), *Self-Attention with Relative Position
# Representations*; Huang et al. (2018), *Music Transformer* (§3.4, the skewing trick); Raffel et
# al. (2020), *Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer*
# (T5, §2.1); Liu et al. (2021), *Swin Transformer*; Press, Smith and Lewis (2022), *Train Short,
# Test Long: Attention with Linear Biases Enables Input Length Extrapolation*. Chapter 4 turns to
# rotary embeddings (Su et al., 2021), which get a relative logit without any bias tensor.


# %% [markdown]
# ## Hand your code on
#
# Chapter 7 trains small language models with every position scheme of the course, built from *your* code.
# Once this chapter's exercises pass their self-checks, run the cell below: it copies them (with the imports
# and helpers they use) into `posenc_mine/ch03.py` beside this notebook, and runs their self-checks on the
# copy. Run it again whenever you change an exercise. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("03_relative", globals())
