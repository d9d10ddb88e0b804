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
# # Chapter 4 — Rotary position embedding (RoPE)
#
# Chapter 1 *added* a position vector to every token, and the attention score between two tokens
# then mixed content with absolute positions. Chapter 3 put the distance $j-i$ into the score
# directly, through a learned table or a fixed bias. Rotary position embedding (Su et al., 2021)
# gets relative positions without any table: it **rotates** each query and key by an angle
# proportional to its position, so that the dot product of a query at position $m$ and a key at
# position $n$ depends on $m-n$ only. It adds no parameter, keeps the fast attention kernels, and is
# what LLaMA, GPT-NeoX, Mistral, Qwen and most open language models use.
#
# This chapter derives RoPE from the property it is built for, implements it in the two memory
# layouts that practitioners' code uses (and converts between them), tests the property the way a
# reviewer would, and ends with an attention layer that decodes token by token with a KV cache.
#
# You will implement `rope_inv_freq`, `rope_cos_sin`, `rotate_half`, `apply_rope`,
# `apply_rope_interleaved`, `interleaved_to_half_perm`, `check_relative_property` and
# `RoPEAttention`. After each exercise a self-check cell runs your code on small inputs.

# %%
#| export
import torch
import torch.nn.functional as F
from torch import nn

# %%
import matplotlib.pyplot as plt

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 4.1 The design goal
#
# Attention compares a query $q$ at position $m$ with a key $k$ at position $n$ through the dot
# product $q\cdot k$. We look for an encoding $f$ that injects the position into each vector
# *separately*, yet makes the score see only their distance:
#
# $$\langle f(q, m),\ f(k, n)\rangle = g(q, k, m-n) \quad\text{for all } q, k, m, n.$$
#
# Adding a vector does not do it: $(q + p_m)\cdot(k + p_n)$ contains $q\cdot p_n$ and $p_m\cdot k$,
# terms in which content meets an *absolute* position (chapter 3 expanded that product). We want
# an $f$ that is linear in its vector, costs nothing to learn, and leaves $g$ free of $m$ and $n$
# except through $m-n$.

# %% [markdown]
# ## 4.2 Two dimensions: a rotation, or a complex multiplication
#
# Take $d=2$ and let $f$ rotate its vector by the angle $m\theta$:
#
# $$f(q, m) = R(m\theta)\,q, \qquad
#   R(\alpha) = \begin{pmatrix}\cos\alpha & -\sin\alpha\\ \sin\alpha & \cos\alpha\end{pmatrix}.$$
#
# Rotations compose by adding angles and are undone by their transpose, $R(\alpha)^\top = R(-\alpha)$,
# so
#
# $$\langle f(q, m), f(k, n)\rangle = q^\top R(m\theta)^\top R(n\theta)\,k = q^\top R\big((n-m)\theta\big)\,k .$$
#
# The right-hand side contains the positions only through $n-m$: exactly the design goal. And a
# rotation keeps lengths, $\lVert f(q, m)\rVert = \lVert q\rVert$: RoPE leaves $\lVert q\rVert$ and
# $\lVert k\rVert$ as they are, so the bound $\lvert q\cdot k\rvert \le \lVert q\rVert\,\lVert k\rVert$ is
# the same with or without it. What the positions change is the angle between the two vectors, and
# with it the score.
#
# The same thing in complex numbers, which is how Su et al. (2021) derive it: read $q=(q_0, q_1)$
# as $q_0 + \mathrm{i}\,q_1$. Rotating by $m\theta$ is multiplying by $e^{\mathrm{i}m\theta}$, and the
# real dot product of two plane vectors is $\operatorname{Re}[a\,\bar b]$:
#
# $$\operatorname{Re}\big[q e^{\mathrm{i}m\theta}\ \overline{k e^{\mathrm{i}n\theta}}\big]
#   = \operatorname{Re}\big[q\,\bar k\, e^{\mathrm{i}(m-n)\theta}\big].$$
#
# Written out, the rotated pair is $\big(q_0\cos m\theta - q_1 \sin m\theta,\ q_1\cos m\theta + q_0\sin m\theta\big)$.
# Keep that line in mind: both layouts below compute it, on different pairs of coordinates.

# %% [markdown]
# ## 4.3 $d$ dimensions: $d/2$ clocks
#
# For a head of even width $d$, split the vector into $d/2$ planes and rotate plane $i$ by
# $m\theta_i$ with its own frequency
#
# $$\theta_i = \text{base}^{-2i/d}, \qquad i = 0, \dots, d/2-1, \qquad \text{base} = 10000 \text{ (LLaMA 1 and 2)}.$$
#
# The whole map is one block-diagonal matrix
# $\mathcal R_m = \operatorname{diag}\big(R(m\theta_0), \dots, R(m\theta_{d/2-1})\big)$, and the proof of 4.2
# goes through block by block:
#
# $$\langle \mathcal R_m q, \mathcal R_n k\rangle = \sum_{i} q^{(i)\top} R\big((n-m)\theta_i\big)\, k^{(i)}
#   = q^\top \mathcal R_{n-m}\, k, \qquad \lVert\mathcal R_m q\rVert = \lVert q\rVert,$$
#
# where $q^{(i)}$ is the pair of coordinates in plane $i$. Nothing in the proof needs a particular
# $\theta_i$: *any* frequencies give a relative score. The geometric ladder is the same choice as the
# sinusoidal table of chapter 1 (whose $\omega_i$ are these $\theta_i$): the fastest plane turns by one
# radian per token and separates neighbours, the slowest turns once in about $2\pi\cdot\text{base}$
# tokens and separates distant parts of a long text.
#
# Angles are computed in float32, as in every library: $\theta_i$ once, then $m\,\theta_i$ per
# position. At position 4096 a float32 angle carries an error of a few $10^{-4}$ radians; checks
# allow for it.

# %% [markdown]
# ### Exercise 4.1 — `rope_inv_freq(head_dim, base=10000.0)`
#
# Return the $d/2$ frequencies $\theta_i = 1/\text{base}^{2i/d}$ as a float32 tensor (libraries call
# them `inv_freq`). Raise `ValueError` naming `head_dim` and its value when it is odd or not
# positive. The keyword `device` lets later code build them where the positions live.

