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
# # Chapter 8 — Positions in more than one dimension
#
# Every chapter so far placed tokens on a line. A vision Transformer places them on a grid: an image of
# $224\times224$ pixels cut into $16\times16$ patches is a $14\times14$ grid of tokens (Dosovitskiy et al.,
# 2021), and a video adds time. A vision-language model then mixes such grids with text in one sequence.
# This chapter carries the course's schemes into two and three dimensions, the way the models people run do it:
#
# * a **learned 2-D table** resized to a new grid, as timm's `resample_abs_pos_embed` does when a ViT is
#   fine-tuned at a higher resolution;
# * **2-D sinusoidal positions**, MAE's construction (He et al., 2022): half the channels for the row, half
#   for the column;
# * **axial 2-D RoPE**, as Qwen2-VL's vision tower rotates queries and keys (Wang et al., 2024), and a
#   property test that tells a real one from a broken one;
# * **M-RoPE**, the three position ids (time, height, width) that Qwen2-VL's language model gives every token.
#
# You will implement `resize_position_table_2d`, `sincos_2d_table`, `axial_rope_cos_sin`,
# `check_axial_property`, `mrope_position_ids` and `mrope_cos_sin`; the checks compare them with timm and
# with transformers 5.23 on small inputs. At the end a small encoder is trained at one grid size and
# evaluated at others, with each kind of position.

# %%
#| export
import torch
import torch.nn.functional as F  # noqa: F401  (used by the exercises: unused in the unfinished notebook)

# %%
import matplotlib.pyplot as plt

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 8.1 A grid, flattened
#
# A Transformer sees a sequence, so the grid is flattened: patch $(r, c)$ of an $H\times W$ grid (row $r$,
# column $c$) is token $rW + c$, **row-major**, exactly what `x.flatten(2).transpose(1, 2)` does to the
# $(B, d, H, W)$ output of a patch-embedding convolution. A ViT with a class token puts it first, so a learned
# table has $1 + HW$ rows: row 0 for the class token, row $1 + rW + c$ for patch $(r, c)$.
#
# Why not treat the grid as a line of $HW$ positions and reuse chapters 1–4 unchanged? Because the distances
# come out wrong. On the line, patch $(r, W-1)$ and patch $(r+1, 0)$ are neighbours, one position apart,
# although they sit at the two ends of the image; and patch $(r+1, c)$, directly below $(r, c)$, is $W$
# positions away, a distance that changes with the width of the image. A 1-D RoPE over $p = rW + c$ turns each
# plane by $\theta(W\,\Delta r + \Delta c)$: for one fixed $W$ that is still a function of the displacement
# $(\Delta r, \Delta c)$, but a different one at every image width: an offset of 14 positions is "one row down"
# at $W = 14$ and "14 columns to the right" at $W = 24$, so what a head learned about it at one width is wrong at
# the other. A 2-D scheme gives the row and the column their own channels, and a score can depend on
# $(\Delta r, \Delta c)$ the same way at every size.

# %% [markdown]
# ## 8.2 A learned table at a new resolution
#
# Chapter 2 resized a 1-D table along its positions. A ViT's table is a grid, so it is resized as an image:
# the patch rows are reshaped to $(H, W, d)$, the $d$ channels become image channels, the image is resized to
# $(H', W')$, and the result is flattened back. The class token has no place on the grid and is set aside
# (in timm, the `num_prefix_tokens` first rows: a class token, DeiT's distillation token, register tokens, each
# when the model has it; none in models without them). A model built with `no_embed_class=True` (DeiT III,
# DINOv2 with registers) keeps its class and register tokens but gives them no row: its table is the grid
# alone, 0 prefix rows. timm's `resample_abs_pos_embed`, which every timm ViT calls when it loads a checkpoint
# at another `img_size`, does this with
#
# ```
# F.interpolate(grid, size=new_size, mode="bicubic", align_corners=None, antialias=True)
# ```
#
# on the float32 copy of the table, then casts back to its dtype. Three details decide the numbers:
#
# * **Bicubic**, not bilinear: each new value blends a $4\times4$ neighbourhood with Keys' (1981) cubic
#   convolution kernel, which keeps the table smoother than linear blends, and whose negative lobes keep norms
#   closer to the old ones (chapter 2 measured the dip of linear blends).
# * **`align_corners=False`** (what `None` means for these modes): new row $j$ samples old row
#   $(j + \tfrac12)H/H' - \tfrac12$, centres to centres, as in chapter 2.
# * **`antialias=True`**: PyTorch then takes another path. Its antialiased bicubic uses the cubic kernel with
#   $a = -0.5$ (as PIL does) instead of $a = -0.75$ (as OpenCV does, and PyTorch without antialiasing), so the
#   numbers differ even when the grid *grows*; and when the grid *shrinks*, the kernel is widened by the shrink
#   factor, so every old row contributes (a low-pass filter before subsampling).
#
# The order of the two axes matters as soon as the grid is not square: `F.interpolate` takes `size=(H', W')`
# for an input laid out $(1, d, H, W)$. Hugging Face's ViT (`interpolate_pos_encoding`) does the same operation
# with `mode="bicubic", align_corners=False` and without antialiasing ($a = -0.75$), so the two libraries give
# different tables from the same checkpoint, growing or shrinking: a resize must match the library the weights
# were fine-tuned with.

# %% [markdown]
# ### Exercise 8.1 — `resize_position_table_2d(table, old_grid, new_grid, ...)`
#
# The full signature is `resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1,
# mode="bicubic", antialias=True)`. `table` is $(P + HW, d)$ with `old_grid` $= (H, W)$ and
# $P$ = `num_prefix_tokens`. Return the
# $(P + H'W', d)$ table for `new_grid` $= (H', W')$: the $P$ prefix rows unchanged, then the patch rows resized
# as timm's `resample_abs_pos_embed(table[None], new_grid, old_grid, num_prefix_tokens, mode, antialias)[0]`
# does (interpolation in float32, the result in `table`'s dtype and on its device). `mode` is `"bicubic"` or
# `"bilinear"`. Raise `ValueError`, naming the argument, for a table that is not 2-D, a number of rows other
# than $P + HW$, or a grid side that is not positive.

