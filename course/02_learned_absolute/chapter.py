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
# # Chapter 2 — Learned absolute positions
#
# Chapter 1 added a fixed vector $PE[p]$, given by a formula, to the token at position $p$. The
# simplest alternative is to give up the formula: keep a table with one vector per position and let
# gradient descent choose its entries like any other weight. BERT (Devlin et al., 2019), GPT-2
# (Radford et al., 2019) and the vision Transformers ViT (Dosovitskiy et al., 2021) and DeiT
# (Touvron et al., 2021) all do this. (DeiT keeps ViT's learned absolute table; the relative
# position *bias* tables of chapter 3 come from other models, such as Swin, Liu et al., 2021.)
#
# This chapter builds the layer, shows why it cannot go past the length of its table, and covers
# the one thing practitioners do about it: **interpolating** a trained table to a new length, as
# vision models do when they change image resolution. You will implement
# `LearnablePositionalEncoding` and `resize_position_table`.

# %%
#| export
import torch
from torch import nn

# %%
import matplotlib.pyplot as plt
import torch.nn.functional as F

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 2.1 A table of positions is an embedding layer
#
# Let $E \in \mathbb{R}^{N\times d}$ be a matrix with one row per position, $N$ = `max_len`. The
# layer adds row $p$ to the token at position $p$:
#
# $$h_p = x_p + E[p] = x_p + E^\top \mathbf{e}_p ,$$
#
# where $\mathbf e_p$ is the one-hot vector of $p$. Looking up a row is a matrix product with a
# one-hot vector, which is exactly what `nn.Embedding(N, d)` computes (without building the one-hot
# vectors). The model's positional information is now whatever the $N\cdot d$ numbers in $E$ learn
# to be: nothing forces $E[p]$ and $E[p+1]$ to be similar, or distances to be encoded in any regular
# way. In trained models they often are smooth in $p$, because that is useful, not because the
# layer guarantees it.
#
# ### Which rows learn
#
# Differentiate the loss $\ell$ through the lookup. Since $h_p$ depends on $E$ only through row $p$,
#
# $$\frac{\partial \ell}{\partial E[r]} = \sum_{\text{tokens } t \text{ at position } r}
#   \frac{\partial \ell}{\partial h_t} ,$$
#
# a sum over the tokens that sat at position $r$ in the batch. A row receives gradient **only if
# some training sequence was long enough to reach it**. Train on sequences of at most 512 tokens
# with a 1024-row table and rows 512 to 1023 never change: they keep their random initial values,
# and the model has never seen them. (An optimiser with weight decay, such as AdamW, shrinks them
# towards zero, which is no better.)
#
# ### Initialisation: what "trunc_normal(std=0.02)" means
#
# `nn.Embedding` starts from $\mathcal N(0, 1)$, fifty times larger than the scale that BERT and
# GPT-2 use for every weight they initialise (`initializer_range = 0.02` in their configurations).
# Position vectors that large would drown the token embeddings, so the table is re-initialised:
#
# * BERT's original TensorFlow code draws from `tf.truncated_normal_initializer(stddev=0.02)`,
#   which re-draws any value more than **2 standard deviations** from the mean (here: outside
#   $\pm 0.04$). Cutting the tails lowers the actual spread to about $0.88 \times 0.02 \approx 0.0176$.
# * Hugging Face's PyTorch BERT and GPT-2 use a plain `normal_(mean=0.0, std=0.02)`.
# * timm's ViT and DeiT call `trunc_normal_(pos_embed, std=.02)`, with a helper that has the
#   signature and meaning of torch's. Beware of what this does:
#   `torch.nn.init.trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0)` takes `a` and `b` as
#   **absolute** cut-offs, not as multiples of `std`. With `std=0.02` the cut-offs $\pm 2$ sit 100
#   standard deviations away and nothing is ever cut: the call is, in effect, $\mathcal N(0, 0.02^2)$.
#   To cut at 2 standard deviations you must write `a=-0.04, b=0.04`.
#
# This course follows the practitioners' call, `nn.init.trunc_normal_(weight, std=0.02)`. What
# matters is the scale: the checks accept any of the three recipes above (a spread between 0.017
# and 0.021 on a large table) and reject the default $\mathcal N(0, 1)$.