# %%
#| export
def rope_inv_freq(head_dim, base=10000.0, device=None):
    """theta_i = 1 / base^(2i/d), i = 0 .. d/2 - 1, float32. Returns (head_dim/2,)."""
    ### BEGIN SOLUTION
    # Hint: the idea: d/2 frequencies on a geometric ladder from 1 down towards 1/base.
    #       Shapes: (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    # theta_i = 1 / base^(2i/d)
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim  # (d/2,)
    return 1.0 / (base ** exponents)  # (d/2,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rope_inv_freq", rope_inv_freq)

# %% [markdown]
# ## 4.4 The half layout: `rotate_half`
#
# Which two coordinates form plane $i$ is a memory-layout decision, and the two choices in use are
# both called RoPE:
#
# * **half layout** (Hugging Face Llama, GPT-NeoX, flash-attn's default): plane $i$ is
#   $(x_i,\ x_{i+d/2})$, the $i$-th coordinate of the first half with the $i$-th of the second;
# * **interleaved layout** (Meta's LLaMA reference, GPT-J, torchtune): plane $i$ is
#   $(x_{2i},\ x_{2i+1})$, neighbouring coordinates (section 4.5).
#
# In the half layout the rotated vector, written with the line from 4.2 for every plane at once, is
#
# $$\text{out} = \big(x_1\odot\cos - x_2\odot\sin,\ \ x_2\odot\cos + x_1\odot\sin\big),
#   \qquad x = (x_1, x_2),\ \ x_1, x_2\in\mathbb R^{d/2},$$
#
# with $\cos = (\cos m\theta_0, \dots, \cos m\theta_{d/2-1})$. Hugging Face writes it as one
# elementwise expression over the full width:
#
# $$\text{out} = x\odot C + \operatorname{rotate\_half}(x)\odot S,\qquad
#   \operatorname{rotate\_half}(x) = (-x_2,\ x_1),\qquad C = (\cos, \cos),\ S = (\sin, \sin).$$
#
# Note where the minus sign sits: on the *second* half, moved to the front. The tables $C$ and $S$
# repeat the $d/2$ angles twice, end to end (`cat(freqs, freqs)`), because coordinate $i$ and
# coordinate $i + d/2$ share the angle of plane $i$.
#
# **Partial rotary.** GPT-NeoX rotates only the first quarter of each head (`rotary_pct = 0.25`),
# Phi-2 the first 40% (`partial_rotary_factor = 0.4`). The tables then have width
# $R = \lfloor d\cdot\text{factor}\rfloor < d$, the half layout applies *inside* those $R$
# coordinates, and the other $d-R$ pass through unchanged. The frequency ladder then runs over the
# rotated width, $\theta_i = \text{base}^{-2i/R}$ for $i = 0, \dots, R/2-1$, as GPT-NeoX and
# `transformers` compute it: the tables are `rope_cos_sin(position_ids, R)`, not the first $R/2$
# frequencies of a $d$-wide ladder (which would stop at $\text{base}^{-R/d}$ and leave out the slow
# planes). The proof of 4.3 still holds: the unrotated coordinates add a term
# $q_{\text{pass}}\cdot k_{\text{pass}}$ that does not depend on position at all.

# %% [markdown]
# ### Exercise 4.2 — `rope_cos_sin(position_ids, head_dim, base=10000.0)`
#
# `position_ids` is an integer tensor of shape (seq,) or (batch, seq). Return `(cos, sin)`, each of
# shape `position_ids.shape + (head_dim,)`, float32, in the half layout, on the device of
# `position_ids`. Raise `ValueError` for an odd `head_dim`.

# %%
#| export
def rope_cos_sin(position_ids, head_dim, base=10000.0):
    """cos/sin of the angles p * theta_i in the half layout cat(freqs, freqs). Each position_ids.shape + (head_dim,)."""
    ### BEGIN SOLUTION
    # Hint: the idea: one angle p·theta_i per position and plane, written twice, once for each half of
    #       the head (half layout); then its cosine and sine.
    #       Shapes: position_ids (L,) or (B, L); angles (..., L, d/2); cos, sin (..., L, d)
    inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)  # (d/2,)
    # angle[..., p, i] = p * theta_i, in float32
    freqs = position_ids[..., None].float() * inv_freq  # (..., L, d/2)
    # coordinate i and i + d/2 share plane i's angle
    emb = torch.cat((freqs, freqs), dim=-1)  # (..., L, d)
    return emb.cos(), emb.sin()
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rope_cos_sin", rope_cos_sin)

# %% [markdown]
# ### Exercise 4.3 — `rotate_half(x)`
#
# Return $(-x_2, x_1)$ on the last dimension. Raise `ValueError` naming the size when the last
# dimension is odd (there is no half to pair with).

# %%
#| export
def rotate_half(x):
    """rotate_half(x) = cat(-x2, x1), where x1, x2 are the first and second halves of the last dimension."""
    ### BEGIN SOLUTION
    # Hint: the idea: split the last axis into halves x1, x2 and return (-x2, x1).
    #       Shapes: (..., d) in and out; d must be even
    if x.shape[-1] % 2 != 0:
        raise ValueError(f"the last dimension must be even to split in halves, got size {x.shape[-1]}")
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]  # (..., d/2) each
    return torch.cat((-x2, x1), dim=-1)  # (..., d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rotate_half", rotate_half)

# %% [markdown]
# ### Exercise 4.4 — `apply_rope(x, cos, sin)`
#
# `x` has shape (batch, heads, seq, head_dim); `cos` and `sin` have shape (seq, R) or
# (batch, seq, R), from `rope_cos_sin`, and are shared by all heads (insert the head axis for the
# batched form). Rotate the first $R$ coordinates with the formula above and pass the remaining
# $d - R$ through (partial rotary; $R = d$ is the usual case). Cast `cos` and `sin` to `x.dtype`
# first, as Hugging Face does, so the output keeps the input's dtype. Raise `ValueError` when $R$
# is odd or larger than the head.
#
# `x * cos + rotate_half(x) * sin` (on the rotated part) is a correct answer. A faster one adds the
# `rotate_half(x) * sin` term half by half, without building `rotate_half(x)`: the first half gets
# $-x_2\odot\sin$, the second $x_1\odot\sin$. The course's benchmark `benchmarks/bench_rope.py`
# times both against `transformers`.