# %%
#| export
def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    """A (P + H·W, d) table of P prefix rows and a row-major H x W grid -> (P + H'·W', d), the grid resized as an
    image: F.interpolate((1, d, H, W), size=(H', W'), mode, align_corners=False, antialias) in float32, as timm's
    resample_abs_pos_embed. Prefix rows (class token) are kept as they are."""
    ### BEGIN SOLUTION
    # Hint: the idea: set the P prefix rows aside; the other rows are an H x W image with d channels (row-major:
    #       patch (r, c) is row P + r·W + c); resize that image with F.interpolate, flatten it back, put the
    #       prefix in front.
    #       Shapes: table (P + H·W, d); grid (H·W, d) -> image (1, d, H, W) -> (1, d, H', W') -> (H'·W', d)
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D (rows, d), got shape {tuple(table.shape)}")
    (old_h, old_w), (new_h, new_w) = (int(s) for s in old_grid), (int(s) for s in new_grid)
    if min(old_h, old_w) <= 0:
        raise ValueError(f"old_grid must have positive sides, got old_grid={tuple(old_grid)}")
    if min(new_h, new_w) <= 0:
        raise ValueError(f"new_grid must have positive sides, got new_grid={tuple(new_grid)}")
    if num_prefix_tokens < 0 or table.shape[0] != num_prefix_tokens + old_h * old_w:
        raise ValueError(f"table has {table.shape[0]} rows; old_grid={tuple(old_grid)} with "
                         f"num_prefix_tokens={num_prefix_tokens} needs {num_prefix_tokens + old_h * old_w}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode must be 'bicubic' or 'bilinear', got mode={mode!r}")
    d = table.shape[1]
    prefix, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]  # (P, d), (H·W, d)
    # row r·W + c -> pixel (r, c) of a d-channel image
    image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]  # (1, d, H, W)
    image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, antialias=antialias)
    resized = image[0].permute(1, 2, 0).reshape(new_h * new_w, d)  # (H'·W', d), row-major again
    return torch.cat([prefix, resized.to(table.dtype)], dim=0)  # (P + H'·W', d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("resize_position_table_2d", resize_position_table_2d)

# %% [markdown]
# A smooth table stands in for a trained one (trained ViT tables are smooth across the grid, Dosovitskiy et
# al., 2021, Figure 7). Below, one channel of a $7\times7$ table resized to $12\times12$ and to $4\times4$:
# the picture keeps its shape, the class token's row is untouched.

# %% tags=["demo"]
@demo
def show_resized_channel(d=8, channel=2):
    rows, cols = torch.meshgrid(torch.arange(7.0), torch.arange(7.0), indexing="ij")
    grid = torch.stack([(rows * (k + 1) / 5 + cols * (d - k) / 9).sin() for k in range(d)], dim=-1)  # (7, 7, d)
    table = torch.cat([torch.full((1, d), 9.0), grid.reshape(49, d)])  # (1 + 49, d): class token first
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2))
    for ax, side in zip(axes, (7, 12, 4)):
        out = resize_position_table_2d(table, (7, 7), (side, side))
        ax.imshow(out[1:, channel].reshape(side, side).numpy(), cmap="RdBu", vmin=-1.2, vmax=1.2)
        ax.set_title(f"{side}x{side}; class token row kept: {bool((out[0] == 9.0).all())}")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"channel {channel} of a 7x7 position table, resized (bicubic, timm's settings)")
    plt.tight_layout()
    plt.show()


show_resized_channel()

# %% [markdown]
# ## 8.3 2-D sinusoidal positions
#
# MAE (He et al., 2022) fixes its table instead of learning it: chapter 1's sinusoids, once for the row and
# once for the column. With $D = d/4$ frequencies $\omega_i = \text{base}^{-i/D}$, $i = 0 \dots D-1$, patch
# $(r, c)$ gets
#
# $$PE[(r, c)] = \big[\sin(r\omega) \;\big|\; \cos(r\omega) \;\big|\; \sin(c\omega) \;\big|\; \cos(c\omega)\big],$$
#
# four blocks of $D$ channels (the sines of a block first, then its cosines: *concatenated*, not interleaved as in
# chapter 1). Note the ladder: $\omega_i = \text{base}^{-i/D}$ spans the whole range from 1 to nearly
# $1/\text{base}$ within each quarter. This is transformers' `build_2d_sinusoidal_position_embedding` (used by
# ViTMAE), whose layout is row first. MAE's original code, and with it the pretrained MAE checkpoints, have
# the halves the other way round (column first: a variable-naming slip that the checkpoints baked in; transformers
# builds the row-first table and swaps its halves when it initialises ViTMAE, to match those weights). Neither
# order is wrong by itself; a table must match the weights it is used with.
#
# Chapter 1's identity carries over block by block: moving one row down rotates each (sin, cos) pair of the
# row blocks by $\omega_i$ and leaves the column blocks alone, so the dot product of two patches' vectors is
# $\sum_i \cos(\Delta r\,\omega_i) + \sum_i \cos(\Delta c\,\omega_i)$, a function of $(\Delta r, \Delta c)$
# only. The demo after the exercise shows it, next to the 1-D table of the flattened grid, whose dot products
# depend on $W\Delta r + \Delta c$.

# %% [markdown]
# ### Exercise 8.2 — `sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None)`
#
# Return the $(HW, d)$ float32 table above, patches row-major, on `device`. Raise `ValueError` when `d_model` is not a
# positive multiple of 4 or a grid side is not positive, naming the argument.

