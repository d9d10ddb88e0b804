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
# # Chapter 0 — Why attention needs positions
#
# A Transformer reads a sentence as a stack of token vectors, one row per token. Its mixing step,
# attention, lets every token look at every other token and take a weighted average of what it
# finds. Nothing in that step says which row came first. This chapter makes the claim exact:
#
# 1. You implement scaled dot-product attention from scratch, so that every later chapter can
#    change one piece of it and see the effect.
# 2. You prove that attention without positional information is **permutation-equivariant**:
#    shuffle the input tokens and the outputs come back shuffled the same way, nothing more.
# 3. You see the consequence: "dog bites man" and "man bites dog" produce the same vector for
#    "dog", the same vector for "man", and the same pooled sentence vector. To attention alone a
#    sentence is a bag of words.
# 4. You find out exactly how much a causal mask changes this picture (less than it seems).
#
# The rest of the course is about the fixes: adding a position vector to each token (chapters 1
# and 2), biasing the attention scores by distance (chapter 3), and rotating queries and keys by
# their position (chapter 4).
#
# **How the exercises work.** Each exercise is a function or class whose body holds a `# Hint` (the
# idea and the shapes) and a `raise NotImplementedError`. Replace them with your code and run the
# self-check cell below it: it runs the checks the grader runs on small inputs, in well under a
# second, and says what is wrong. When it fails it adds a hint, and each new attempt that still
# fails shows a more specific one, the last being the key line of a solution. Run All works on an
# unfinished notebook: a demo whose exercise is not done yet says so in one line.

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
# ## 0.1 Scaled dot-product attention
#
# Take $L_q$ queries $q_i \in \mathbb{R}^d$, $L_k$ keys $k_j \in \mathbb{R}^d$ and one value
# $v_j \in \mathbb{R}^{d_v}$ per key, stacked as the rows of $Q$ ($L_q\times d$), $K$
# ($L_k \times d$) and $V$ ($L_k\times d_v$). Attention (Vaswani et al., 2017) computes
#
# $$s_{ij} = \frac{q_i\cdot k_j}{\sqrt d} + m_{ij}, \qquad
#   a_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}, \qquad
#   o_i = \sum_j a_{ij}\, v_j,$$
#
# or in one line $O = \operatorname{softmax}\!\big(QK^\top/\sqrt d + M\big)\,V$, with the softmax
# taken over each row, that is over the **keys** of one query. Each output $o_i$ is a weighted
# average of the values: the weights are positive and sum to 1.
#
# In a self-attention layer all three come from the same tokens: $q_i = W_Q x_i$, $k_j = W_K x_j$,
# $v_j = W_V x_j$, where $x_i \in \mathbb{R}^{d_{model}}$ is token $i$ and $W_Q$, $W_K$, $W_V$ are the
# weights of `nn.Linear` layers ($d\times d_{model}$: one row per output coordinate). The course writes
# vectors as columns throughout, so the score of a pair is $q_i\cdot k_j = x_i^\top W_Q^\top W_K\, x_j$,
# and with the tokens stacked as the rows of $X$ ($L\times d_{model}$): $Q = XW_Q^\top$,
# $K = XW_K^\top$, $V = XW_V^\top$. A multi-head layer runs $H$ of these side by side on slices of
# width $d = d_{model}/H$, which is why the tensors in PyTorch have the layout
# (batch, heads, seq, head_dim).
#
# ### Why divide by $\sqrt d$?
#
# Suppose the entries of $q_i$ and $k_j$ are independent with mean 0 and variance 1. Then
# $q_i\cdot k_j = \sum_{t=1}^d q_{it}k_{jt}$ is a sum of $d$ independent terms of mean 0 and
# variance 1, so it has mean 0 and **variance $d$**. With $d = 64$ the scores are typically
# $\pm 8$; the softmax of such numbers is close to one-hot and its gradient close to zero, so the
# layer barely learns. Dividing by $\sqrt d$ brings the variance back to 1 whatever the width
# (Vaswani et al., 2017, give this argument in a footnote). Dividing by $d$ instead would shrink
# the scores to variance $1/d$ and make every attention pattern nearly uniform.
#
# ### Masks
#
# The matrix $M$ decides which keys a query may use. PyTorch's
# `torch.nn.functional.scaled_dot_product_attention` (SDPA) accepts two kinds, and so will yours:
#
# * a **bool** mask, `True` where the query **may** attend. A `False` entry is turned into
#   $m_{ij} = -\infty$, so $e^{s_{ij}} = 0$ and that key gets weight exactly 0;
# * a **float** mask, added to the scores as it is. $-\infty$ entries forbid keys; finite entries
#   are biases (chapter 3 passes relative-position biases this way).
#
# The mask must enter **before** the softmax. Zeroing weights after it leaves rows that no longer
# sum to 1, and adding $-\infty$ after it produces infinities.
#
# Careful with polarity: `torch.nn.MultiheadAttention` uses the opposite convention for its bool
# masks (`True` means *not allowed*). Swapping the two is a classic bug; the SDPA convention,
# `True` = attend, is the one used throughout this course.
#
# A mask is broadcast against the scores, shape (batch, heads, $L_q$, $L_k$): a (Lq, Lk) mask
# applies to every batch element and head.
#
# ### Causal masks and fewer queries than keys
#
# A language model predicts token $i+1$ from tokens $0..i$, so query $i$ may only see keys
# $j\le i$: the **causal** mask is lower triangular. When a model decodes with a cache it has
# $L_k$ stored keys but only the $L_q$ newest queries. In this course (as in Hugging Face's
# decoders) queries are aligned to the end: query $i$ sits at position $L_k - L_q + i$ and may see
# keys $j \le L_k - L_q + i$. Note that SDPA's own `is_causal=True` aligns them to the *start*
# (its mask is `tril(diagonal=0)` of an $L_q\times L_k$ matrix), which is wrong for a cache; that
# is why this course always passes explicit masks.
#
# ### Two details that make a from-scratch version equal torch's
#
# * **A query that may see no key at all.** Every score in its row is $-\infty$ and the plain
#   softmax computes $0/0 = $ NaN, which would then spread through every later layer. Recent PyTorch
#   releases (2.13 is used here) return zeros for such a row instead; so does your function: set
#   those rows of weights to zero after the softmax.
# * **Half precision.** A softmax in float16 keeps only about three decimal digits. Compute in at
#   least float32 and cast the result back, so the output keeps the input's dtype, as practitioners'
#   kernels do.