# %%
#| export
def apply_rope(x, cos, sin):
    """Half-layout RoPE: out = x * cos + rotate_half(x) * sin on the first R = cos.shape[-1] coordinates.

    x: (B, H, L, D); cos, sin: (L, R) or (B, L, R), R <= D even. Coordinates R .. D-1 pass through.
    """
    ### BEGIN SOLUTION
    # Hint: the idea: rotate the first R = cos.shape[-1] coordinates of every head with the tables (the
    #       formula of section 4.4) and pass the other D - R through.
    #       Shapes: x (B, H, L, D); cos, sin (L, R) or (B, L, R), shared by the heads; output (B, H, L, D)
    rot = cos.shape[-1]
    if rot % 2 != 0 or rot > x.shape[-1]:
        raise ValueError(f"cos/sin width R={rot} must be even and at most head_dim={x.shape[-1]}")
    if cos.dim() not in (2, 3):
        raise ValueError(f"cos/sin must have shape (seq, R) or (batch, seq, R), got {tuple(cos.shape)}")
    # (L, R) tables line up with x's last two axes; (B, L, R) ones need a head axis: one table for every head
    cos, sin = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)  # (B, 1, L, R) or (L, R)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    half = rot // 2
    x1, x2 = x[..., :half], x[..., half:rot]  # (B, H, L, R/2) each
    # out = x * cos + rotate_half(x) * sin, with rotate_half(x) * sin added half by half:
    #   first half += -x2 * sin,   second half += x1 * sin
    out = x * cos if rot == x.shape[-1] else torch.cat((x[..., :rot] * cos, x[..., rot:]), dim=-1)  # (B, H, L, D)
    out[..., :half].addcmul_(x2, sin[..., :half], value=-1)
    out[..., half:rot].addcmul_(x1, sin[..., half:])
    return out
    ### END SOLUTION


# %% tags=["selfcheck"]
check("apply_rope", apply_rope)

# %% [markdown]
# Two properties from 4.3, measured: rotating keeps every vector's length, and the score of a query
# at $m$ with a key at $n$ is the same as at $m+s$, $n+s$.

# %% tags=["demo"]
@demo
def show_norms_and_shift(head_dim=64, shift=100):
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 1, 1, head_dim, generator=gen)  # one query, one key, (1, 1, 1, d) each
    positions = torch.tensor([3, 1, 3 + shift, 1 + shift])
    cos, sin = rope_cos_sin(positions, head_dim)  # (4, d)
    qs = apply_rope(q.expand(1, 1, 4, head_dim), cos, sin)[0, 0]  # q at each position, (4, d)
    ks = apply_rope(k.expand(1, 1, 4, head_dim), cos, sin)[0, 0]  # (4, d)
    print(f"|q| = {q.norm():.6f}; |R_m q| at m = 3, 1, 103, 101: {[round(v, 6) for v in qs.norm(dim=-1).tolist()]}")
    print(f"q_3 · k_1 = {qs[0] @ ks[1]:.6f}    q_103 · k_101 = {qs[2] @ ks[3]:.6f}")


show_norms_and_shift()

# %% [markdown]
# ## 4.5 The interleaved layout, and converting between the two
#
# Meta's LLaMA code pairs neighbouring coordinates $(x_{2i}, x_{2i+1})$, reads each pair as the
# complex number $x_{2i} + \mathrm{i}\,x_{2i+1}$ (`torch.view_as_complex`), multiplies it by
# $e^{\mathrm{i} m\theta_i}$ and reads the result back as pairs. GPT-J does the same with real
# arithmetic (`rotate_every_two`). It is the same rotation as the half layout, applied to a
# different choice of planes; so the two layouts give different numbers for the same vector, and
# each is correct for the weights it was trained with.
#
# **The permutation.** Let $\pi = [0, 2, 4, \dots, d-2,\ 1, 3, \dots, d-1]$: evens first, then odds.
# Gathering $y = x[\pi]$ puts $x_{2i}$ at position $i$ and $x_{2i+1}$ at position $i + d/2$, i.e. it
# moves every interleaved plane onto the corresponding half-layout plane, with the same frequency.
# Hence, for every $x$ and every position,
#
# $$\operatorname{half}(x[\pi]) = \operatorname{interleaved}(x)[\pi].$$
#
# **Why converted checkpoints permute $W_Q$ and $W_K$.** A query is $q = W_Q x$ ($W_Q$ is the weight
# of `q_proj`, one row per coordinate of $q$), so $q[\pi]$ is computed by the matrix whose rows are
# those of $W_Q$ taken in the order $\pi$ (within each head).
# Scores are dot products, and a dot product does not change when both vectors are permuted the same
# way: $q[\pi]\cdot k[\pi] = q\cdot k$. So a model trained with the interleaved layout runs
# unchanged in half-layout code once the rows of $W_Q$ and $W_K$ of every head are reordered by
# $\pi$; that is what Hugging Face's LLaMA conversion script does. $W_V$ and $W_O$ are not touched:
# values are not rotated. Skip the permutation, or apply it twice, and the model loads without
# error and produces fluent-looking garbage: a layout mix-up is a silent bug that has been reported
# many times across transformers, flash-attention, llama.cpp and vLLM.

# %% [markdown]
# ### Exercise 4.5 — `apply_rope_interleaved(x, position_ids, base=10000.0)`
#
# `x` has shape (batch, heads, seq, head_dim) and `position_ids` shape (seq,) or (batch, seq).
# Rotate pairs $(2i, 2i+1)$ by $p\,\theta_i$ as complex numbers, in float32, and return the result in
# `x`'s dtype (Meta rotates in float32 and casts back). Raise `ValueError` for an odd head_dim.