# %%
#| export
def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    """(H·W, d): [sin(r ω) | cos(r ω) | sin(c ω) | cos(c ω)] for patch (r, c) = row r·W + c, ω_i = base^(-i/(d/4)),
    i = 0 .. d/4 - 1. Computed in float64, returned in float32, as transformers'
    build_2d_sinusoidal_position_embedding."""
    ### BEGIN SOLUTION
    # Hint: the idea: chapter 1's table twice, over d/4 frequencies each: a (sin, cos) block for the row of the
    #       patch and one for its column, concatenated. The row of patch k = r·W + c is k // W, its column k % W.
    #       Shapes: omega (d/4,); rows, cols (H·W,); angles (H·W, d/4) each; the table (H·W, d)
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model must be a positive multiple of 4, got d_model={d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h and grid_w must be positive, got grid_h={grid_h}, grid_w={grid_w}")
    quarter = d_model // 4
    # ω_i = base^(-i/D), D = d/4
    omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / quarter)  # (D,)
    patch = torch.arange(grid_h * grid_w, device=device)  # (H·W,) row-major
    rows, cols = (patch // grid_w).double(), (patch % grid_w).double()  # (H·W,) each
    row_angles, col_angles = rows[:, None] * omega, cols[:, None] * omega  # (H·W, D) each
    table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], dim=-1)
    return table.float()  # (H·W, d)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("sincos_2d_table", sincos_2d_table)

# %% [markdown]
# The dot product of every patch's vector with the vector of patch $(3, 3)$ of an $8\times8$ grid: with the 2-D
# table it depends on the displacement only, the same cross wherever the reference patch sits. A 1-D table of
# the 64 flattened positions gives stripes: the patch just right of the reference and the one a row below
# are 1 and 8 positions away, and patches at the end of one row are close to those at the start of the next.

# %% tags=["demo"]
@demo
def show_dot_products(side=8, d=64, ref=(3, 3)):
    from posenc_selfcheck.mine import load_exercises

    # chapter 1's table: yours if exported, else (in the course's repository) the course's
    sinusoidal_table = getattr(load_exercises(["sinusoidal_table"], quiet=True), "sinusoidal_table", None)
    if sinusoidal_table is None:
        print("show_dot_products: skipped until chapter 1's sinusoidal_table is exported")
        return
    two_d = sincos_2d_table(side, side, d)  # (64, d)
    one_d = sinusoidal_table(side * side, d)  # (64, d): the flattened grid as 64 positions
    k = ref[0] * side + ref[1]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    for ax, table, title in ((axes[0], two_d, "2-D table"), (axes[1], one_d, "1-D table of the flattened grid")):
        ax.imshow((table @ table[k]).reshape(side, side).numpy(), cmap="viridis")
        ax.plot(ref[1], ref[0], "r+", ms=12)
        ax.set_title(title)
        ax.set_xlabel("column")
        ax.set_ylabel("row")
    fig.suptitle(f"PE[patch] · PE[{ref}]")
    plt.tight_layout()
    plt.show()


show_dot_products()

# %% [markdown]
# ## 8.4 Axial 2-D RoPE
#
# RoPE (chapter 4) rotates plane $i$ of a head by the angle $m\theta_i$, and the score of a query at $m$ and a
# key at $n$ becomes $\sum_i \mathrm{Re}\big[\tilde q_i \bar{\tilde k}_i e^{\mathrm i (m - n)\theta_i}\big]$: a
# function of $m - n$. Nothing requires every plane to use the *same* position. Split the $d/2$ planes of a
# head into two groups: rotate the planes of the first group by the **row**, $r\theta_j$, and those of the
# second by the **column**, $c\theta_j$. Each plane's term in the score then depends on $\Delta r$ (first group)
# or $\Delta c$ (second group), so
#
# $$\langle \mathcal R_{(r, c)} q, \mathcal R_{(r', c')} k \rangle
#   = \sum_{j \in \text{rows}} \mathrm{Re}\big[\tilde q_j \bar{\tilde k}_j e^{\mathrm i (r - r')\theta_j}\big]
#   + \sum_{j \in \text{cols}} \mathrm{Re}\big[\tilde q_j \bar{\tilde k}_j e^{\mathrm i (c - c')\theta_j}\big],$$
#
# a function of $(\Delta r, \Delta c)$ only, the 2-D version of chapter 4's identity. Every rotation is still
# orthogonal, so norms are kept. This is **axial** RoPE (the axes are rotated separately; Heo et al., 2024,
# also study a "mixed" variant whose planes turn by $\theta^x_j c + \theta^y_j r$ with learned frequencies, $x$
# being the column in their code ($t_x = t \bmod W$); it has the same property, since each angle is still
# linear in $(r, c)$).
#
# **Qwen2-VL's vision tower** (`Qwen2VLVisionRotaryEmbedding` and `apply_rotary_pos_emb_vision` in
# transformers 5.23) lays it out in the half layout of chapter 4:
#
# * one frequency ladder over **half** the head, $\theta_j = \text{base}^{-2j/(d/2)}$ for $j = 0 \dots d/4 - 1$
#   (`inv_freq` computed with `dim = head_dim // 2`), shared by rows and columns;
# * the $d/2$ angles of a patch are $[r\theta_0, \dots, r\theta_{d/4-1}, c\theta_0, \dots, c\theta_{d/4-1}]$, and
#   the tables are $\cos$ and $\sin$ of `cat(angles, angles)`, $(N, d)$, exactly chapter 4's half layout;
# * `apply_rotary_pos_emb_vision(q, k, cos, sin)` computes `q * cos + rotate_half(q) * sin` in float32, with $q$
#   laid out (tokens, heads, head_dim) and the tables unsqueezed over the heads.
#
# So coordinate $j$ and coordinate $j + d/2$ form plane $j$: planes $0 \dots d/4-1$ turn with the row, planes
# $d/4 \dots d/2-1$ with the column. The position ids are an $(N, 2)$ tensor of (row, column) per patch. In
# Qwen2-VL these come in a particular *order*: the vision tower later merges each $2\times2$ block of patches
# into one token (`spatial_merge_size = 2`), so it lists patches block by block (`get_vision_position_ids` in
# transformers' `vision_utils`: for a $4\times4$ grid the rows go $0, 0, 1, 1, 0, 0, 1, 1, 2, 2, \dots$). RoPE
# does not care about the order of the tokens, only about the ids each one carries, which is why the
# exercise takes the ids rather than a grid.

