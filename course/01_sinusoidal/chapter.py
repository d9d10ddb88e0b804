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
# # Chapter 1 — Sinusoidal positional encoding
#
# Chapter 0 showed that attention, on its own, cannot tell "dog bites man" from "man bites dog":
# permute the tokens and the outputs are permuted the same way, nothing more. The original
# Transformer (Vaswani et al., 2017) fixes this by *adding* a fixed vector $PE[p]$ to the embedding
# of the token at position $p$. This chapter builds that table, explains its odd-looking formula,
# and proves the two properties that motivated it:
#
# 1. **Shifts are linear.** For every offset $k$ there is one matrix $M_k$ with
#    $PE[p+k] = M_k\,PE[p]$ *for all* $p$. A layer can learn "look $k$ tokens back" once and use it
#    everywhere.
# 2. **Dot products depend on distance only.** $PE[p]\cdot PE[q]$ is a function of $p-q$.
#
# You will implement `sinusoidal_table`, `SinusoidalPositionalEncoding` and `shift_matrix`.
# After each exercise a self-check cell runs your code on small inputs and tells you what is
# wrong, if anything.

# %%
#| export
import torch
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
# ## 1.1 The formula
#
# For a model width $d$ (even) and position $p = 0, 1, 2, \dots$, pair up the dimensions as
# $(2i, 2i+1)$ for $i = 0, \dots, d/2 - 1$ and give pair $i$ the angular frequency
#
# $$\omega_i = \text{base}^{-2i/d}, \qquad \text{base} = 10000.$$
#
# Then
#
# $$PE[p, 2i] = \sin(p\,\omega_i), \qquad PE[p, 2i+1] = \cos(p\,\omega_i).$$
#
# Three details matter and are easy to get wrong:
#
# * The exponent is $2i/d$, where $2i$ is the index of the *even* dimension. It runs from $0$ up to
#   $(d-2)/d$, so $\omega$ goes from $1$ down to almost $1/\text{base}$. Writing $i/d$ instead only
#   reaches $\text{base}^{-1/2}$: half the spectrum is missing.
# * Sine goes in the even column, cosine in the odd one, and the two members of a pair sit side by
#   side (interleaved). Putting all sines first and all cosines after (`cat`) is a different table;
#   it works for a model trained with it, but it is not the Transformer's.
# * Angles are computed in float32, as in practitioners' code. A float32 angle $p\,\omega$ carries
#   a relative error of about $6\cdot10^{-8}$, so at position $20\,000$ the table is only good to
#   about $10^{-3}$. That is a property of the number format, not a bug.
#
# ### Why geometric frequencies?
#
# Pair $i$ is a clock that turns by $\omega_i$ radians per token; its period is
# $2\pi/\omega_i = 2\pi\,\text{base}^{2i/d}$ tokens. The fastest clock ($i=0$) has period $2\pi
# \approx 6.3$ tokens and tells neighbours apart; the slowest has period about $2\pi\cdot 10^4$
# tokens and changes so slowly that it separates the beginning of a long document from its end.
# Spacing the periods *geometrically* (each pair slower by the same factor
# $\text{base}^{2/d}$) gives every scale of distance — 1, 10, 100, 1000 tokens — the same number of
# clocks, like the hands of a watch or the digits of a number. Linear spacing would spend most
# pairs on periods of the same order and leave both short and long distances poorly resolved.

# %% [markdown]
# ### Exercise 1.1 — `sinusoidal_table(seq_len, d_model, base=10000.0)`
#
# Return the $(\text{seq\_len}, d)$ table above as a float32 tensor. Raise `ValueError` with a
# message naming the argument and its value when `d_model` is odd or not positive, or when
# `seq_len` is not positive. Interleaving sin and cos needs an even width, and a common tutorial
# implementation shows why the check belongs at the top:
#
# ```python
# import math
#
# table = torch.zeros(max_len, d_model)
# pos = torch.arange(max_len).unsqueeze(1)
# freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
# table[:, 0::2] = torch.sin(pos * freq)
# table[:, 1::2] = torch.cos(pos * freq)
# ```
#
# With `d_model = 7`, `freq` has 4 entries but `table[:, 1::2]` only 3 columns, and the last line
# fails with "The expanded size of the tensor (3) must match the existing size (4)": nothing in it
# says that the width is odd.
#
# The keyword argument `device` lets the module below build the table where its inputs live.