# %%
#| export
def apply_rope_interleaved(x, position_ids, base=10000.0):
    """Interleaved (Meta / GPT-J) RoPE: (x_2i + i x_2i+1) * e^(i p theta_i). x: (B, H, L, D) -> (B, H, L, D)."""
    ### BEGIN SOLUTION
    # Hint: the idea: read each neighbouring pair (x_2i, x_2i+1) as one complex number, multiply it by
    #       e^(i·p·theta_i) in float32, and read the pairs back.
    #       Shapes: x (B, H, L, D); pairs (B, H, L, D/2) complex; angles (L, D/2) or (B, 1, L, D/2)
    head_dim = x.shape[-1]
    inv_freq = rope_inv_freq(head_dim, base, device=x.device)  # (d/2,)
    angles = position_ids[..., None].float() * inv_freq  # (L, d/2) or (B, L, d/2)
    if angles.dim() == 3:
        angles = angles[:, None]  # (B, 1, L, d/2): one table for every head
    # e^(i p theta_i)
    rotation = torch.polar(torch.ones_like(angles), angles)  # complex64
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2))  # (B, H, L, d/2) complex
    return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)  # (B, H, L, d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("apply_rope_interleaved", apply_rope_interleaved)

# %% [markdown]
# ### Exercise 4.6 — `interleaved_to_half_perm(head_dim)`
#
# Return $\pi$ as a LongTensor, so that `apply_rope(x[..., perm], cos, sin)` equals
# `apply_rope_interleaved(x, position_ids)[..., perm]`. Raise `ValueError` for an odd `head_dim`.

# %%
#| export
def interleaved_to_half_perm(head_dim):
    """perm = [0, 2, ..., d-2, 1, 3, ..., d-1]: x[..., perm] moves plane (2i, 2i+1) to (i, i + d/2)."""
    ### BEGIN SOLUTION
    # Hint: the idea: x[..., perm] must put x_2i at position i and x_2i+1 at position i + d/2.
    #       Shapes: perm (head_dim,) int64
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))  # (d,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("interleaved_to_half_perm", interleaved_to_half_perm)

# %% [markdown]
# The identity, measured on random vectors at positions up to 1000:

# %% tags=["demo"]
@demo
def show_permutation_identity(head_dim=64, seq=1000):
    x = torch.randn(2, 4, seq, head_dim)
    positions = torch.arange(seq)
    perm = interleaved_to_half_perm(head_dim)
    half = apply_rope(x[..., perm], *rope_cos_sin(positions, head_dim))
    interleaved = apply_rope_interleaved(x, positions)[..., perm]
    unpermuted = apply_rope(x, *rope_cos_sin(positions, head_dim)) - apply_rope_interleaved(x, positions)
    print(f"max |half(x[perm]) - interleaved(x)[perm]| = {(half - interleaved).abs().max():.2e}")
    print(f"without the permutation, the layouts differ by up to {unpermuted.abs().max():.2f}")


show_permutation_identity()

# %% [markdown]
# ## 4.6 What the rotations look like
#
# **One plane across positions.** Follow the coordinates $(x_i, x_{i+d/2})$ of one vector as its
# position grows. In the fastest plane ($\theta_0 = 1$ radian per token) the point runs around the
# circle every six tokens; plane 8 turns 4 radians in 40 tokens, plane 24 has barely moved. The radius
# never changes.