# %% [markdown]
# ### Exercise 8.3 — `axial_rope_cos_sin(position_ids, head_dim, base=10000.0)`
#
# `position_ids` is an integer $(N, 2)$ tensor of (row, column). Return `(cos, sin)`, each $(N, d)$ float32,
# as Qwen2-VL's vision rotary embedding builds them (to be used with chapter 4's `apply_rope`). Raise
# `ValueError` when `head_dim` is not a positive multiple of 4 or `position_ids` is not $(N, 2)$.

# %%
#| export
def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    """(cos, sin), each (N, head_dim) float32, for position_ids (N, 2) of (row, column): angles
    [r θ_0 .. r θ_{d/4-1}, c θ_0 .. c θ_{d/4-1}] with θ_j = base^(-2j/(d/2)), tables cat(angles, angles)
    (half layout), as Qwen2-VL's vision rotary embedding."""
    ### BEGIN SOLUTION
    # Hint: the idea: chapter 4's frequency ladder over half the head (d/2 dimensions, d/4 frequencies), one copy
    #       multiplied by the rows, one by the columns; put them side by side, then repeat them for the half layout.
    #       Shapes: θ (d/4,); angles (N, 2, d/4) -> (N, d/2); cos and sin (N, d)
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim must be a positive multiple of 4, got head_dim={head_dim}")
    if position_ids.dim() != 2 or position_ids.shape[-1] != 2:
        raise ValueError(f"position_ids must be (N, 2) of (row, column), got shape {tuple(position_ids.shape)}")
    half = head_dim // 2
    # θ_j = base^(-2j/(d/2)), j = 0 .. d/4 - 1
    theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half)  # (d/4,)
    angles = position_ids.float()[..., None] * theta  # (N, 2, d/4): rows, then columns
    angles = angles.flatten(-2)  # (N, d/2) = [r θ | c θ]
    emb = torch.cat((angles, angles), dim=-1)  # (N, d)
    return emb.cos(), emb.sin()
    ### END SOLUTION


# %% tags=["selfcheck"]
check("axial_rope_cos_sin", axial_rope_cos_sin)

# %% [markdown]
# ## 8.5 A property test in two dimensions
#
# Chapter 4 ended with a test of what RoPE is for. Its 2-D version asks four things of
# `rope_fn(x, position_ids)`, where `x` is (batch, heads, N, head_dim) and `position_ids` (N, 2):
#
# 1. **norms are kept:** $\lVert f(x, (r, c))\rVert = \lVert x\rVert$;
# 2. **scores are relative in 2-D:** $\langle f(q, a), f(k, b)\rangle$ depends on $b - a = (\Delta r, \Delta c)$ only;
# 3. **the rotation changes with the row**, and
# 4. **it changes with the column.**
#
# Property 4 is the new one. A rotation by the row alone keeps norms and gives relative scores, yet cannot
# tell two patches of a row apart: a 1-D RoPE fed only the first column of the ids, a slip that runs and
# trains. Judge the property, not Qwen2-VL's layout: columns first, the interleaved layout, rows and columns on
# alternating planes, another base, a rotation the other way, partial rotary, shifted ids, and the "mixed"
# angles $\theta^x_j r + \theta^y_j c$ all have it.
#
# Practical advice, as in chapter 4: use a few random $q$, $k$; place them on every cell of a grid of at least
# $12\times12$ (one call gives every $f(q, a)$); compare every score with the score of the same displacement
# measured from a fixed cell (for $(\Delta r, \Delta c)$, the pair that starts at $(\max(0, -\Delta r),
# \max(0, -\Delta c))$ stays on the grid); for property 3, compare $f(q, (r, 0))$ with $f(q, (0, 0))$, and for 4,
# $f(q, (0, c))$ with $f(q, (0, 0))$. Use a relative tolerance between a few $10^{-6}$ and $10^{-3}$ of
# $\lVert q\rVert\lVert k\rVert$. Return a Python `bool`.

# %% [markdown]
# ### Exercise 8.4 — `check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3)`