# %% [markdown]
# ### Exercise 0.1 — `scaled_dot_product_attention(q, k, v, mask=None)`
#
# `q` has shape (..., $L_q$, d), `k` (..., $L_k$, d), `v` (..., $L_k$, $d_v$), usually
# (batch, heads, seq, head_dim); return (..., $L_q$, $d_v$) in `q`'s dtype, on `q`'s device.
# `mask` is `None`, a bool tensor (`True` = may attend) or a float tensor (added), broadcastable to
# (..., $L_q$, $L_k$). Your function must give what `torch.nn.functional.scaled_dot_product_attention`
# gives (so do not call it, nor `torch.nn.MultiheadAttention`).
#
# Bad input raises `ValueError` with a message that names the problem and the values:
# `q` and `k` with different `head_dim`, `k` and `v` with different numbers of keys, or a mask that
# is neither bool nor floating (an integer 0/1 mask is ambiguous: is 1 "attend" or "add 1"?).

# %%
#| export
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / sqrt(d) + mask) v, softmax over the keys. Returns (..., Lq, dv).

    q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), usually (batch, heads, seq, head_dim).

    mask: None, bool (True = may attend) or float (added to the scores), broadcastable to (..., Lq, Lk).
    A query whose keys are all masked gets zeros, as torch's SDPA returns.
    """
    ### BEGIN SOLUTION
    # Hint: the idea: one score per (query, key) pair, the mask applied to the scores, a softmax over the
    #       keys of each query, then a weighted average of the values. Check the inputs before computing.
    #       Shapes: q (..., Lq, d) and k (..., Lk, d) give scores (..., Lq, Lk); the weights (..., Lq, Lk)
    #       times v (..., Lk, dv) give the output (..., Lq, dv).
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same head_dim, got head_dim={q.shape[-1]} for q "
                         f"and head_dim={k.shape[-1]} for k")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must hold the same number of keys, got k_len={k.shape[-2]} "
                         f"and v_len={v.shape[-2]}")
    if mask is not None and mask.dtype != torch.bool and not mask.is_floating_point():
        raise ValueError(f"mask must be bool (True = may attend) or floating (added to the scores), "
                         f"got mask dtype {mask.dtype}")
    out_dtype = q.dtype
    # float16/bfloat16 are computed in float32; float64 stays float64
    work = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    # s_ij = q_i · k_j / sqrt(d)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., Lq, Lk)
    if mask is not None:
        if mask.dtype == torch.bool:
            # m_ij = -inf where the query may not attend
            scores = scores.masked_fill(~mask, float("-inf"))  # (..., Lq, Lk)
        else:
            scores = scores + mask.to(work)  # (..., Lq, Lk)
    # a_ij = exp(s_ij) / sum_j' exp(s_ij'): each query's weights over the keys
    weights = torch.softmax(scores, dim=-1)  # (..., Lq, Lk)
    # a query that sees no key: 0/0 = NaN above; torch returns zeros there
    blocked = torch.isneginf(scores).all(dim=-1, keepdim=True)  # (..., Lq, 1)
    weights = weights.masked_fill(blocked, 0.0)  # (..., Lq, Lk)
    # o_i = sum_j a_ij v_j
    return (weights @ v).to(out_dtype)  # (..., Lq, dv)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("scaled_dot_product_attention", scaled_dot_product_attention)

# %% [markdown]
# Compare with PyTorch's own kernel on a causal mask with fewer queries than keys, the case a
# decoder with a cache runs at every step. The difference is at float32 rounding level.

# %% tags=["demo"]
@demo
def compare_with_torch(batch=2, heads=4, q_len=3, k_len=7, head_dim=16):
    q = torch.randn(batch, heads, q_len, head_dim)
    k = torch.randn(batch, heads, k_len, head_dim)
    v = torch.randn(batch, heads, k_len, head_dim)
    # query i sits at position k_len - q_len + i and sees keys j <= that position
    causal = torch.ones(q_len, k_len, dtype=torch.bool).tril(diagonal=k_len - q_len)  # (Lq, Lk)
    ours = scaled_dot_product_attention(q, k, v, causal)
    theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal)
    print(causal.int())
    print(f"max |ours - torch| = {(ours - theirs).abs().max():.2e}")


compare_with_torch()

# %% [markdown]
# ## 0.2 Attention is permutation-equivariant
#
# Write a permutation of the $L$ tokens as a permutation matrix $P$ ($L\times L$, one 1 in every
# row and column): row $i$ of $PX$ is row $\pi(i)$ of $X$. Two facts about permutation matrices do
# all the work:
#
# * $P^\top P = I$ (undoing a shuffle is a shuffle);
# * a map that acts on each row separately commutes with $P$. For a weight matrix,
#   $(PX)W^\top = P(XW^\top)$: shuffling rows and then transforming them is the same as transforming
#   and then shuffling.
#
# **Claim.** Let $\mathrm{Attn}(X) = \operatorname{softmax}\!\big(XW_Q^\top (XW_K^\top)^\top/\sqrt d\big)
# \,XW_V^\top$ (no mask). Then for every permutation matrix $P$,
#
# $$\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X).$$
#
# **Proof.** With $Q = XW_Q^\top$, $K = XW_K^\top$, $V = XW_V^\top$, the permuted input gives $PQ$,
# $PK$ and $PV$ (second fact). Its score matrix is
#
# $$\frac{(PQ)(PK)^\top}{\sqrt d} = P\,\frac{QK^\top}{\sqrt d}\,P^\top = PSP^\top,$$
#
# whose entry $(i, j)$ is $S_{\pi(i)\pi(j)}$. Row $i$ of $PSP^\top$ is therefore row $\pi(i)$ of
# $S$ with its entries reordered by $\pi$. The row softmax does not care about the order of the
# entries within a row (the denominator is a sum), so it reorders its outputs the same way:
#
# $$\operatorname{softmax}(PSP^\top) = P\,\operatorname{softmax}(S)\,P^\top = PAP^\top .$$
#
# Finally $\mathrm{Attn}(PX) = PAP^\top\,PV = PA\,(P^\top P)\,V = P\,AV = P\,\mathrm{Attn}(X)$.
# $\blacksquare$
#
# The same argument covers everything else in a Transformer block without positions: the
# feed-forward network, layer normalisation and the residual additions act on each token
# separately, so they commute with $P$ too. A whole encoder stack is permutation-equivariant.
#
# With a mask, two cases must be kept apart.
#
# * **A mask that belongs to the tokens and moves with them.** A padding mask hides key $j$ because
#   token $j$ is padding; shuffle the tokens and the mask is shuffled with them, $M \mapsto PMP^\top$.
#   Then $\operatorname{softmax}(PSP^\top + PMP^\top) = P\,\operatorname{softmax}(S + M)\,P^\top$ and the
#   proof goes through unchanged: equivariance holds for every $P$.
# * **A fixed mask that stays where it is.** A causal mask depends on the row and column numbers, not
#   on the tokens, so the permuted input meets the same $M$:
#   $\operatorname{softmax}(PSP^\top + M) = P\,\operatorname{softmax}(S + P^\top MP)\,P^\top$.
#   Equivariance survives for a permutation $P$ only when $P^\top MP = M$; for the causal mask that
#   holds for the identity alone (section 0.4).
#
# Check it on random tokens: permute them, run attention, and compare with the permuted output.

# %% tags=["demo"]
@demo
def show_equivariance(seq_len=6, dim=8):
    x = torch.randn(1, 1, seq_len, dim)  # one sequence, one head
    perm = torch.randperm(seq_len)
    out = scaled_dot_product_attention(x, x, x)  # Attn(X)
    out_of_permuted = scaled_dot_product_attention(x[:, :, perm], x[:, :, perm], x[:, :, perm])  # Attn(PX)
    print("permutation:", perm.tolist())
    print(f"max |Attn(PX) - P Attn(X)| = {(out_of_permuted - out[:, :, perm]).abs().max():.2e}")
    print(f"max |Attn(PX) -   Attn(X)| = {(out_of_permuted - out).abs().max():.2e}  (the rows did move)")


show_equivariance()

# %% [markdown]
# ## 0.3 "Dog bites man" is a bag of words
#
# Embed the two sentences with one table of word vectors: $X_1$ has rows
# $(e_{dog}, e_{bites}, e_{man})$ and $X_2 = PX_1$ has rows $(e_{man}, e_{bites}, e_{dog})$, with
# $P$ the swap of the first and last rows. By the claim, $Y_2 = PY_1$. Read that row by row:
#
# * the output for **dog** is the same vector in both sentences, whether the dog bites or is
#   bitten; the same holds for **man** and for **bites**;
# * any summary that does not look at row numbers is identical. Mean pooling gives
#   $\tfrac1L\mathbf 1^\top Y_2 = \tfrac1L\mathbf 1^\top PY_1 = \tfrac1L\mathbf 1^\top Y_1$
#   because $\mathbf 1^\top P = \mathbf 1^\top$; a classification token prepended to both
#   sentences (BERT's `[CLS]`) also gets the same output, since it attends to the same set of
#   tokens.
#
# Reading "the output at row 0" would tell the sentences apart, but only because *you* supplied
# the position from outside the model. Inside, the layer has no way to prefer "dog then man" over
# "man then dog": it computes a function of the *set* of words (with repetitions counted), a bag
# of words. Adding any position-dependent vector to the rows breaks the symmetry, which is what the
# next chapters do properly.

# %% tags=["demo"]
@demo
def dog_bites_man(dim=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    vocab = {"dog": 0, "bites": 1, "man": 2, "[CLS]": 3}
    embed = torch.randn(len(vocab), dim, generator=gen)  # one vector per word
    w_q, w_k, w_v = (torch.randn(dim, dim, generator=gen) / math.sqrt(dim) for _ in range(3))

    def layer(words, positions=None):
        x = embed[torch.tensor([vocab[w] for w in words])]  # (L, dim)
        if positions is not None:
            x = x + positions[: len(words)]
        x = x[None, None]  # (1, 1, L, dim): batch 1, one head
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)[0, 0]  # (L, dim)

    s1, s2 = ["[CLS]", "dog", "bites", "man"], ["[CLS]", "man", "bites", "dog"]
    y1, y2 = layer(s1), layer(s2)
    print("without positions: |output in sentence 1 - output in sentence 2|, word by word")
    for word in s1:
        print(f"  {word:6s} {(y1[s1.index(word)] - y2[s2.index(word)]).norm():.2e}")
    print(f"  mean-pooled sentence vectors differ by {(y1.mean(0) - y2.mean(0)).norm():.2e}")
    positions = torch.randn(len(s1), dim, generator=gen)  # any vector per position will do
    z1, z2 = layer(s1, positions), layer(s2, positions)
    print("with a vector added per position:")
    print(f"  [CLS]  {(z1[0] - z2[0]).norm():.2e}")
    print(f"  mean-pooled sentence vectors differ by {(z1.mean(0) - z2.mean(0)).norm():.2e}")


dog_bites_man()

# %% [markdown]
# ## 0.4 What a causal mask changes, and what it does not
#
# Decoder-only language models use the causal mask, which is not invariant under permutations, so
# the proof above does not apply. How much order information does the mask provide?
#
# With the causal mask, query $i$ attends to keys $0..i$ only:
#
# $$o_i = \sum_{j \le i} \frac{\exp(q_i\cdot k_j/\sqrt d)}{\sum_{j'\le i}\exp(q_i\cdot k_{j'}/\sqrt d)}\; v_j .$$
#
# The sums run over the set $\{0, \dots, i\}$ and do not depend on the order of their terms. So in
# one causal layer, $o_i$ is a function of **the token at $i$ and the tokens up to $i$, in any
# order**, and of nothing else. Precisely:
#
# * Equivariance is gone: moving a token changes which queries can see it. Swap the tokens at
#   positions 1 and 4 of a six-token sequence and the outputs at positions 1, 2, 3 and 4 change
#   (their prefixes gained or lost a token), not merely their order.
# * Order *inside* a prefix is invisible: the outputs at positions 0 and 5 are exactly unchanged,
#   because position 5 sees the same multiset of tokens in a different order.
# * Not even the count is visible. Numerator and denominator both grow with every copy of a token, so
#   only the *proportions* of the tokens seen matter: the last token of $[a, b]$ and the last token of
#   $[a, a, b, b]$ get exactly the same output. A token cannot read its own index from one causal
#   layer. It can once there is an anchor: with a token that always comes first (a BOS token), the
#   weight that token receives shrinks as the prefix grows, roughly like $1/(i+1)$, and a later
#   layer can read the position from it. The cell after the plot shows both.
#
# In a stack of causal layers the second layer sees outputs of the first, which already differ when
# earlier prefixes differ, so depth lets a model recover order information. Language models trained
# with no positional encoding at all do learn positional information this way (Haviv et al., 2022).
# Nothing like this happens in a bidirectional encoder: there every layer is equivariant and no
# depth helps. Either way, explicit positions give the model distances directly instead of leaving
# it to infer them, which is what every model in this course does.
#
# The plot compares the outputs after the swap with the outputs before it, moved by the same
# permutation: for full attention they agree everywhere (equivariance); for causal attention they
# differ exactly at the positions whose prefix changed.

# %% tags=["demo"]
@demo
def plot_causal_swap(seq_len=6, dim=8, swap=(1, 4)):
    x = torch.randn(1, 1, seq_len, dim)
    perm = torch.arange(seq_len)
    perm[list(swap)] = perm[list(reversed(swap))]  # exchange two tokens
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    xp = x[:, :, perm]
    fig, axes = plt.subplots(1, 2, figsize=(9, 2.8), sharey=True)
    for ax, (title, mask) in zip(axes, [("full attention", None), ("causal attention", causal)]):
        before = scaled_dot_product_attention(x, x, x, mask)[0, 0]  # (L, dim)
        after = scaled_dot_product_attention(xp, xp, xp, mask)[0, 0]  # (L, dim)
        change = (after - before[perm]).norm(dim=-1)  # |Attn(PX)_i - (P Attn(X))_i|
        ax.bar(range(seq_len), change.numpy())
        ax.set_title(f"{title}: tokens {swap[0]} and {swap[1]} swapped")
        ax.set_xlabel("position i")
    axes[0].set_ylabel("|Attn(PX)_i - (P Attn(X))_i|")
    plt.tight_layout()
    plt.show()


plot_causal_swap()

# %% [markdown]
# One causal layer cannot count: the last token of $[a, b]$ and of $[a, a, b, b]$ gets the same output.
# Put a BOS token in front and the outputs differ, because the BOS token's share of the weights
# depends on how many tokens came after it.

# %% tags=["demo"]
@demo
def counting_needs_an_anchor(dim=8, seed=0):
    gen = torch.Generator().manual_seed(seed)
    a, b, bos = torch.randn(3, dim, generator=gen)  # three token vectors

    def last_output(tokens):  # one causal layer without positions: the output at the last token
        x = torch.stack(tokens)[None, None]  # (1, 1, L, dim)
        causal = torch.ones(len(tokens), len(tokens), dtype=torch.bool).tril()  # (L, L)
        return scaled_dot_product_attention(x, x, x, causal)[0, 0, -1]  # (dim,)

    same = (last_output([a, b]) - last_output([a, a, b, b])).norm()
    anchored = (last_output([bos, a, b]) - last_output([bos, a, a, b, b])).norm()
    print(f"[a, b] vs [a, a, b, b]: last outputs differ by {same:.1e}")
    print(f"[BOS, a, b] vs [BOS, a, a, b, b]: last outputs differ by {anchored:.2f}")


counting_needs_an_anchor()

# %% [markdown]
# ## 0.5 Summary
#
# * Attention computes $\operatorname{softmax}(QK^\top/\sqrt d + M)V$, softmax over the keys; the
#   $1/\sqrt d$ keeps the scores at unit variance; a bool mask is `True` where a query may attend
#   and enters before the softmax.
# * Without positions, $\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)$: a Transformer encoder treats a
#   sentence as a bag of words, and "dog bites man" pools to the same vector as "man bites dog".
# * A causal mask breaks the symmetry only partly: one causal layer sees each prefix as the
#   proportions of its tokens, unordered and uncounted; an anchor such as a BOS token lets a model
#   count.
#
# **Further reading.** Vaswani et al. (2017), *Attention Is All You Need*, §3.2 (attention) and
# §3.5 (why positions are added). Haviv et al. (2022), *Transformer Language Models without
# Positional Encodings Still Learn Positional Information*. Chapter 1 adds the original fix, a
# fixed sinusoidal vector per position.