# %% tags=["demo"]
@demo
def plot_one_plane(head_dim=64, planes=(0, 8, 24), n_positions=40):
    x = torch.ones(1, 1, n_positions, head_dim)  # the same vector at every position
    out = apply_rope(x, *rope_cos_sin(torch.arange(n_positions), head_dim))[0, 0]  # (P, d)
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    for i in planes:
        theta = rope_inv_freq(head_dim)[i].item()
        ax.plot(out[:, i], out[:, i + head_dim // 2], "o-", ms=3, lw=0.6, label=f"plane {i}, θ = {theta:.3g}")
    ax.set_aspect("equal")
    ax.set_xlabel("coordinate i")
    ax.set_ylabel("coordinate i + d/2")
    ax.set_title("positions 0 .. 39 of one vector")
    ax.legend(fontsize=8)
    plt.show()


plot_one_plane()

# %% [markdown]
# **Scores against distance.** Two different quantities are easy to confuse here.
#
# * *A vector compared with itself* at distance $\Delta = n - m$ scores $q^\top\mathcal R_\Delta q$;
#   averaged over random $q$ (entries of variance 1) it equals $\sum_i 2\cos(\Delta\,\theta_i)$, the
#   trace of $\mathcal R_\Delta$. It is largest at $\Delta = 0$ and, with oscillations, smaller the
#   further apart the tokens are (left plot). For unrelated $q$ and $k$ the expected score is zero at
#   every distance: this is a tendency of matching content, not a rule.
# * *Su et al.'s long-term decay* (2021, §3.4.3) is a bound that holds for arbitrary $q$ and $k$. Write
#   the score as $\operatorname{Re}\sum_{i} h_i\,e^{\mathrm i\Delta\theta_i}$ with $h_i$ the product of
#   the two vectors' plane-$i$ coordinates read as complex numbers; summation by parts gives
#   $\lvert\text{score}\rvert \le \big(\max_i \lvert h_{i+1} - h_i\rvert\big) \sum_{j=1}^{d/2}
#   \lvert S_j\rvert$ with $S_j = \sum_{i<j} e^{\mathrm i\Delta\theta_i}$, and the average
#   $\frac{2}{d}\sum_j \lvert S_j\rvert$ shrinks as $\Delta$ grows (right plot). It is an upper bound on
#   the size a score *can* reach, not the score a model computes: a trained model can still point
#   $W_Q$, $W_K$ at the slow planes and attend far away.
#
# A larger base slows every plane but the first ($\theta_0 = \text{base}^0 = 1$ whatever the base) and
# stretches both curves to longer distances.

# %% tags=["demo"]
@demo
def plot_decay(head_dim=128, max_distance=3000):
    distance = torch.arange(max_distance, dtype=torch.float32)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 3))
    for base in (10000.0, 500000.0):
        theta = rope_inv_freq(head_dim, base)  # (d/2,)
        # E[q · R_Δ q] / E[|q|²] = sum_i 2 cos(Δ θ_i) / d
        score = 2 * torch.cos(distance[:, None] * theta).sum(dim=-1) / head_dim  # (Δ,)
        ax0.plot(distance, score, lw=0.8, label=f"base {base:g}")
        # S_j = sum_{i<j} e^(i Δ θ_i); Su et al.'s bound term (2/d) sum_j |S_j|
        partial = torch.polar(torch.ones_like(theta), distance[:, None] * theta).cumsum(dim=-1)  # (Δ, d/2)
        ax1.plot(distance, 2 * partial.abs().sum(dim=-1) / head_dim, lw=0.8, label=f"base {base:g}")
    for ax, title in ((ax0, "a vector with itself: mean score / |q|²"), (ax1, "Su et al.'s bound: (2/d) Σ_j |S_j|")):
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("distance n - m (tokens)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
    plt.show()


plot_decay()

# %% [markdown]
# **The spectrum.** Plane $i$ completes a turn every $2\pi/\theta_i = 2\pi\,\text{base}^{2i/d}$
# tokens. Planes whose period is longer than the training context never complete a turn during
# training: the model sees only part of a turn of them, most of one for a period just above the context,
# a small arc for the slowest planes. Past the training context those planes reach angles the model
# never saw, which is why lengths past the training context need the scaling methods of chapter 5.

# %% tags=["demo"]
@demo
def plot_spectrum(head_dim=128):
    fig, ax = plt.subplots(figsize=(7, 3))
    for base, who in ((10000.0, "LLaMA 1/2"), (500000.0, "LLaMA 3"), (1e6, "Code Llama")):
        period = 2 * torch.pi / rope_inv_freq(head_dim, base)  # (d/2,) tokens per turn
        ax.semilogy(period, ".", label=f"base {base:g} ({who})")
    for context in (4096, 8192):
        ax.axhline(context, color="gray", lw=0.6, ls="--")
    ax.set_xlabel("plane i")
    ax.set_ylabel("period 2π/θ_i (tokens)")
    ax.set_title("dashed: 4096 and 8192 tokens")
    ax.legend(fontsize=8)
    plt.show()


plot_spectrum()

# %% [markdown]
# ## 4.7 Find the bug, then write the test that finds it
#
# Below is a RoPE written the way a common tutorial implementation writes it (our code, the same
# idea). It runs, its shapes are right, and a model would even train with it. Run it, then look for
# the bug before reading on.

# %%
def suspicious_rope(x, position_ids, base=10000.0):
    head_dim = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = position_ids[:, None].float() * inv_freq  # (L, d/2)
    cos = angles.cos().repeat_interleave(2, dim=-1)  # (L, d)
    sin = angles.sin().repeat_interleave(2, dim=-1)
    half = head_dim // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


# %% tags=["demo"]
def probe_suspicious(head_dim=8):
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 1, 1, head_dim, generator=gen)
    positions = torch.tensor([3, 1, 10, 8])
    qs = suspicious_rope(q.expand(1, 1, 4, head_dim), positions)[0, 0]
    ks = suspicious_rope(k.expand(1, 1, 4, head_dim), positions)[0, 0]
    print(f"|q| = {q.norm():.4f}, |f(q, m)| for m = 3, 1, 10, 8: {[round(v, 4) for v in qs.norm(dim=-1).tolist()]}")
    print(f"f(q,3)·f(k,1) = {qs[0] @ ks[1]:.4f}   f(q,10)·f(k,8) = {qs[2] @ ks[3]:.4f}   (same distance)")


probe_suspicious()

# %% [markdown]
# **The bug: two layouts mixed.** `repeat_interleave(2)` builds tables for the *interleaved* layout,
# $(\cos m\theta_0, \cos m\theta_0, \cos m\theta_1, \cos m\theta_1, \dots)$, but `rotated` is the
# *half* layout's `rotate_half`. Coordinate $i$ is then combined with coordinate $i + d/2$ using the
# angle of a different plane than the one coordinate $i + d/2$ uses with $i$: the $2\times2$ blocks
# are no longer rotations. Norms change, and scores at the same distance differ. Either fix works:
# `cat(freqs, freqs)` with `rotate_half` (half layout), or `repeat_interleave` with a rotation of
# neighbouring pairs (interleaved layout). Write-ups of this code sometimes also state `rotate_half`
# as $(x_2, -x_1)$, with the minus sign on the first half: that turns every plane the other way
# ($-m\theta$), still a relative encoding but not the one the code, or any checkpoint, uses. The code's
# `cat(-x2, x1)` is the right one.
#
# No unit test that compares shapes, or that checks position 0 (where every RoPE is the identity),
# would have caught this. A *property* test does: it checks what RoPE is for, not how one library
# happens to compute it.

# %% [markdown]
# ### Exercise 4.7 — `check_relative_property(rope_fn, head_dim)`
#
# `rope_fn(x, position_ids)` takes `x` of shape (batch, heads, seq, head_dim) and `position_ids` of
# shape (seq,), and returns a tensor shaped like `x`. Return `True` when it has RoPE's three
# properties and `False` otherwise:
#
# 1. **norms are kept:** $\lVert f(x, m)\rVert = \lVert x\rVert$;
# 2. **scores are relative:** $\langle f(q, m), f(k, n)\rangle$ depends on $m - n$ only;
# 3. **the rotation changes with the position:** $f(x, m)$ is not the same vector for every $m$.
#
# The third is the one a test forgets, and it is what the most common real RoPE bug breaks. A no-op
# (`x` returned as it is, positions that never reach the tables, one rotation for every token) keeps
# every norm and gives every pair of tokens the same score at every distance: it passes 1 and 2 while
# encoding no position at all.
#
# The grader feeds your function correct and broken implementations. Judge the *property*, not a
# convention: a rotation the other way ($-m\theta$, e.g. `rotate_half` with its sign flipped),
# another base, the interleaved layout, partial rotary and positions shifted by a constant all have
# the property and must be accepted. "Relative" asks each plane's angle to be an *affine* function of
# the position, $m\theta_i + c_i$, not a proportional one: shifting every position by 7 adds the
# constant $c_i = 7\theta_i$ and changes no score. Reject a layout mix, a sign error that breaks the
# rotation, an angle that is not affine in the position, a no-op, and a change of length.
#
# (Chapter 5's YaRN multiplies cos and sin by one constant, its attention factor: a rotation times a
# global temperature. Every norm is then multiplied by that same constant and scores stay relative,
# so property 1 holds up to the constant. Plain RoPE has no such factor: here a change of length is a
# bug.)
#
# Practical advice: use a few random $q$, $k$ (in float32 or float64); put the same vector at
# positions $0, 1, \dots, 255$ so that one call gives every $f(q, m)$; compare every score with the
# score at the same distance measured from position 0, and check that some $f(q, m)$ moves away from
# $f(q, 0)$. A correct float32 RoPE agrees with itself to a few $10^{-6}\,\lVert q\rVert\lVert k\rVert$
# at these positions, and every broken variant misses by far more than $10^{-3}$: use a relative
# tolerance between the two. Return a Python `bool`.