# %%
#| export
def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    """True when rope_fn(x, position_ids) keeps norms, makes <f(q, a), f(k, b)> a function of b - a (a
    displacement on the grid) only, and changes with the row and with the column.

    The same random q (and k) is placed on every cell of a grid x grid grid (row-major), so one call gives
    f(q, a) for every cell a. Every score S[a, b] must equal the score of the same displacement from the pair
    that starts at (max(0, -Δr), max(0, -Δc)). Errors are measured relative to |q| |k|."""
    ### BEGIN SOLUTION
    # Hint: the idea: chapter 4's test with cells instead of positions. Put the same random q (and k) on every
    #       cell, call rope_fn once, then test norms, scores against the same displacement, and movement along a
    #       row and along a column.
    #       Shapes: positions (P, 2) with P = grid²; f(q) (V, 1, P, d); scores S (V, P, P)
    rng = torch.Generator().manual_seed(0)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)  # (V, 1, 1, d)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)
    rows, cols = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    positions = torch.stack((rows.flatten(), cols.flatten()), dim=-1)  # (P, 2), cell (r, c) at r·grid + c
    count = grid * grid
    fq = rope_fn(q.expand(-1, 1, count, -1).contiguous(), positions)  # (V, 1, P, d)
    fk = rope_fn(k.expand(-1, 1, count, -1).contiguous(), positions)
    if not (isinstance(fq, torch.Tensor) and isinstance(fk, torch.Tensor)
            and fq.shape == (n_vectors, 1, count, head_dim) and fk.shape == fq.shape
            and torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    fq, fk = fq[:, 0].double(), fk[:, 0].double()  # (V, P, d)
    for x, fx in ((q, fq), (k, fk)):
        norm = x[:, 0].double().norm(dim=-1)  # (V, 1)
        # 1. |f(x, a)| = |x|
        if ((fx.norm(dim=-1) - norm).abs() > rtol * norm).any():
            return False
        # 3. and 4.: f(x, (r, 0)) moves away from f(x, (0, 0)) for some r, and f(x, (0, c)) for some c
        along_col0, along_row0 = fx[:, ::grid], fx[:, :grid]  # (V, grid, d): cells (r, 0) and (0, c)
        for line in (along_col0, along_row0):
            moved = (line - line[:, :1]).norm(dim=-1).amax(dim=-1, keepdim=True)  # (V, 1)
            if (moved <= rtol * norm).any():
                return False
    # 2. S[a, b] = S[start, start + (b - a)] with start = (max(0, -Δr), max(0, -Δc))
    scores = fq @ fk.transpose(-1, -2)  # (V, P, P)
    delta = positions[None, :, :] - positions[:, None, :]  # (P, P, 2): b - a
    start = (-delta).clamp(min=0)  # (P, P, 2)
    end = start + delta
    same = scores[:, start[..., 0] * grid + start[..., 1], end[..., 0] * grid + end[..., 1]]  # (V, P, P)
    scale = q[:, 0, 0].double().norm(dim=-1) * k[:, 0, 0].double().norm(dim=-1)  # (V,)
    return bool(((scores - same).abs() <= rtol * scale[:, None, None]).all())
    ### END SOLUTION


# %% tags=["selfcheck"]
check("check_axial_property", check_axial_property)

# %% [markdown]
# Your test on Qwen2-VL's layout (your tables with chapter 4's `apply_rope`), on the same tables with the rows
# and columns of each plane mixed up, and on a RoPE that only sees the rows:

# %% tags=["demo"]
@demo
def run_axial_property_test(head_dim=32):
    from posenc_selfcheck.mine import load_exercises

    # chapter 4's apply_rope: yours if exported, else (in the course's repository) the course's
    apply_rope = getattr(load_exercises(["apply_rope"], quiet=True), "apply_rope", None)
    if apply_rope is None:
        print("run_axial_property_test: skipped until chapter 4's apply_rope is exported")
        return

    def qwen_layout(x, ids):
        return apply_rope(x, *axial_rope_cos_sin(ids, head_dim))

    def rows_then_columns(x, ids):  # cat(rθ, rθ, cθ, cθ): coordinate j and j + d/2 get different angles
        cos, sin = axial_rope_cos_sin(ids, head_dim)
        q = head_dim // 4
        order = torch.cat([torch.arange(0, q), torch.arange(2 * q, 3 * q), torch.arange(q, 2 * q),
                           torch.arange(3 * q, 4 * q)])
        return apply_rope(x, cos[:, order], sin[:, order])

    def rows_only(x, ids):
        return apply_rope(x, *axial_rope_cos_sin(torch.stack([ids[:, 0], ids[:, 0] * 0], dim=-1), head_dim))

    for name, fn in (("Qwen2-VL layout", qwen_layout), ("rows then columns (layout mix)", rows_then_columns),
                     ("rows only", rows_only)):
        print(f"{name:<34} {check_axial_property(fn, head_dim)}")


run_axial_property_test()

# %% [markdown]
# ## 8.6 M-RoPE: three position ids per token
#
# Qwen2-VL's *language* model reads one sequence of text tokens and image or video tokens (each $2\times2$ block
# of vision patches merged into one token). Wang et al. (2024) give every token three position ids, (time,
# height, width), and let different frequencies of each head rotate by different ids: **multimodal RoPE**. As
# transformers 5.23 implements it (`Qwen2VLModel.get_rope_index`), with $m$ = `spatial_merge_size` (2):
#
# * a **text** token has the same value in all three ids, and text counts up by one per token, so a text-only
#   sequence gets exactly chapter 4's 1-D positions;
# * the tokens of an **image** with a `grid_thw` of $(1, H, W)$ patches form an $(H/m)\times(W/m)$ grid of
#   merged tokens, row-major; starting from $s$ (the next position), the token at grid cell $(i, j)$ gets ids
#   $(s, s + i, s + j)$;
# * a **video** of $(T, H, W)$ patches ($T$ counts *temporal patches*: Qwen2-VL's patch embedding folds 2
#   frames into one) gives the token at $(t, i, j)$ the ids $(s + t, s + i, s + j)$;
# * the next text token starts at $s + \max(H, W)/m$. For an image that is one past the largest id used; for a
#   video whose $T$ exceeds $\max(H, W)/m$, transformers 5.x starts the text there all the same, below the
#   largest temporal id (its code advances by the spatial size only). This changed with transformers 5:
#   4.x started the next text one past the largest id used, $\max + 1$, which differs for such a video;
# * with **left padding** (`attention_mask` 0), the ids are computed on the real tokens alone and the padded
#   entries keep the value 0 (transformers 4.x padded with 1).
#
# Consecutive tokens of one kind form one group: one image (or video) per group, taken in order from
# `image_grid_thw` (or `video_grid_thw`). In transformers 5.23 the kinds come as `mm_token_type_ids` (0 text,
# 1 image, 2 video), not as special token ids.
#
# **Which id rotates which plane.** The text model's head has $d/2$ frequencies $\theta_i = \text{base}^{-2i/d}$
# (chapter 4's ladder over the whole head). `mrope_section` $= [s_t, s_h, s_w]$, with $s_t + s_h + s_w = d/2$
# ($[16, 24, 24]$ for Qwen2-VL's head of 128), says that the first $s_t$ frequencies turn by the time id, the
# next $s_h$ by the height id, the last $s_w$ by the width id. The tables are again `cat(angles, angles)`, half
# layout (`Qwen2VLRotaryEmbedding.recomposition_frequencies`). For text, the three ids are equal, so M-RoPE *is*
# chapter 4's RoPE. Between two image tokens, the time planes see $\Delta t$, the height planes $\Delta i$ and the
# width planes $\Delta j$: the argument of section 8.4 in three dimensions.
#
# **What later models change** (as transformers 5.23 implements them):
#
# * **Qwen2.5-VL** keeps the layout and the sections, and spaces a video's temporal ids by absolute time:
#   $t \cdot$ `tokens_per_second` $\cdot$ `second_per_grid_ts` instead of $t$ (`time_interval` in its
#   `get_vision_position_ids`).
# * **Qwen3-VL** **interleaves** the frequencies instead of cutting the head into three blocks: frequency $i$
#   turns by the height id when $i \equiv 1 \pmod 3$ (within the first $3s_h$), by the width id when
#   $i \equiv 2 \pmod 3$ (within the first $3s_w$), and by the time id otherwise (its default `mrope_section`
#   is $[24, 20, 20]$). It also splits each video into its temporal patches (2 frames each, as in Qwen2-VL),
#   separated by timestamp text with one timestamp per temporal patch (the mean time of its frames), so each
#   temporal patch is a grid with $T = 1$; and its vision tower adds a learned position table, bilinearly interpolated
#   to each image's grid (with `align_corners=True`), on top of the axial RoPE.

# %% [markdown]
# ### Exercise 8.5 — `mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, ...)`
#
# The full signature ends with `attention_mask=None, spatial_merge_size=2`.
# `token_types` is an integer (batch, seq) tensor: 0 text, 1 image, 2 video. `image_grid_thw` and
# `video_grid_thw` are integer (count, 3) tensors of $(T, H, W)$ in patches, one row per image (video) in the
# order they appear in the batch. Return the (3, batch, seq) int64 tensor of (time, height, width) ids that
# transformers 5.23's `get_rope_index` returns, 0 at padded positions. Raise `ValueError` when a group of
# vision tokens has a length other than $T\,(H/m)(W/m)$ or there are more groups than grids.

# %%
#| export
def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    """(3, B, L) ids (time, height, width): text advances all three together; an image or video group starting
    at s gives token (t, i, j) of its (T, H/m, W/m) grid the ids (s + t, s + i, s + j), and the text after it
    starts at s + max(H, W)/m. Padded positions (attention_mask 0) are skipped and keep 0 (Qwen2-VL's
    get_rope_index, transformers 5.23)."""
    ### BEGIN SOLUTION
    # Hint: the idea: walk each row's real tokens group by group (a run of one kind) with a counter s: a text run
    #       of n tokens takes s .. s + n - 1 in all three ids; a vision run takes the next grid, whose ids are
    #       s + (t, i, j) on a meshgrid; then s moves on by max(H, W)/m.
    #       Shapes: token_types (B, L); one group's ids (3, n); the output (3, B, L)
    batch, length = token_types.shape
    position_ids = torch.zeros(3, batch, length, dtype=torch.long, device=token_types.device)
    grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
             2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
    for b in range(batch):
        keep = torch.ones(length, dtype=torch.bool, device=token_types.device)
        if attention_mask is not None:
            keep = attention_mask[b].bool()
        kinds = token_types[b][keep].tolist()
        pieces, start, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                # text: (s, s, s), (s + 1, s + 1, s + 1), ...
                pieces.append(torch.arange(start, start + j - i).expand(3, -1))  # (3, n)
                start += j - i
            else:
                grid = next(grids[kinds[i]], None)
                if grid is None:
                    raise ValueError(f"more vision groups than rows in image_grid_thw / video_grid_thw (row {b})")
                t, h, w = grid[0], grid[1] // spatial_merge_size, grid[2] // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"a group of {j - i} vision tokens does not match its grid_thw {grid} "
                                     f"(T·H·W/m² = {t * h * w} with spatial_merge_size={spatial_merge_size})")
                # token (t, i, j) of the group: (s + t, s + i, s + j)
                tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + start)  # (3, T·h·w)
                start += max(h, w)
            i = j
        if pieces:
            position_ids[:, b, keep] = torch.cat(pieces, dim=1).to(position_ids.device)
    return position_ids
    ### END SOLUTION