# %%
#| export
def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    """PE[p, 2i] = sin(p * w_i), PE[p, 2i+1] = cos(p * w_i), w_i = base^(-2i/d). Returns (seq_len, d_model)."""
    ### BEGIN SOLUTION
    # Hint: the idea: one angle p·w_i per position p and pair i; its sine goes in column 2i, its cosine in
    #       column 2i+1. Check the arguments first.
    #       Shapes: w (d/2,), positions (L,), angles (L, d/2), table (L, d)
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if seq_len <= 0:
        raise ValueError(f"seq_len must be positive, got seq_len={seq_len}")
    # w_i = base^(-2i/d), i = 0 .. d/2 - 1, in float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32, device=device) / d_model))  # (d/2,)
    positions = torch.arange(seq_len, dtype=torch.float32, device=device)  # (L,)
    # angle[p, i] = p * w_i
    angles = torch.outer(positions, inv_freq)  # (L, d/2)
    pe = torch.empty(seq_len, d_model, dtype=torch.float32, device=device)  # (L, d)
    # PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i): interleaved, even columns first
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe
    ### END SOLUTION


# %% tags=["selfcheck"]
check("sinusoidal_table", sinusoidal_table)

# %% [markdown]
# ## 1.2 What the table looks like
#
# Each row is a position, each column a dimension. On the left, the fast clocks oscillate
# quickly down the rows; towards the right, the columns barely change over 100 positions.

# %% tags=["demo"]
@demo
def plot_table(seq_len=100, d_model=128):
    pe = sinusoidal_table(seq_len, d_model)
    fig, ax = plt.subplots(figsize=(9, 3.5))
    image = ax.imshow(pe.numpy(), aspect="auto", cmap="RdBu", vmin=-1, vmax=1)
    ax.set_xlabel("dimension")
    ax.set_ylabel("position p")
    ax.set_title(f"Sinusoidal table, d = {d_model}")
    fig.colorbar(image, ax=ax)
    plt.show()


plot_table()

# %% [markdown]
# ## 1.3 Shifting is a rotation: $PE[p+k] = M_k\,PE[p]$
#
# Take one pair, $u_i(p) = \big(\sin p\omega_i,\ \cos p\omega_i\big)$. The angle-addition formulas
#
# $$\sin(a+b) = \sin a\cos b + \cos a \sin b, \qquad \cos(a+b) = \cos a \cos b - \sin a \sin b$$
#
# with $a = p\omega_i$, $b = k\omega_i$ give
#
# $$u_i(p+k) = \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i
# \end{pmatrix} u_i(p) =: R_i(k)\, u_i(p).$$
#
# The $2\times2$ matrix $R_i(k)$ contains $k$ but **not** $p$. Stack the $d/2$ pairs and
#
# $$M_k = \operatorname{diag}\big(R_0(k), R_1(k), \dots, R_{d/2-1}(k)\big)$$
#
# maps $PE[p]$ to $PE[p+k]$ for every $p$ at once. Each $R_i(k)$ is a rotation, so $M_k$ is
# orthogonal: $M_k M_k^\top = I$, $M_{-k} = M_k^\top$, and $M_j M_k = M_{j+k}$. Vaswani et al.
# (2017) chose sinusoids because they hypothesised that this linearity would let the model
# "easily learn to attend by relative positions".
#
# Mind the sign: with sine first in each pair, the $\sin k\omega$ term sits in the *upper right*.
# Writing the textbook rotation $\begin{pmatrix}\cos & -\sin\\ \sin & \cos\end{pmatrix}$ gives
# $M_{-k}$, which moves positions backwards.

# %% [markdown]
# ### Exercise 1.2 — `shift_matrix(k, d_model, base=10000.0)`
#
# Return the $(d, d)$ float32 matrix $M_k$. `k` may be negative. Raise `ValueError` for an odd or
# non-positive `d_model`.