# %%
#| export
def check_relative_property(rope_fn, head_dim, n_positions=256, n_vectors=4, rtol=1e-3):
    """True when rope_fn(x, position_ids) keeps norms, makes <f(q, m), f(k, n)> a function of m - n, and
    actually changes with the position (a no-op keeps norms and relative scores, and encodes nothing).

    The same random q (and k) is placed at positions 0 .. P-1, so one call gives f(q, m) for every m.
    Then every score S[m, n] = <f(q, m), f(k, n)> must equal the score at the same distance measured
    from position 0: S[m - n, 0] when m >= n, S[0, n - m] otherwise. Errors are measured relative to
    |q| |k|, the largest a score can be.
    """
    ### BEGIN SOLUTION
    # Hint: the idea: put the same random q (and k) at every position 0 .. P-1, call rope_fn once, and
    #       test the three properties of the text on the results.
    #       Shapes: q expanded to (V, 1, P, d); f(q) (V, 1, P, d); scores S (V, P, P)
    rng = torch.Generator().manual_seed(0)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)  # (V, 1, 1, d)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)
    positions = torch.arange(n_positions)  # (P,)
    fq = rope_fn(q.expand(-1, 1, n_positions, -1).contiguous(), positions)  # (V, 1, P, d): f(q, m) for every m
    fk = rope_fn(k.expand(-1, 1, n_positions, -1).contiguous(), positions)
    if not (isinstance(fq, torch.Tensor) and fq.shape == (n_vectors, 1, n_positions, head_dim)
            and fk.shape == fq.shape and torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    fq, fk = fq[:, 0].double(), fk[:, 0].double()  # (V, P, d)
    # 1. |f(x, m)| = |x|
    for x, fx in ((q, fq), (k, fk)):
        norm = x[:, 0].double().norm(dim=-1)  # (V, 1)
        if ((fx.norm(dim=-1) - norm).abs() > rtol * norm).any():
            return False
        # 3. f(x, m) moves away from f(x, 0) for some m: the position is used at all
        moved = (fx - fx[:, :1]).norm(dim=-1).amax(dim=-1, keepdim=True)  # (V, 1)
        if (moved <= rtol * norm).any():
            return False
    # 2. S[m, n] = S[m - n, 0] (m >= n) or S[0, n - m] (m < n)
    scores = fq @ fk.transpose(-1, -2)  # (V, P, P)
    delta = positions[None, :] - positions[:, None]  # (P, P): n - m
    same_distance = torch.where(delta >= 0, scores[:, 0, delta.clamp(min=0)], scores[:, (-delta).clamp(min=0), 0])
    scale = q[:, 0, 0].double().norm(dim=-1) * k[:, 0, 0].double().norm(dim=-1)  # (V,)
    return bool(((scores - same_distance).abs() <= rtol * scale[:, None, None]).all())
    ### END SOLUTION


# %% tags=["selfcheck"]
check("check_relative_property", check_relative_property)

# %% [markdown]
# Your test against the suspicious function, a correct RoPE in each layout, a correct RoPE that
# turns the other way, and a no-op:

# %% tags=["demo"]
@demo
def run_property_test(head_dim=64):
    def other_way(x, position_ids):  # angle -m θ: rotate_half with its sign flipped
        cos, sin = rope_cos_sin(position_ids, head_dim)
        return apply_rope(x, cos, -sin)

    candidates = {
        "suspicious_rope (layout mix)": suspicious_rope,
        "half layout": lambda x, p: apply_rope(x, *rope_cos_sin(p, head_dim)),
        "interleaved layout, base 1e6": lambda x, p: apply_rope_interleaved(x, p, base=1e6),
        "turning the other way": other_way,
        "a no-op (positions ignored)": lambda x, p: x.clone(),
    }
    for name, fn in candidates.items():
        print(f"{name:<32} {check_relative_property(fn, head_dim)}")


run_property_test()

# %% [markdown]
# ## 4.8 RoPE inside attention
#
# **Where.** RoPE acts on the query and key *after* their projections, per head, right before the
# scores. Rotating the token embedding before $W_Q$ would not do: $W_Q\mathcal R_m x$ puts the
# projection after the rotation, and the score $x^\top\mathcal R_m^\top W_Q^\top W_K\mathcal R_n x'$
# is relative only if $W_Q^\top W_K$ commutes with every rotation, which a learned matrix does not.
#
# **Only $q$ and $k$.** The design goal concerns the score. Values are not rotated: the output
# $\sum_n a_{mn} v_n$ would otherwise carry each key's absolute rotation $\mathcal R_n v_n$ into the
# next layer. Forgetting to rotate $k$ is the opposite mistake: the score becomes
# $q^\top\mathcal R_m^\top k$, which depends on the query's absolute position.
#
# **A causal mask and SDPA.** RoPE changes $q$ and $k$ only, so
# `F.scaled_dot_product_attention(q, k, v, is_causal=True)` and its fast kernels work unchanged
# (an additive bias, chapter 3, would rule the flash kernel out).
#
# **Decoding with a KV cache.** A generating model computes each new token's $q$, $k$, $v$ once and
# keeps the keys and values of all earlier tokens. Because a key's rotation depends on its own
# position only, the cache stores keys **already rotated**; they never need rotating again. The new
# tokens sit at positions `past, past + 1, ...` where `past` is the number of cached tokens: a
# layer that restarts its positions at 0 for every call gives each new token a wrong distance to
# everything in the cache. With several new tokens and a cache, the queries are aligned to the
# *end* of the keys (query $i$ sits at position $k_{len} - q_{len} + i$); SDPA's `is_causal=True`
# aligns them to the start, so that case needs an explicit mask, and a boolean one (`True` = may
# attend): SDPA *adds* a float mask to the scores, so a float tensor of ones and zeros masks nothing.
#
# **`position_ids`.** Hugging Face passes positions explicitly, shaped (batch, seq). With left
# padding (batched generation), it counts them from each row's first real token
# (`attention_mask.cumsum(-1) - 1`); in packed training sequences (`DataCollatorWithFlattening`) they
# restart at 0 for every document, and the flash-attention path finds the document boundaries where
# they restart. For RoPE alone a constant shift of all positions of a sequence changes no score
# (4.3), so the padding offset cancels; what must hold is that queries and keys of one sequence use
# one numbering, and that pads and other documents are masked out. The cell below shows both cases.

# %% tags=["demo"]
@demo
def show_padding_and_packing(head_dim=16):
    gen = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 1, 1, 5, head_dim, generator=gen)  # one sequence of 5 tokens

    def attend(q, k, v, position_ids, allowed):
        cos, sin = rope_cos_sin(position_ids, head_dim)
        return F.scaled_dot_product_attention(apply_rope(q, cos, sin), apply_rope(k, cos, sin), v, attn_mask=allowed)

    alone = attend(q, k, v, torch.arange(5), torch.ones(5, 5, dtype=torch.bool).tril())
    # left padding: 3 pad slots in front, masked out as keys (each pad only sees itself)
    pad = torch.zeros(1, 1, 3, head_dim)
    padded = [torch.cat((pad, t), dim=2) for t in (q, k, v)]
    allowed = torch.ones(8, 8, dtype=torch.bool).tril()
    allowed[:, :3] = False
    allowed[:3, :3] = torch.eye(3, dtype=torch.bool)
    for name, positions in (("counted from the pads", torch.arange(8)),
                            ("counted from the first real token", torch.tensor([1, 1, 1, 0, 1, 2, 3, 4]))):
        out = attend(*padded, positions, allowed)[:, :, 3:]
        print(f"left padding, positions {name}: max diff to the unpadded run {(out - alone).abs().max():.1e}")
    # packing: a 3-token document, then our 5 tokens; positions restart, the mask is block-diagonal
    other = torch.randn(3, 1, 1, 3, head_dim, generator=gen)
    packed = [torch.cat((a, b), dim=2) for a, b in zip(other, (q, k, v))]
    positions = torch.tensor([0, 1, 2, 0, 1, 2, 3, 4])
    block = torch.zeros(8, 8, dtype=torch.bool)
    block[:3, :3], block[3:, 3:] = True, True
    causal = torch.ones(8, 8, dtype=torch.bool).tril()
    out = attend(*packed, positions, block & causal)[:, :, 3:]
    leak = attend(*packed, positions, causal)[:, :, 3:]
    print(f"packed, block-diagonal mask: max diff {(out - alone).abs().max():.1e}; "
          f"without it: {(leak - alone).abs().max():.2f}")