# %% tags=["selfcheck"]
check("mrope_position_ids", mrope_position_ids)

# %% [markdown]
# ### Exercise 8.6 — `mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0)`
#
# `position_ids` is (3, batch, seq) from `mrope_position_ids`. Return `(cos, sin)`, each (batch, seq, head_dim)
# float32, as `Qwen2VLRotaryEmbedding` builds them: frequency $i$ of chapter 4's ladder turns by the time id in
# the first `mrope_section[0]` frequencies, by the height id in the next `mrope_section[1]`, by the width id in
# the last `mrope_section[2]`; tables `cat(angles, angles)`. Raise `ValueError` when `mrope_section` does not
# have three parts summing to `head_dim // 2`, or `position_ids` is not (3, batch, seq).

# %%
#| export
def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    """(cos, sin), each (B, L, head_dim) float32: angles p_s(i)·θ_i with θ_i = base^(-2i/d) and s(i) = time, height
    or width for i in the first, second or third of mrope_section's blocks; tables cat(angles, angles)
    (Qwen2-VL's multimodal RoPE)."""
    ### BEGIN SOLUTION
    # Hint: the idea: compute chapter 4's angles for each of the three ids, then build each token's d/2 angles
    #       by taking the first block of frequencies from the time angles, the second from the height angles, the
    #       third from the width angles.
    #       Shapes: θ (d/2,); angles (3, B, L, d/2); the chosen angles (B, L, d/2); cos and sin (B, L, d)
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section must have 3 parts summing to head_dim // 2 = {head_dim // 2}, "
                         f"got mrope_section={list(mrope_section)}")
    if position_ids.dim() != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got shape {tuple(position_ids.shape)}")
    # θ_i = base^(-2i/d)
    theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    angles = position_ids.float()[..., None] * theta  # (3, B, L, d/2)
    blocks = angles.split(list(mrope_section), dim=-1)  # 3 x (3, B, L, s_k)
    # block k of the frequencies turns by id k (time, height, width)
    chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)  # (B, L, d/2)
    emb = torch.cat((chosen, chosen), dim=-1)  # (B, L, d)
    return emb.cos(), emb.sin()
    ### END SOLUTION


# %% tags=["selfcheck"]
check("mrope_cos_sin", mrope_cos_sin)

# %% [markdown]
# The ids of a short prompt: two text tokens, a $1\times4\times4$ image (4 merged tokens), three text tokens, a
# video of $3\times2\times4$ patches (3 temporal patches on a $1\times2$ grid of merged tokens: 6 tokens), one
# text token. Read the columns: the image's tokens share their time id and spread over height and width; the text
# after the image starts at $2 + 2 = 4$; the text after the video starts at $7 + 2 = 9$, the value of the video's
# last temporal id, as transformers 5.x computes it (4.x started it at 10, one past that id).