# %% tags=["demo"]
def show_trunc_normal_bounds():
    default = nn.init.trunc_normal_(torch.empty(100_000), std=0.02)
    at_two_std = nn.init.trunc_normal_(torch.empty(100_000), std=0.02, a=-0.04, b=0.04)
    for name, w in (("trunc_normal_(std=0.02)", default), ("... a=-0.04, b=0.04", at_two_std)):
        print(f"{name:26s} std {w.std():.4f}   largest |value| {w.abs().max():.4f}")


show_trunc_normal_bounds()

# %% [markdown]
# ### Position ids
#
# By default the positions of a sequence of length $L$ are $0, 1, \dots, L-1$. Models also accept
# explicit `position_ids`: with left padding the first real token of a row sits at a column
# greater than 0, and when decoding with a cache the new token's position is the cache length. The
# course convention is an integer tensor of shape (seq,), shared by the batch, or
# (batch, seq), one row per sequence. `nn.Embedding` handles both: it returns (seq, d) or
# (batch, seq, d), and broadcasting adds either to $x$ of shape (batch, seq, d).
#
# Two device details. The default positions must be built where $x$ lives,
# `torch.arange(L, device=x.device)`: built on the CPU they fail as soon as the model moves to a GPU.
# And when the caller passes `position_ids`, checking that they lie inside the table reads their
# largest value back from the GPU; production code skips that check for speed (and gets a
# device-side assert instead). In a course, a clear error is worth the synchronisation.

# %% [markdown]
# ### Exercise 2.1 — `LearnablePositionalEncoding(d_model, max_len, dropout=0.0)`
#
# * `__init__`: an attribute `position_embeddings = nn.Embedding(max_len, d_model)`, its weight
#   re-initialised with `nn.init.trunc_normal_(..., std=0.02)`, and an `nn.Dropout(dropout)`.
#   Raise `ValueError` for a non-positive `d_model` or `max_len`.
# * `forward(x, position_ids=None)`: `x` is (batch, seq, d_model); return
#   `dropout(x + E[position_ids])` in `x`'s dtype. Raise `ValueError` when `x`'s last dimension is
#   not `d_model`, when `seq_len > max_len` (naming both values), or when given `position_ids` do
#   not match `x`'s length or fall outside $[0, \text{max\_len})$.

# %%
#| export
class LearnablePositionalEncoding(nn.Module):
    """x + E[position_ids] with a trainable table E = position_embeddings.weight of shape (max_len, d_model).

    The learned absolute positions of BERT (Devlin et al., 2019) and GPT-2 (Radford et al., 2019).
    Gradients reach only the rows that training sequences use; there are no rows past max_len.
    """

    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        ### BEGIN SOLUTION
        # Hint: the idea: one learned vector per position, i.e. an embedding layer with max_len rows, started
        #       at scale 0.02 instead of torch's default N(0, 1).
        #       Shapes: the weight (max_len, d_model)
        if d_model <= 0:
            raise ValueError(f"d_model must be positive, got d_model={d_model}")
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.d_model, self.max_len = d_model, max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)  # weight (max_len, d)
        # E ~ N(0, 0.02²); torch's default cut-offs a=-2, b=2 are absolute, so nothing is cut
        nn.init.trunc_normal_(self.position_embeddings.weight, std=0.02)
        self.dropout = nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, x, position_ids=None):
        ### BEGIN SOLUTION
        # Hint: the idea: look up one row per position and add it to x; refuse positions the table lacks.
        #       Shapes: x (B, L, d); position_ids (L,) or (B, L); the rows (L, d) or (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        seq_len = x.shape[-2]
        if position_ids is None:
            if seq_len > self.max_len:
                raise ValueError(f"seq_len={seq_len} is longer than max_len={self.max_len}: "
                                 f"the learned table has no rows for positions {self.max_len} and up")
            position_ids = torch.arange(seq_len, device=x.device)  # (L,)
        else:
            if position_ids.shape[-1] != seq_len:
                raise ValueError(f"position_ids must have seq_len={seq_len} entries per row, "
                                 f"got shape {tuple(position_ids.shape)}")
            if position_ids.numel() > 0:
                low, high = int(position_ids.min()), int(position_ids.max())
                if low < 0 or high >= self.max_len:
                    raise ValueError(f"position_ids must lie in [0, max_len={self.max_len}), "
                                     f"got values from {low} to {high}")
        # h = x + E[p]
        pe = self.position_embeddings(position_ids)  # (L, d) or (B, L, d)
        return self.dropout(x + pe.to(x.dtype))  # (B, L, d)
        ### END SOLUTION