# %%
#| export
def shift_matrix(k, d_model, base=10000.0):
    """M_k = diag(R_0(k), ..., R_{d/2-1}(k)), R_i(k) = [[cos kw_i, sin kw_i], [-sin kw_i, cos kw_i]]. (d, d)."""
    ### BEGIN SOLUTION
    # Hint: the idea: M_k is block-diagonal, one 2x2 rotation R_i(k) per pair (2i, 2i+1), with the angle
    #       k·w_i and the sine in the upper right (section 1.3).
    #       Shapes: angles (d/2,), M_k (d, d)
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    # w_i = base^(-2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model))  # (d/2,)
    angle = k * inv_freq  # (d/2,)
    cos, sin = torch.cos(angle), torch.sin(angle)  # (d/2,)
    idx = torch.arange(0, d_model, 2)  # (d/2,) first row/column of each block
    m = torch.zeros(d_model, d_model, dtype=torch.float32)  # (d, d)
    # R_i(k) = [[cos, sin], [-sin, cos]]
    m[idx, idx] = cos
    m[idx, idx + 1] = sin
    m[idx + 1, idx] = -sin
    m[idx + 1, idx + 1] = cos
    return m
    ### END SOLUTION


# %% tags=["selfcheck"]
check("shift_matrix", shift_matrix)

# %% [markdown]
# Now see it: map every row of the table through $M_{k}$ and compare with the table shifted by
# $k$ rows. The error is at float32 rounding level, for every position.

# %% tags=["demo"]
@demo
def show_linearity(k=7, d_model=64, seq_len=200):
    pe = sinusoidal_table(seq_len + k, d_model)
    mapped = pe[:seq_len] @ shift_matrix(k, d_model).T  # row p is M_k PE[p]
    err = (mapped - pe[k:]).abs().max(dim=1).values
    print(f"max over dimensions and positions of |M_k PE[p] - PE[p+k]|: {err.max():.2e}")
    fig, ax = plt.subplots(figsize=(7, 2.5))
    ax.semilogy(err.numpy() + 1e-12)
    ax.set_xlabel("position p")
    ax.set_ylabel("max error")
    ax.set_title(f"M_k PE[p] vs PE[p+k], k = {k}")
    plt.show()


show_linearity()

# %% [markdown]
# ## 1.4 Dot products depend only on distance
#
# Within pair $i$,
#
# $$u_i(p)\cdot u_i(q) = \sin p\omega_i \sin q\omega_i + \cos p\omega_i \cos q\omega_i = \cos\big((p-q)\omega_i\big),$$
#
# so $PE[p]\cdot PE[q] = \sum_i \cos\big((p-q)\omega_i\big)$: a function of $p-q$ alone, symmetric in
# its sign, largest ($= d/2$) at distance $0$ and, on average, smaller the further apart the
# positions. In the plot, curves for different starting positions $p$ lie exactly on top of each
# other.
#
# Two caveats keep this from being the whole story. The symmetry means the raw table cannot say
# whether $q$ is *before* or *after* $p$ through this dot product (the model must use the
# projections $W_Q, W_K$ for that). And in a real layer the score is
# $(x_p + PE[p])^\top W_Q^\top W_K (x_q + PE[q])$, whose cross terms mix content with absolute
# position; chapter 3 expands that product and chapter 4 removes the cross terms with rotations.

# %% tags=["demo"]
@demo
def plot_dot_by_distance(d_model=128, seq_len=400):
    pe = sinusoidal_table(seq_len, d_model)
    fig, ax = plt.subplots(figsize=(7, 3))
    for p in (0, 100, 200):
        distance = torch.arange(seq_len) - p
        ax.plot(distance.numpy(), (pe @ pe[p]).numpy(), label=f"p = {p}", alpha=0.8)
    ax.set_xlabel("q - p")
    ax.set_ylabel("PE[p] · PE[q]")
    ax.legend()
    plt.show()


plot_dot_by_distance()