# %% tags=["demo"]
@demo
def show_mrope_ids():
    kinds = torch.tensor([[0, 0, 1, 1, 1, 1, 0, 0, 0, 2, 2, 2, 2, 2, 2, 0]])
    ids = mrope_position_ids(kinds, torch.tensor([[1, 4, 4]]), torch.tensor([[3, 2, 4]]))
    names = {0: "text", 1: "image", 2: "video"}
    print("kind   " + " ".join(f"{names[k]:>5}" for k in kinds[0].tolist()))
    for label, row in zip(("time", "height", "width"), ids[:, 0]):
        print(f"{label:<6} " + " ".join(f"{v:>5}" for v in row.tolist()))


show_mrope_ids()

# %% [markdown]
# ## 8.7 Experiment: train at one grid size, run at others
#
# Does a vision model's position scheme carry over to another resolution? A small experiment on the CPU. The
# task (`posenc_selfcheck.gridlab.data`): a $G\times G$ grid of patches, each blank, one of two distractors, or
# the single **marker**; every patch must answer in which of nine directions the marker lies from it
# (above/level/below times left/level/right). The answer depends on where things are. A model without positions
# still recognises the marker's own patch, whose answer is always "level, level"; for every other patch it can
# do no better than the most frequent class. Its ceiling is therefore the majority rate plus $1/G^2$ (the last
# row of the table below).
#
# **Model.** A pre-norm encoder with $d = 64$, 2 layers, 4 heads of 16 dimensions, bidirectional attention, one
# 9-way answer per patch; AdamW for 1,000 steps on batches of 32 grids of $8\times8$ patches (learning rate
# $2\cdot10^{-3}$, 100 warm-up steps, cosine to a tenth). Every scheme sees the same batches in the same order and
# starts from the same weights outside the scheme (the learned table draws its own first, and the seed is set
# again before the encoder is built, as chapter 7 keeps its models comparable).
# Four schemes: **no positions**; a **learned** $64\times d$ table (your `resize_position_table_2d` resizes it,
# bicubic, to every other grid); the **2-D sinusoidal** table (your `sincos_2d_table`, built for each grid:
# beyond $8\times8$ it holds rows and columns never seen in training); and **axial RoPE** (your
# `axial_rope_cos_sin` with chapter 4's `apply_rope`, base 100: with 4 frequencies per axis, base 10000 would
# turn them by 1, 0.1, 0.01 and 0.001 radians per patch, and the last two would stay nearly still over 16
# patches). The trained RoPE model is also run with its positions multiplied by $8/G$, so that a larger grid stays
# within the angles seen in training (chapter 5's position interpolation, in 2-D). Every model is scored on 512
# fresh grids at each of $4\times4$, $6\times6$, $8\times8$, $12\times12$ and $16\times16$.
#
# **Budget.** One thread. The full run took {{seconds:.0f}} s on the shared two-core machine this chapter was
# written on ({{seconds_per_step.train_schemes:.0f}} s to train the four encoders,
# {{seconds_per_step.resolution:.0f}} s to score them); `/usr/bin/time` counted 153 s of CPU time, about two and a
# half minutes of an idle core. **Choose the run in the cell below**: `RUN = "full"` (this budget) or
# `RUN = "reduced"`, a small configuration that runs the same code in seconds (what CI runs, with
# `POSENC_CH8_RUN=reduced` in the environment); its numbers mean nothing. The experiment uses this notebook's own
# `resize_position_table_2d`, `sincos_2d_table` and `axial_rope_cos_sin` (and chapter 4's `apply_rope`): while one
# of them is not finished, its scheme is skipped, in one line. `python -m posenc_selfcheck.gridlab --out results/`
# runs the experiment from a terminal.

# %% tags=["demo"]
from posenc_selfcheck import gridlab

impl = gridlab.load_exercises(notebook=globals())  # this notebook's exercises and chapter 4's apply_rope

# %% tags=["demo"]
# RUN = "full": the chapter's numbers, about 150 s of one CPU thread (the measured time is in 8.7);
# RUN = "reduced": the same code on a smaller model in seconds, numbers that mean nothing.
# (POSENC_CH8_RUN in the environment, as in CI and the book, takes precedence.)
RUN = "full"
experiment = gridlab.GridLab(impl, gridlab.config_from_env(default=RUN))

# %% tags=["demo"]
experiment.train_schemes()

# %% tags=["demo"]
experiment.resolution()