show_padding_and_packing()

# %% [markdown]
# ### Exercise 4.8 — `RoPEAttention(d_model, num_heads, base=10000.0)`
#
# Multi-head self-attention with four `nn.Linear` layers without bias named `q_proj`, `k_proj`,
# `v_proj`, `o_proj` (the names of Llama checkpoints, so a `state_dict` loads by name). Raise
# `ValueError` when `d_model` is not divisible by `num_heads` or the head width is odd.
#
# `forward(x, position_ids=None, causal=True, kv_cache=None)`:
# * `x` is (batch, seq, d_model); `kv_cache` is `None` or the `(k, v)` returned by the previous call,
#   each (batch, heads, past, head_dim);
# * `position_ids` of shape (seq,) or (batch, seq); when `None`, the positions continue after the
#   cache: `past .. past + seq - 1`;
# * rotate $q$ and $k$ with `apply_rope` (half layout), append the new keys and values to the cache,
#   attend with `F.scaled_dot_product_attention` (causal or not; queries aligned to the end of the
#   keys), merge the heads and apply `o_proj`;
# * return `(out, (k, v))`, where `k` holds the rotated keys of all positions so far.
#
# Build positions and tables on `x.device`, and let `apply_rope` cast them to `x.dtype`.

# %%
#| export
class RoPEAttention(nn.Module):
    """Multi-head attention with rotary embeddings on q and k (half layout), SDPA and a KV cache.

    scores[m, n] = <R_m W_Q x_m, R_n W_K x_n> / sqrt(d_head) depends on m - n only (Su et al., 2021);
    values are not rotated. The cache keeps keys already rotated at their own positions.
    """

    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        ### BEGIN SOLUTION
        # Hint: the idea: check the sizes, remember them, create the four projections of a Llama attention
        #       layer.
        #       Shapes: each weight (d_model, d_model); head_dim = d_model / num_heads, even
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        if (d_model // num_heads) % 2 != 0:
            raise ValueError(f"head_dim = d_model / num_heads must be even, got head_dim={d_model // num_heads}")
        self.d_model, self.num_heads, self.head_dim, self.base = d_model, num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        ### END SOLUTION

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        ### BEGIN SOLUTION
        # Hint: the idea: project, split the heads, rotate q and k at their positions, extend the cache,
        #       attend, merge the heads, project back.
        #       Shapes: x (B, L, d); q, k, v (B, H, L, d_head); cache (B, H, past, d_head); keys with the cache
        #       (B, H, K, d_head), K = past + L; output (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        batch, seq, _ = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            # the new tokens follow the cached ones
            position_ids = torch.arange(past, past + seq, device=x.device)  # (L,)

        def heads(t):  # (B, L, d) -> (B, H, L, d_head)
            return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)  # (L, d_head) or (B, L, d_head)
        # rotate after the projections, queries and keys only
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # (B, H, L, d_head)
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=2)  # (B, H, K, d_head), K = past + L
            v = torch.cat((kv_cache[1], v), dim=2)
        k_len = k.shape[2]
        if not causal or seq == 1:
            out = F.scaled_dot_product_attention(q, k, v)
        elif seq == k_len:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # query i sits at position k_len - seq + i (is_causal would align it to the start)
            allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)  # (L, K)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        out = out.transpose(1, 2).reshape(batch, seq, self.d_model)  # (B, L, d)
        return self.o_proj(out), (k, v)
        ### END SOLUTION