# %% [markdown]
# ## 1.5 The module
#
# In a model the table is computed once and stored with the module. Three requirements:
#
# * **No trainable parameters.** The table is a fixed function of the position. Store it with
#   `register_buffer` (not `nn.Parameter`, not a plain attribute): buffers are moved by
#   `.to(device)`, cast by `.to(dtype)`, and skipped by the optimizer. A plain attribute stays on
#   the CPU when the model moves to a GPU, which then fails with a device mismatch.
#   Hugging Face registers such tables with `persistent=False` so they stay out of checkpoints.
# * **Any length.** The module precomputes `max_len` rows, but the formula is defined for every
#   position. A longer input must still work: compute the missing rows (on the input's device).
#   Slicing a 5000-row table with `[:seq_len]` silently returns fewer rows than asked for, and
#   the addition then fails with a broadcasting error far from the cause.
# * **Offsets.** When decoding with a cache, the new token sits at position `offset`, not 0, so
#   `forward(x, offset)` adds rows `offset .. offset + seq_len - 1`.
#
# The output is `dropout(x + PE)` in `x`'s dtype.

# %% [markdown]
# ### Exercise 1.3 — `SinusoidalPositionalEncoding(d_model, max_len=5000, base=10000.0, dropout=0.0)`
#
# `forward(x, offset=0)` takes `x` of shape (batch, seq, d_model). Raise `ValueError` for an odd
# `d_model`, a non-positive `max_len`, a negative `offset`, or an input whose last dimension is
# not `d_model`.

# %%
#| export
class SinusoidalPositionalEncoding(nn.Module):
    """x + PE[offset : offset + seq] with a fixed, non-trainable table (Vaswani et al., 2017)."""

    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        ### BEGIN SOLUTION
        # Hint: the idea: compute the table once and keep it in the module, moved by .to() but never trained.
        #       Shapes: the table (max_len, d_model)
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.d_model, self.base = d_model, base
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model, base), persistent=False)  # (max_len, d)
        ### END SOLUTION

    def forward(self, x, offset=0):
        ### BEGIN SOLUTION
        # Hint: the idea: add rows offset .. offset + seq - 1 of the table to x; rows past max_len are computed,
        #       not sliced from a table that does not have them.
        #       Shapes: x (B, L, d), the rows (L, d), the output (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got offset={offset}")
        seq_len = x.shape[1]
        end = offset + seq_len
        if end <= self.pe.shape[0]:
            pe = self.pe[offset:end]  # (L, d)
        else:
            # past max_len: the formula still holds; build the rows where x lives
            pe = sinusoidal_table(end, self.d_model, self.base, device=x.device)[offset:]  # (L, d)
        return self.dropout(x + pe.to(x.dtype))  # (B, L, d)
        ### END SOLUTION


# %% tags=["selfcheck"]
check("SinusoidalPositionalEncoding", SinusoidalPositionalEncoding)

# %% [markdown]
# ## 1.6 Summary
#
# * $PE[p, 2i] = \sin(p\,\text{base}^{-2i/d})$, $PE[p, 2i+1] = \cos(\cdot)$: geometric frequencies
#   cover every scale of distance.
# * $PE[p+k] = M_k PE[p]$ with $M_k$ block-diagonal rotations independent of $p$; $PE[p]\cdot
#   PE[q]$ depends on $p-q$ only.
# * Store the table as a non-persistent buffer; compute rows past `max_len` instead of slicing.
#
# **Further reading.** Vaswani et al. (2017), *Attention Is All You Need*, §3.5. The "additive"
# absolute encodings of this chapter and the next are what relative schemes (chapter 3) and
# rotary embeddings (chapter 4; Su et al., 2021) improve on.


# %% [markdown]
# ## Hand your code on
#
# Chapter 7 trains small language models with every position scheme of the course, built from *your* code.
# Once this chapter's exercises pass their self-checks, run the cell below: it copies them (with the imports
# and helpers they use) into `posenc_mine/ch01.py` beside this notebook, and runs their self-checks on the
# copy. Run it again whenever you change an exercise. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("01_sinusoidal", globals())