# %% [markdown]
# **What the full run measured** (`python -m posenc_selfcheck.gridlab --out docs/chapter8`; accuracy over 512
# grids per size; trained at $8\times8$):
#
# | scheme | 4×4 | 6×6 | **8×8** | 12×12 | 16×16 |
# | --- | --- | --- | --- | --- | --- |
# | no positions | {{resolution.accuracy.no positions.0}} | {{resolution.accuracy.no positions.1}} | {{resolution.accuracy.no positions.2}} | {{resolution.accuracy.no positions.3}} | {{resolution.accuracy.no positions.4}} |
# | learned, resized (timm's bicubic) | {{resolution.accuracy.learned, resized.0}} | {{resolution.accuracy.learned, resized.1}} | {{resolution.accuracy.learned, resized.2}} | {{resolution.accuracy.learned, resized.3}} | {{resolution.accuracy.learned, resized.4}} |
# | 2-D sinusoidal | {{resolution.accuracy.2-D sinusoidal.0}} | {{resolution.accuracy.2-D sinusoidal.1}} | {{resolution.accuracy.2-D sinusoidal.2}} | {{resolution.accuracy.2-D sinusoidal.3}} | {{resolution.accuracy.2-D sinusoidal.4}} |
# | axial RoPE | {{resolution.accuracy.axial RoPE.0}} | {{resolution.accuracy.axial RoPE.1}} | {{resolution.accuracy.axial RoPE.2}} | {{resolution.accuracy.axial RoPE.3}} | {{resolution.accuracy.axial RoPE.4}} |
# | axial RoPE, positions × 8/G | {{resolution.accuracy.axial RoPE, positions scaled.0}} | {{resolution.accuracy.axial RoPE, positions scaled.1}} | {{resolution.accuracy.axial RoPE, positions scaled.2}} | {{resolution.accuracy.axial RoPE, positions scaled.3}} | {{resolution.accuracy.axial RoPE, positions scaled.4}} |
# | always the most frequent class | {{resolution.majority.0}} | {{resolution.majority.1}} | {{resolution.majority.2}} | {{resolution.majority.3}} | {{resolution.majority.4}} |
# | best without positions (+ the marker's own patch) | {{resolution.no_position_ceiling.0}} | {{resolution.no_position_ceiling.1}} | {{resolution.no_position_ceiling.2}} | {{resolution.no_position_ceiling.3}} | {{resolution.no_position_ceiling.4}} |
#
# Every scheme with positions solved the task at the training grid. Without positions the model reached about
# its ceiling: {{resolution.accuracy.no positions.2:.3f}} against {{resolution.no_position_ceiling.2:.3f}} at
# $8\times8$, {{resolution.accuracy.no positions.1:.3f}} against {{resolution.no_position_ceiling.1:.3f}} at
# $6\times6$. (On average it cannot exceed the ceiling; where it does, at $12\times12$
# ({{resolution.accuracy.no positions.3:.3f}} against {{resolution.no_position_ceiling.3:.3f}}) and $16\times16$
# ({{resolution.accuracy.no positions.4:.3f}} against {{resolution.no_position_ceiling.4:.3f}}), that is the sampling
# noise of 512 grids, whose marker sits somewhere else each time.) Away from $8\times8$:
#
# * The **resized learned table** carried over best: {{resolution.accuracy.learned, resized.0}} at $4\times4$,
#   {{resolution.accuracy.learned, resized.3:.3f}} at $12\times12$ and {{resolution.accuracy.learned, resized.4}} at $16\times16$. Resizing maps every grid onto
#   the same image: a patch keeps its place as a *fraction* of the image, and this task's answer (which side of
#   the marker, row and column) is unchanged by such a rescaling. We did not test a task whose answer counts
#   patches, where that would not hold.
# * The **2-D sinusoidal** model fell at every other size, also on the *smaller* grids, whose rows and columns all
#   occurred in training ({{resolution.accuracy.2-D sinusoidal.0}} at $4\times4$): what it learned is tied to the $8\times8$ grid, not only
#   to the positions it saw. At $16\times16$ (rows and columns 8–15 never seen) it kept {{resolution.accuracy.2-D sinusoidal.4}}.
# * **Axial RoPE** held at $6\times6$ and degraded with size ({{resolution.accuracy.axial RoPE.3}}, then {{resolution.accuracy.axial RoPE.4}}): displacements
#   beyond $\pm7$ never occurred in training, chapter 7's RoPE result in two dimensions. Multiplying the positions
#   by $8/G$ squeezes a larger grid into about the trained range (displacements of at most 7.5 patches instead
#   of 7) and recovered most of it ({{resolution.accuracy.axial RoPE, positions scaled.3}} at $12\times12$, {{resolution.accuracy.axial RoPE, positions scaled.4}} at $16\times16$), with no
#   training, like chapter 5's position interpolation. On a smaller grid the same factor *stretches* the
#   positions (×2 at $4\times4$: displacements 0, 2, 4 and 6, the span of the $8\times8$ grid), which is what
#   lifts it there from {{resolution.accuracy.axial RoPE.0}} to {{resolution.accuracy.axial RoPE, positions scaled.0}}. Why the unscaled model falls at $4\times4$, where every
#   displacement occurred in training, this run does not explain.
#
# At this scale, then: for a resolution change, the resized table (an interpolation of what was learned) and RoPE
# with scaled positions held up best, the latter with {{resolution.accuracy.axial RoPE, positions scaled.0}} at $4\times4$ and
# {{resolution.accuracy.axial RoPE, positions scaled.4}} at $16\times16$; the fixed sinusoidal table did not. One small task, one seed,
# one size of model: the ranking is what this run measured, not a law. The figure and the numbers are in
# `docs/chapter8/` (results.json).

# %% [markdown]
# ## 8.8 Summary
#
# * A grid is flattened row-major; a 1-D scheme over the flattened index makes "one row down" a distance of $W$
#   positions, which changes with the image width. 2-D schemes give rows and columns their own channels.
# * A learned ViT table is resized as an image: prefix rows aside, $(H, W, d) \to (d, H, W)$, bicubic with
#   `align_corners=False` and (in timm) antialiasing, flattened back row-major.
# * MAE's 2-D sinusoidal table is two concatenated blocks, one per axis, each $[\sin \mid \cos]$ over $d/4$
#   frequencies (not chapter 1's interleaved layout): column block first in MAE's code and checkpoints, row
#   block first in transformers' builder, whose halves ViTMAE swaps to match those checkpoints.
# * Axial 2-D RoPE rotates some planes by the row and the others by the column; every score depends on
#   $(\Delta r, \Delta c)$ only. Qwen2-VL: one ladder over half the head, `cat(rθ, cθ)`, half layout.
# * M-RoPE gives each token (time, height, width) ids; text keeps all three equal (plain RoPE), and
#   `mrope_section` cuts the frequencies into time, height and width blocks (interleaved in Qwen3-VL).
#
# **Further reading.** Dosovitskiy et al. (2021), *An Image is Worth 16x16 Words* (ViT). He et al. (2022),
# *Masked Autoencoders Are Scalable Vision Learners* (MAE). Heo et al. (2024), *Rotary Position Embedding for
# Vision Transformer*. Wang et al. (2024), *Qwen2-VL: Enhancing Vision-Language Model's Perception of the World
# at Any Resolution* (M-RoPE). Keys (1981), *Cubic Convolution Interpolation for Digital Image Processing*.

# %% [markdown]
# ## Hand your code on
#
# Run the cell below to copy this chapter's exercises into `posenc_mine/ch08.py`; then
# `python -m posenc_selfcheck.gridlab --out results/`, in this folder, repeats the experiment from a terminal
# with your code. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("08_positions_in_2d", globals())