# %% tags=["selfcheck"]
check("RoPEAttention", RoPEAttention)

# %% [markdown]
# Decoding token by token with the cache gives the rows of the full forward pass, and shifting all
# positions by 1000 changes nothing but float32 rounding:

# %% tags=["demo"]
@demo
def show_decoding(d_model=64, num_heads=4, seq=12, prefix=5):
    attention = RoPEAttention(d_model, num_heads).eval()
    x = torch.randn(2, seq, d_model)
    with torch.no_grad():
        full, _ = attention(x)
        out, cache = attention(x[:, :prefix])  # prefill
        steps = [out]
        for t in range(prefix, seq):  # one token at a time
            out, cache = attention(x[:, t:t + 1], kv_cache=cache)
            steps.append(out)
        shifted, _ = attention(x, position_ids=torch.arange(1000, 1000 + seq))
    print(f"decoding vs full forward: max diff {(torch.cat(steps, dim=1) - full).abs().max():.1e}")
    print(f"positions + 1000 vs positions 0..{seq - 1}: max diff {(shifted - full).abs().max():.1e}")


show_decoding()

# %% [markdown]
# Finally, a checkpoint trained with Meta's interleaved layout, loaded into the half-layout layer:
# the rows of $W_Q$ and $W_K$ are reordered by $\pi$ in every head, $W_V$ and $W_O$ are copied as
# they are, and the outputs agree.

# %% tags=["demo"]
@demo
def show_checkpoint_conversion(d_model=64, num_heads=4, seq=10):
    head_dim = d_model // num_heads
    wq, wk, wv, wo = (torch.randn(d_model, d_model) / d_model**0.5 for _ in range(4))
    x = torch.randn(2, seq, d_model)

    def meta_style(x):  # interleaved layout, Meta's weights
        def heads(t):
            return t.view(2, seq, num_heads, head_dim).transpose(1, 2)

        positions = torch.arange(seq)
        q, k = apply_rope_interleaved(heads(x @ wq.T), positions), apply_rope_interleaved(heads(x @ wk.T), positions)
        out = F.scaled_dot_product_attention(q, k, heads(x @ wv.T), is_causal=True)
        return out.transpose(1, 2).reshape(2, seq, d_model) @ wo.T

    # the rows of each head, reordered by perm: row h * d_head + perm[j] moves to h * d_head + j
    rows = (torch.arange(num_heads)[:, None] * head_dim + interleaved_to_half_perm(head_dim)).flatten()
    attention = RoPEAttention(d_model, num_heads)
    state = {"q_proj.weight": wq[rows], "k_proj.weight": wk[rows], "v_proj.weight": wv, "o_proj.weight": wo}
    attention.load_state_dict(state)
    with torch.no_grad():
        converted, _ = attention(x)
        attention.load_state_dict({**state, "q_proj.weight": wq, "k_proj.weight": wk})
        unconverted, _ = attention(x)
    print(f"permuted rows: max diff {(converted - meta_style(x)).abs().max():.1e}; "
          f"rows as they were: {(unconverted - meta_style(x)).abs().max():.2f}")


show_checkpoint_conversion()

# %% [markdown]
# ## 4.9 Which base?
#
# The base sets the slowest clock. The values in released models, from their configurations
# (`rope_theta`):
#
# | model | base (`rope_theta`) |
# | --- | --- |
# | LLaMA 1, LLaMA 2 | 10 000 |
# | Code Llama | 1 000 000 |
# | LLaMA 3 (and 3.1, which adds "llama3" frequency scaling) | 500 000 |
# | Mistral 7B v0.1 / v0.2 | 10 000 / 1 000 000 |
#
# LLaMA 2 kept 10 000; claims that it raised the base (one tutorial says to 50 000) are wrong.
# And RoPE does not give unlimited context: a model rotates its queries and keys by angles it never
# saw in training once a sequence runs past its training length, and its quality drops there.
# Press et al. (2022) measured this for sinusoidal, rotary and T5-bias models alike; position
# interpolation, NTK-aware and YaRN scaling, and Llama 3's scaling (chapter 5) are the remedies.

# %% [markdown]
# ## 4.10 Summary
#
# * RoPE rotates plane $i$ of every query and key by $m\theta_i$, $\theta_i = \text{base}^{-2i/d}$;
#   scores then depend on $m - n$ only and norms are kept, for any choice of frequencies.
# * Half layout: $x\odot C + \operatorname{rotate\_half}(x)\odot S$ with `cat(freqs, freqs)` tables;
#   interleaved layout: pairs $(2i, 2i+1)$ as complex numbers. The permutation
#   $[0, 2, \dots, 1, 3, \dots]$ converts, and converted checkpoints permute the rows of $W_Q$, $W_K$.
# * Apply it after the projections, to $q$ and $k$ only; cache rotated keys; continue positions
#   after the cache; align queries to the end of the keys.
# * Test RoPE by its properties. They catch the layout mix that shape tests miss, and accept every
#   correct variant.
#
# **Further reading.** Su et al. (2021), *RoFormer: Enhanced Transformer with Rotary Position
# Embedding*. Black et al. (2022), *GPT-NeoX-20B* (partial rotary). Touvron et al. (2023), *LLaMA*;
# Rozière et al. (2023), *Code Llama* (base $10^6$). Press et al. (2022), *Train Short, Test Long*
# (ALiBi, and how rotary models extrapolate). Chen et al. (2023), *Extending Context Window of Large
# Language Models via Positional Interpolation*.


# %% [markdown]
# ## Hand your code on
#
# Chapter 7 trains small language models with every position scheme of the course, built from *your* code.
# Once this chapter's exercises pass their self-checks, run the cell below: it copies them (with the imports
# and helpers they use) into `posenc_mine/ch04.py` beside this notebook, and runs their self-checks on the
# copy. Run it again whenever you change an exercise. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("04_rope", globals())