# %% tags=["selfcheck"]
check("LearnablePositionalEncoding", LearnablePositionalEncoding)

# %% [markdown]
# ## 2.2 Why a learned table cannot extrapolate
#
# Past `max_len` there is simply no row to look up, and the layer has to refuse. Without the check,
# `nn.Embedding` raises `IndexError: index out of range in self` on the CPU, and on a GPU a
# device-side assert that leaves the CUDA context unusable; neither says which argument was wrong.

# %% tags=["demo"]
@demo
def show_error_past_max_len():
    layer = LearnablePositionalEncoding(d_model=16, max_len=64)
    try:
        layer(torch.zeros(1, 65, 16))
    except ValueError as exc:
        print("ValueError:", exc)


show_error_past_max_len()

# %% [markdown]
# The problem starts earlier than `max_len`. Below, a 64-row table and a linear read-out are
# trained to tell the position of each token from $x_p + E[p]$, on sequences of 24 tokens only.
# Rows 0 to 23 move; rows 24 to 63 receive exactly zero gradient and stay at their initial values
# (Adam turns a zero gradient into a zero step). On the right, the read-out recovers positions
# 0 to 23 and returns noise for every row it has never seen, although all 64 rows exist. A formula
# such as the sinusoidal table at least defines every position; whether a model *uses* unseen
# positions well is another matter, taken up in chapters 3 to 5.

# %% tags=["demo"]
@demo
def train_on_short_sequences(d_model=16, max_len=64, train_len=24, steps=150, seed=0):
    torch.manual_seed(seed)
    layer = LearnablePositionalEncoding(d_model, max_len)
    readout = nn.Linear(d_model, 1)
    start = layer.position_embeddings.weight.detach().clone()
    optimizer = torch.optim.Adam([*layer.parameters(), *readout.parameters()], lr=0.03)
    target = torch.arange(train_len) / train_len  # position, scaled to [0, 1)
    for _ in range(steps):
        x = 0.1 * torch.randn(16, train_len, d_model)  # token content: noise the read-out must ignore
        loss = (readout(layer(x)).squeeze(-1) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    table = layer.position_embeddings.weight.detach()
    with torch.no_grad():
        predicted = readout(table).squeeze(-1) * train_len  # position read from E[p] alone
    fig, axes = plt.subplots(1, 2, figsize=(10, 3))
    axes[0].bar(range(max_len), (table - start).norm(dim=1).numpy())
    axes[0].set_xlabel("row p of the table")
    axes[0].set_ylabel("|E[p] - E_init[p]|")
    axes[0].set_title("how far each row moved in training")
    axes[1].plot(range(max_len), predicted.numpy(), ".", label="read out")
    axes[1].plot(range(max_len), range(max_len), "k:", label="true position")
    for ax in axes:
        ax.axvline(train_len - 0.5, color="red", lw=1)
    axes[1].set_xlabel("position p")
    axes[1].legend()
    axes[1].set_title(f"trained on length {train_len} only")
    plt.tight_layout()
    plt.show()


train_on_short_sequences()

# %% [markdown]
# ## 2.3 Reusing a table at a new length: interpolation
#
# Vision Transformers cut an image into a grid of patches and learn one position vector per patch.
# A ViT trained at $224\times224$ pixels with $16\times16$ patches has a $14\times 14$ grid; fine-tuned
# at $384\times384$ it has $24\times24$ patches, and the trained table has the wrong number of rows.
# Dosovitskiy et al. (2021) resize it by 2-D interpolation of the pre-trained position embeddings
# according to their location in the image; DeiT does the same when it fine-tunes at a higher
# resolution. In practice (timm's `resample_abs_pos_embed`, Hugging Face's
# `interpolate_pos_encoding`), the vector of the class token is set aside, the patch vectors are
# reshaped to their $(h, w, d)$ grid, resized with **bicubic** interpolation to the new grid, and
# flattened back. This exercise is the 1-D case, with linear interpolation, the same operation on a
# sequence of positions.
#
# ### Where does a new row come from?
#
# Think of row $i$ of an $L$-row table as the value at the **centre** of cell $i$ of the interval
# $[0, L)$, that is at $i + \tfrac12$. The new table has $L'$ cells over the same interval; its row
# $j$ sits at the centre $(j + \tfrac12)\,L/L'$. In old row units (subtract the $\tfrac12$ again)
# that is the source coordinate
#
# $$x_j = \Big(j + \tfrac12\Big)\frac{L}{L'} - \tfrac12, \qquad \text{clamped to } [0, L-1].$$
#
# With $i_0 = \lfloor x_j\rfloor$, $i_1 = \min(i_0 + 1, L-1)$ and $w = x_j - i_0$,
#
# $$T'[j] = (1 - w)\,T[i_0] + w\,T[i_1].$$
#
# This is `F.interpolate(..., mode="linear", align_corners=False)`, the default convention of
# PyTorch's resizing functions. `F.interpolate` works on the last axis of an (N, C, length) tensor,
# so the one-liner is `F.interpolate(table.T[None], size=new_len, mode="linear",
# align_corners=False)[0].T`: transpose so that positions are the last axis, add a batch axis,
# interpolate, undo both. Interpolating `table[None]` instead would blend the *features* of each
# position with each other.
#
# `align_corners=True` is the other convention: it pins the first and last rows to the first and
# last rows, $x_j = j\,(L-1)/(L'-1)$, the same as `torch.linspace(0, L-1, L')`. Both are
# reasonable, but they give different tables (every inner row moves a little), so a resize must
# use the convention of the code it is meant to match. Nearest-neighbour resizing copies rows
# instead of blending them, so neighbouring new positions share one vector.
#
# ### The norm of an interpolated vector
#
# Touvron et al. (2021) observe that linear interpolation makes the new vectors *shorter* than their
# neighbours. For two vectors of equal length $r$ at angle $\theta$,
#
# $$\lVert (1-w)a + wb \rVert^2 = r^2\big((1-w)^2 + w^2 + 2w(1-w)\cos\theta\big),$$
#
# which at $w = \tfrac12$ is $r^2 (1 + \cos\theta)/2$: no loss for parallel vectors, a factor
# $1/\sqrt2$ in length for orthogonal ones. A trained model never saw such short vectors, which
# is one reason DeiT uses bicubic interpolation (which roughly keeps the norms) and fine-tunes
# after resizing. The demo after the exercise shows the dip.

# %% [markdown]
# ### Exercise 2.2 — `resize_position_table(table, new_len)`
#
# `table` is (L, d). Return the (new_len, d) table of linear interpolation along the positions,
# equal to `F.interpolate(table.T[None], size=new_len, mode="linear", align_corners=False)[0].T`,
# in `table`'s dtype and on its device. Either write the formula above or use `F.interpolate`: both
# are accepted. Raise `ValueError` for a table that is not 2-D or a `new_len` that
# is not positive, naming the value.

# %%
#| export
def resize_position_table(table, new_len):
    """T'[j] = (1 - w) T[i0] + w T[i1], x_j = (j + 1/2) L / L' - 1/2 clamped to [0, L-1], i0 = floor(x_j).

    Linear interpolation along the positions of a (L, d) table, as
    F.interpolate(table.T[None], size=new_len, mode="linear", align_corners=False)[0].T. Returns (new_len, d).
    """
    ### BEGIN SOLUTION
    # Hint: the idea: new row j sits at x_j = (j + 1/2)·L/L' - 1/2 in units of old rows (align_corners=False),
    #       clamped to [0, L - 1]; it is a linear blend of the two old rows around x_j.
    #       Shapes: table (L, d), x (L',), the output (L', d)
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D (positions, d), got shape {tuple(table.shape)}")
    if new_len <= 0:
        raise ValueError(f"new_len must be positive, got new_len={new_len}")
    old_len = table.shape[0]
    # coordinates in float64: a float32 x near row 200 is off by about 1e-5 of a row
    j = torch.arange(new_len, dtype=torch.float64, device=table.device)  # (L',)
    # x_j = (j + 1/2) L / L' - 1/2, clamped to [0, L - 1]
    x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)  # (L',)
    i0 = x.floor().long()  # (L',)
    i1 = (i0 + 1).clamp(max=old_len - 1)  # (L',)
    work = torch.promote_types(table.dtype, torch.float32)  # float16 rows blend in float32
    w = (x - i0).to(work)[:, None]  # (L', 1) weight of row i1
    rows = table.to(work)
    # T'[j] = (1 - w) T[i0] + w T[i1]
    return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)  # (L', d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("resize_position_table", resize_position_table)

# %% [markdown]
# Compare with `F.interpolate`, then watch the norms. Both tables below have rows of length 1. In
# the random one, which stands in for an untrained table, rows are nearly orthogonal; in the smooth
# one, which stands in for a trained table, neighbouring rows are similar. Stretched four times,
# each new row away from the ends blends two old rows with weights $(\tfrac78, \tfrac18)$ or
# $(\tfrac58, \tfrac38)$, so for orthogonal rows its length is
# $\sqrt{(7/8)^2 + (1/8)^2} \approx 0.88$ or $\sqrt{(5/8)^2 + (3/8)^2} \approx 0.73$ (exactly
# halfway it would be $1/\sqrt2$). The random table's new rows follow that pattern; the smooth
# table's keep their length.

# %% tags=["demo"]
@demo
def plot_resized_norms(old_len=12, d_model=256, factor=4):
    random_table = F.normalize(torch.randn(old_len, d_model), dim=1)  # (L, d), unit rows, nearly orthogonal
    angles = torch.outer(torch.arange(old_len) / old_len, torch.linspace(0.5, 2.0, d_model // 2))  # (L, d/2)
    smooth_table = torch.cat([angles.cos(), angles.sin()], dim=-1) / (d_model // 2) ** 0.5  # (L, d), unit rows
    new_len = old_len * factor
    one_liner = F.interpolate(random_table.T[None], size=new_len, mode="linear", align_corners=False)[0].T
    ours = resize_position_table(random_table, new_len)
    print(f"max |resize_position_table - F.interpolate| = {(ours - one_liner).abs().max():.2e}")
    fig, ax = plt.subplots(figsize=(8, 3))
    centres = (torch.arange(new_len) + 0.5) * old_len / new_len - 0.5  # new rows in old row units
    for name, table in (("random rows", random_table), ("smooth rows", smooth_table)):
        ax.plot(centres.numpy(), resize_position_table(table, new_len).norm(dim=1).numpy(), ".-", label=name)
    for level in ((7 / 8) ** 2 + (1 / 8) ** 2) ** 0.5, ((5 / 8) ** 2 + (3 / 8) ** 2) ** 0.5:
        ax.axhline(level, color="gray", ls=":", lw=1)
    ax.set_xlabel("position, in rows of the old table")
    ax.set_ylabel("norm of the new row")
    ax.set_title(f"unit rows of a {old_len}-row table stretched to {new_len} rows")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    plt.tight_layout()
    plt.show()


plot_resized_norms()

# %% [markdown]
# ## 2.4 Summary
#
# * A learned absolute encoding is `nn.Embedding(max_len, d)` added to the tokens:
#   $h_p = x_p + E[p]$. Initialise it at scale 0.02; `torch.nn.init.trunc_normal_`'s cut-offs are
#   absolute values, not standard deviations.
# * A row learns only from tokens that sat at its position, so positions beyond the training length
#   are untrained and positions beyond `max_len` do not exist: raise a `ValueError` that names both
#   lengths.
# * A trained table can be resized by interpolation along the positions, the 1-D version of what
#   ViT and DeiT do to their 2-D patch grid. `align_corners=False` places rows at cell centres;
#   linear blends of unrelated rows are shorter than the rows themselves.
#
# **Further reading.** Devlin et al. (2019), *BERT*; Radford et al. (2019), *Language Models are
# Unsupervised Multitask Learners* (GPT-2); Dosovitskiy et al. (2021), *An Image is Worth 16x16
# Words* (ViT, on resizing the table for fine-tuning); Touvron et al. (2021), *Training
# data-efficient image transformers & distillation through attention* (DeiT). Chapter 3 replaces
# absolute positions by distances between tokens.


# %% [markdown]
# ## Hand your code on
#
# Chapter 7 trains small language models with every position scheme of the course, built from *your* code.
# Once this chapter's exercises pass their self-checks, run the cell below: it copies them (with the imports
# and helpers they use) into `posenc_mine/ch02.py` beside this notebook, and runs their self-checks on the
# copy. Run it again whenever you change an exercise. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("02_learned_absolute", globals())
