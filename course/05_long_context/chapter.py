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
# # Chapter 5 — Long context
#
# Chapter 4's rotary embedding is a formula, the angle $m\,\theta_i$, defined for every position $m$.
# It is tempting to conclude, as some tutorials do, that RoPE gives "theoretically unlimited
# context". It does not. A model trained on sequences of $L_0$ tokens and then run on $4L_0$ tokens
# sees its perplexity climb, often steeply: the formula extends, but what the model *learned* about
# the formula's values does not. This chapter explains why, then builds five ways of computing RoPE
# frequencies that Hugging Face `transformers` ships for Llama-style models (the library has a few
# more, such as `longrope`, whose per-pair factors are stored in the config):
#
# | `rope_type` | idea | source |
# | --- | --- | --- |
# | `default` | $\theta_i = \text{base}^{-2i/d}$, no scaling | Su et al. (2021) |
# | `linear` | divide every frequency by the factor $s$ (position interpolation) | Chen et al. (2023) |
# | `dynamic` | raise the base, more as the sequence grows (NTK-aware) | bloc97 (2023), emozilla (2023) |
# | `yarn` | interpolate slow pairs, keep fast ones, ramp in between; sharpen attention | Peng et al. (2023) |
# | `llama3` | the same split, by wavelength bands, no sharpening | Llama 3.1 (Meta, 2024) |
#
# You will implement `rope_wavelengths`, `yarn_ramp` and `scaled_rope_inv_freq`, and check the last
# against `transformers` 5.x number for number. All five methods only change the vector of inverse
# frequencies (plus, for YaRN, one scalar); the rotation itself is chapter 4's, untouched.

# %%
#| export
import math

import torch

# %%
import warnings

import matplotlib.pyplot as plt

from posenc_selfcheck import check

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 5.1 Why models degrade past their training length
#
# Recall chapter 4. Query and key vectors are split into $d/2$ pairs (head dimension $d$); pair $i$
# of the token at position $m$ is rotated by the angle $m\,\theta_i$ with
#
# $$\theta_i = \text{base}^{-2i/d}, \qquad i = 0, \dots, d/2 - 1,$$
#
# so the score between a query at $m$ and a key at $n$ depends, pair by pair, on the relative angle
# $(m-n)\,\theta_i$. Pair $i$ turns a full circle every $\lambda_i = 2\pi/\theta_i$ tokens: its
# **wavelength**. With $d = 128$ and base $10^4$ (LLaMA 1 and 2) the wavelengths run from $2\pi
# \approx 6.3$ tokens (pair 0) to about $54\,000$ tokens (pair 63).
#
# Training on sequences of $L_0$ tokens shows the model relative distances $0, \dots, L_0 - 1$ only.
# What that means depends on the pair:
#
# * **Fast pairs** ($\lambda_i \ll L_0$) complete many turns within the training length. Every angle
#   on their circle has been seen, many times over; a longer distance produces an angle the model
#   already knows.
# * **Slow pairs** ($\lambda_i > L_0$) never complete a turn. They only ever saw the arc
#   $[0, (L_0-1)\,\theta_i]$. At distances beyond $L_0$ they produce angles *no training example
#   contained*: the queries and keys are rotated into directions the attention weights were never
#   fitted to. For LLaMA 2 ($L_0 = 4096$) this is pairs 46 to 63, 18 of the 64. The slowest turns
#   by $0.47$ rad ($27°$) over the training length, and by $1.89$ rad ($108°$) at $4L_0$.
#
# The plot shows both: on the left the slowest pair's arc, seen in training and not; on the right the
# number of turns each pair completes within $L_0$ tokens. Pairs below the line at one turn are
# the ones that extrapolate.
#
# A second, independent effect is **attention entropy**. Softmax over $n$ keys spreads its mass more
# thinly as $n$ grows: if the logits keep the same spread, the entropy of the attention grows like
# $\log n$. At $4L_0$ tokens every head is more diffuse than anything it saw in training, even if no
# angle were new. (Section 5.4 plots this and YaRN's correction.)

# %% tags=["demo"]
def plot_unseen_angles(head_dim=128, base=10000.0, train_len=4096, factor=4):
    # theta_i = base^(-2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d/2,)
    wavelength = 2 * math.pi / inv_freq  # tokens per full turn, (d/2,)
    slowest = inv_freq[-1].item()
    t = torch.linspace(0, 1, 200)
    seen = t * train_len * slowest  # angles of distances 0 .. L0
    unseen = (1 + t * (factor - 1)) * train_len * slowest  # distances L0 .. factor * L0
    circle = torch.linspace(0, 2 * math.pi, 400)

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax0.plot(circle.cos(), circle.sin(), color="0.85")
    ax0.plot(seen.cos(), seen.sin(), lw=5, label=f"distances 0 .. {train_len} (training)")
    ax0.plot(unseen.cos(), unseen.sin(), lw=5, label=f"{train_len} .. {factor * train_len}: never seen")
    ax0.set_aspect("equal")
    ax0.set_title(f"slowest pair (i = {head_dim // 2 - 1}), angle (m - n)·θ")
    ax0.legend(loc="lower left", fontsize=8)
    ax1.semilogy((train_len / wavelength).numpy(), ".")
    ax1.axhline(1, color="k", lw=0.8)
    ax1.text(0, 1.3, "one turn", fontsize=8)
    ax1.set_xlabel("pair index i")
    ax1.set_ylabel(f"turns within L0 = {train_len} tokens")
    ax1.set_title(f"d = {head_dim}, base = {base:g}")
    plt.tight_layout()
    plt.show()


plot_unseen_angles()

# %% [markdown]
# ### Exercise 5.1 — `rope_wavelengths`
#
# `rope_wavelengths(head_dim, base=10000.0)`
#
# Return every pair's wavelength, $\lambda_i = 2\pi/\theta_i = 2\pi\,\text{base}^{2i/d}$ for
# $i = 0, \dots, d/2 - 1$: a float32 tensor of $d/2$ numbers of tokens. Compute the frequencies
# $\theta_i$ in float32 as chapter 4 does, then divide. Raise `ValueError` naming `head_dim` when it
# is odd or not positive. The cell after the self-check uses it to list the pairs that never complete
# a turn within $L_0$ tokens.

# %%
#| export
def rope_wavelengths(head_dim, base=10000.0):
    """lambda_i = 2 pi / theta_i = 2 pi base^(2i/d), i = 0 .. d/2 - 1: the tokens pair i takes to turn a full
    circle. Returns (head_dim/2,) float32."""
    ### BEGIN SOLUTION
    # Hint: the idea: pair i turns by theta_i radians per token, so it is back where it started after 2 pi / theta_i
    #       tokens. Call chapter 4's frequencies inv_freq.
    #       Shapes: inv_freq (head_dim/2,), wavelengths (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    # theta_i = 1 / base^(2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d/2,)
    # lambda_i = 2 pi / theta_i
    return 2 * math.pi / inv_freq  # (d/2,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rope_wavelengths", rope_wavelengths)


# %% tags=["demo"]
@demo
def slow_pairs(head_dim=128, base=10000.0, train_len=4096):
    slow = (rope_wavelengths(head_dim, base) > train_len).nonzero().flatten()  # the pairs' indices, (n,)
    print(f"d = {head_dim}, base = {base:g}, L0 = {train_len}: pairs {slow[0].item()} to {slow[-1].item()} "
          f"({len(slow)} of {head_dim // 2}) never complete a turn")


slow_pairs()

# %% [markdown]
# ### What the evidence says
#
# Press et al. (2022) trained the same language model with different position methods on
# WikiText-103 at 512 and 1024 tokens and evaluated it on longer inputs. The perplexity of the
# sinusoidal, rotary and T5-bias models degrades as the evaluation length grows; ALiBi's (chapter 3)
# does not. (T5's bias was also the slowest and ran out of memory first.) Two cautions in reading
# that result. A flat perplexity says the model does not *break* on long inputs; it does not say
# that the model *uses* tokens thousands of positions back: ALiBi's penalty $-m_h\,|j-i|$ grows
# with the distance, so in most heads far-away keys receive almost no weight at all. And ALiBi is a
# bias, not a rotation: the rotary models that dominate today needed another answer.
#
# That answer is to change the frequencies. Every method below keeps chapter 4's rotation and
# rescales $\theta_i$ so that, at the new length $s L_0$ (the **factor** $s$), the angles stay
# within what training showed. They differ in *which* pairs they rescale, and by how much.
#
# The base itself is the first knob. A larger base slows every pair down except the first, which
# turns at $\theta_0 = \text{base}^0 = 1$ radian per token whatever the base: LLaMA 1 and 2 use
# $10^4$ (LLaMA 2 did *not* raise it), Code Llama $10^6$, LLaMA 3 $5\cdot10^5$, and Llama 3.1 adds
# the `llama3` scaling of section 5.5 on top. Changing the base of a trained model, however,
# moves every angle at once, so the methods below change it with care, or not at all.

# %% [markdown]
# ## 5.2 Position interpolation (`linear`)
#
# Chen et al. (2023) proposed the simplest fix (found at about the same time by the Reddit user
# kaiokendev): to run a model on $s L_0$ tokens, squeeze the positions, $m \mapsto m/s$. Position $s L_0$ then
# lands where $L_0$ was, and every angle stays inside the trained arc. Since the angle is
# $m\,\theta_i$, dividing the positions is the same as dividing the frequencies:
#
# $$\theta_i' = \theta_i / s \quad\text{for every pair } i.$$
#
# Interpolation trades extrapolation for *resolution*. Neighbouring tokens, one position apart, are
# now only $\theta_i/s$ apart in angle: the fast pairs, which tell neighbours apart, are compressed by
# $s$ too. Chen et al. report that a short fine-tuning (about a thousand steps) at the new length
# lets LLaMA recover, where fine-tuning without interpolation extends the context poorly.
#
# Dividing (not multiplying) is the whole method: the frequencies get *slower* so that positions
# travel less far. Multiplying by $s$ would make every pair $s$ times faster and put even the
# training-length angles out of range.

# %% [markdown]
# ## 5.3 NTK-aware scaling and `dynamic`
#
# Interpolating the fast pairs is wasteful: they have already seen their whole circle. A Reddit post
# by bloc97 (2023), motivated by neural-tangent-kernel arguments about learning high frequencies,
# suggested changing the *base* instead. Choose $\text{base}'$ so that the slowest pair
# ($i = d/2 - 1$, exponent $(d-2)/d$) is divided by exactly $\alpha$:
#
# $$\text{base}'^{-(d-2)/d} = \frac{\text{base}^{-(d-2)/d}}{\alpha}
# \quad\Longrightarrow\quad \text{base}' = \text{base}\cdot\alpha^{d/(d-2)}.$$
#
# Then pair $i$ is divided by $\alpha^{2i/(d-2)}$: pair 0 not at all, the slowest by $\alpha$, and
# geometrically in between. Forget the exponent $d/(d-2)$ and the slowest pair is divided by only
# $\alpha^{(d-2)/d}$, slightly less than asked (noticeably so for small $d$).
#
# The **dynamic** variant (posted by emozilla, 2023; `rope_type="dynamic"` in `transformers`) picks
# $\alpha$ from the current sequence length $L$, so that short inputs run exactly as in training:
#
# $$\alpha = \frac{s\,L}{L_0} - (s - 1), \qquad L = \max(\text{seq\_len}, L_0),
# \qquad \text{base}' = \text{base}\cdot\alpha^{d/(d-2)}.$$
#
# At $L \le L_0$, $\alpha = 1$ and nothing changes. Beyond, $\alpha$ grows linearly with slope
# $s/L_0$; note that at $L = sL_0$ it is $s^2 - s + 1$, not $s$: in `dynamic`, the factor is a
# slope, not the length ratio. The clamp $L \ge L_0$ matters: without it, $\alpha < 1$ for short
# inputs *speeds up* the slow pairs, and for $L < L_0 (s-1)/s$ it is negative.
#
# Two practical consequences. `transformers` recomputes the frequencies when a sequence grows past
# the longest length seen so far, and goes back to the original ones only when a sequence
# shorter than the original length $L_0$ follows a longer one (a sequence between $L_0$ and the
# longest seen keeps the frequencies of the longest). And the keys already in a KV cache were
# rotated with the frequencies in force when they were computed: after a recomputation, old and new
# keys disagree slightly. Dynamic scaling needs no
# fine-tuning, which is its appeal; that inconsistency is its price.

# %% [markdown]
# ## 5.4 YaRN: interpolate by parts, then sharpen
#
# Peng et al. (2023) combine the two previous ideas pair by pair ("NTK-by-parts"), using the count
# from section 5.1: pair $i$ completes $r_i = L_0/\lambda_i$ turns within the training length.
#
# * $r_i > \beta_{fast}$ (default $32$): many turns, fully trained. Keep $\theta_i$ (extrapolate).
# * $r_i < \beta_{slow}$ (default $1$): not even one turn. Interpolate, $\theta_i / s$.
# * in between: a linear ramp, in the pair index.
#
# Solving $L_0/\lambda_i = r$ for $i$ gives the (fractional) pair index that turns exactly $r$ times:
#
# $$\text{corr}(r) = \frac{d\,\ln\!\big(L_0 / (2\pi r)\big)}{2\ln \text{base}}.$$
#
# YaRN's code, which `transformers` follows, then sets
#
# $$\text{low} = \lfloor \text{corr}(\beta_{fast}) \rfloor, \qquad \text{high} = \lceil
# \text{corr}(\beta_{slow}) \rceil, \qquad \text{both clamped to } [0, d-1],$$
#
# (`truncate=False` skips the floor and ceiling), adds $0.001$ to high when the two are equal, and
# defines the ramp over pairs $j = 0, \dots, d/2 - 1$
#
# $$\gamma_j = \operatorname{clamp}\!\Big(\frac{j - \text{low}}{\text{high} - \text{low}}, 0, 1\Big),
# \qquad \theta_j' = \gamma_j\,\frac{\theta_j}{s} + (1 - \gamma_j)\,\theta_j.$$
#
# $\gamma_j = 0$ for the fast pairs (small $j$) and $1$ for the slow ones. Two details are easy to get
# wrong. The ramp goes *up* with $j$: the *slow* pairs are interpolated; reversing it compresses
# exactly the pairs that did not need it and leaves the unseen angles in place. And the upper clamp
# is $d - 1$, although there are only $d/2$ pairs: it is a quirk of the original code, invisible
# whenever $\lceil\text{corr}(\beta_{slow})\rceil \le d/2 - 1$ (the usual case), but it changes the
# slope of the ramp when the slow pairs are very slow. Match it.
#
# For LLaMA 2 ($d = 128$, base $10^4$, $L_0 = 4096$): $\text{corr}(32) \approx 20.9$ and
# $\text{corr}(1) \approx 45.0$, so pairs $0$–$20$ are kept, $46$–$63$ interpolated, and the ramp
# runs between.
#
# **Attention temperature.** YaRN also sharpens the softmax, dividing the logits by a temperature
# $t$ with
#
# $$\sqrt{1/t} = 0.1\,\ln s + 1,$$
#
# a fit Peng et al. found to lower perplexity across factors. The implementation does not touch the
# logits: it multiplies both $\cos$ and $\sin$ by $\sqrt{1/t}$. Queries and keys are each scaled by
# it, so their dot product is scaled by $1/t$. (So YaRN's map is no longer a pure rotation, and
# chapter 4's "norms are kept" holds up to that one constant: it is a rotation times a global
# temperature, the same for every position, so scores stay relative.) That is why the returned **attention_factor** is
# $0.1\ln s + 1$ and not its square. (At $s = 4$ it is $1.139$; at $s = 8$, $1.208$; for $s \le 1$
# it is $1$.) A config may instead set `attention_factor` explicitly, or give `mscale` and
# `mscale_all_dim` (DeepSeek's configs do); with both present and non-zero, the factor is
# $\text{m}(s, \text{mscale}) / \text{m}(s, \text{mscale\_all\_dim})$ with
# $\text{m}(s, \mu) = 0.1\,\mu\ln s + 1$ (and $1$ when $s \le 1$).
#
# The toy below shows the effect the temperature counters: random logits with a fixed spread, more
# and more keys. The entropy rises by about $\ln 2$ per doubling; multiplying the logits by
# $(0.1\ln s + 1)^2$ brings it down. (Real attention is not Gaussian: the plot shows the direction
# of the correction, not its size.)

# %% tags=["demo"]
def plot_attention_entropy(train_len=4096, factor=4, spread=2.0, queries=64):
    lengths = [train_len // 4, train_len // 2, train_len, 2 * train_len, factor * train_len]
    noise = torch.randn(queries, lengths[-1], generator=torch.Generator().manual_seed(0))  # (Q, n_max)
    sharpen = (0.1 * math.log(factor) + 1) ** 2  # cos and sin each scaled: the logits get the square
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for scale, label in ((1.0, "logits as trained"), (sharpen, f"logits × (0.1 ln {factor} + 1)²")):
        entropy = []
        for n in lengths:
            logits = spread * scale * noise[:, :n]  # (Q, n): the first n keys
            p = logits.softmax(-1)
            entropy.append(-(p * logits.log_softmax(-1)).sum(-1).mean().item())
        ax.plot(lengths, entropy, "o-", label=label)
    ax.axvline(train_len, color="k", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("number of keys")
    ax.set_ylabel("attention entropy (nats)")
    ax.legend()
    plt.show()


plot_attention_entropy()

# %% [markdown]
# ### Exercise 5.2 — `yarn_ramp`
#
# `yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True)`
#
# Return the ramp $\gamma$ above: a float32 tensor of $d/2$ values in $[0, 1]$, $0$ for pairs that
# keep their frequency and $1$ for pairs that are interpolated. `original_max_position_embeddings`
# is $L_0$. Compute $\text{corr}$, low and high with Python floats (`math.log`, `math.floor`,
# `math.ceil`), as `transformers` does, and the ramp in float32. Raise `ValueError` naming `head_dim`
# when it is odd or not positive.

# %%
#| export
def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """YaRN's interpolation weight per pair (Peng et al., 2023). Returns (head_dim/2,) float32.

    corr(r) = d ln(L0 / (2 pi r)) / (2 ln base) is the pair that turns r times in L0 tokens;
    low = floor(corr(beta_fast)), high = ceil(corr(beta_slow)), clamped to [0, d - 1];
    ramp_j = clamp((j - low) / (high - low), 0, 1): 0 keeps theta_j, 1 uses theta_j / factor.
    """
    ### BEGIN SOLUTION
    # Hint: the idea: find the (fractional) pair indices that turn beta_fast and beta_slow times within L0
    #       tokens, and ramp linearly from 0 to 1 between them.
    #       Shapes: (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    d, train_len = head_dim, original_max_position_embeddings

    # corr(r) = d ln(L0 / (2 pi r)) / (2 ln base)
    def corr(turns):
        return d * math.log(train_len / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)  # d - 1, not d/2 - 1: as in YaRN's code
    if low == high:
        high += 0.001  # avoid 0 / 0
    j = torch.arange(d // 2, dtype=torch.float32)  # (d/2,)
    return ((j - low) / (high - low)).clamp(0, 1)  # (d/2,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("yarn_ramp", yarn_ramp)

# %% [markdown]
# ## 5.5 Llama 3.1: wavelength bands (`llama3`)
#
# Llama 3.1 applies the same split as YaRN, stated in wavelengths instead of pair indices and
# without a temperature. With $L_0$ = `original_max_position_embeddings` and two parameters
# `low_freq_factor` < `high_freq_factor`:
#
# * $\lambda_i < L_0/\text{high\_freq\_factor}$ (high frequency): keep $\theta_i$;
# * $\lambda_i > L_0/\text{low\_freq\_factor}$ (low frequency): $\theta_i / s$;
# * in between: blend, with $\sigma_i = \dfrac{L_0/\lambda_i - \text{low\_freq\_factor}}
#   {\text{high\_freq\_factor} - \text{low\_freq\_factor}}$ and
#   $\theta_i' = (1 - \sigma_i)\,\theta_i/s + \sigma_i\,\theta_i$.
#
# $L_0/\lambda_i$ is again the number of turns in the training length, so the bands are "fewer than
# low_freq_factor turns" (interpolate) and "more than high_freq_factor turns" (keep); $\sigma$ runs
# from $0$ to $1$ across the middle band and joins the other two continuously. Llama 3.1 uses
# $s = 8$, low_freq_factor $1$, high_freq_factor $4$, $L_0 = 8192$, on LLaMA 3's base $5\cdot10^5$
# with $d = 128$: wavelengths below $2048$ tokens are kept (29 pairs), those above $8192$ divided by 8
# (29 pairs), and 6 pairs are blended. `attention_factor` is $1$.
#
# Confusing the two factors is an easy slip: with them exchanged, the thresholds become
# $L_0/1$ and $L_0/4$ in the wrong roles, the middle band is empty, and every pair slower than
# $L_0/4$ is divided by the full factor.

# %% [markdown]
# ## 5.6 One function for all five
#
# In `transformers` 5.x, a model's `config.rope_parameters` is a dict such as
#
# ```python
# {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
#  "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
# ```
#
# and `modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len)` returns
# `(inv_freq, attention_factor)`; `default` is computed by each model class (for Llama,
# `LlamaRotaryEmbedding.compute_default_rope_parameters`). In 4.x the same dict was called
# `config.rope_scaling` and the base `config.rope_theta`; 5.x still accepts `rope_scaling=` and
# `rope_theta=` when a config is built and moves them into `rope_parameters` (and reads the old key
# `type` as `rope_type`). Pin the release you compare with: these functions changed between 4.x
# and 5.x.
#
# Our function takes the same numbers as arguments:
#
# * `head_dim`: `config.head_dim` (or `hidden_size // num_attention_heads`). With partial rotary
#   (chapter 4), pass the rotary dimension `int(head_dim * partial_rotary_factor)`: `transformers`
#   uses only that.
# * `base`: `rope_parameters["rope_theta"]`.
# * `factor`: `rope_parameters["factor"]`.
# * `original_max_position_embeddings`, the training length $L_0$:
#   `rope_parameters["original_max_position_embeddings"]` for `yarn` and `llama3` (filled in from
#   `max_position_embeddings` when the config has none), but `config.max_position_embeddings` for
#   `dynamic`.
# * `seq_len`: the `seq_len` argument of the `transformers` function; only `dynamic` uses it.
# * `**params`: the remaining keys. `yarn` uses `attention_factor`, `beta_fast`, `beta_slow`,
#   `mscale`, `mscale_all_dim` and `truncate`; `llama3` uses `low_freq_factor` and
#   `high_freq_factor`.
#
# Mind the one asymmetry, `dynamic`'s $L_0$. And two YaRN details: `beta_fast` / `beta_slow` given
# as `None` (or 0) mean their defaults, and `truncate` defaults to `True`.

# %% [markdown]
# ### Exercise 5.3 — `scaled_rope_inv_freq`
#
# `scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None,
# seq_len=None, **params)`
#
# Return `(inv_freq, attention_factor)`: a float32 tensor of shape $(d/2,)$ and a Python float,
# equal (to float32 rounding) to `transformers` 5.x for the same parameters:
#
# * `default`: $\theta_i = \text{base}^{-2i/d}$, computed in float32 as in chapter 4; factor 1.
# * `linear`: $\theta_i / s$; factor 1.
# * `dynamic`: $\theta_i$ with $\text{base}' = \text{base}\cdot(sL/L_0 - (s-1))^{d/(d-2)}$,
#   $L = \max(\text{seq\_len}, L_0)$ ($L = L_0$ when `seq_len` is `None`); factor 1.
# * `yarn`: blend with your `yarn_ramp`; the attention factor as in section 5.4.
# * `llama3`: the bands of section 5.5; factor 1.
#
# `seq_len` is ignored by every type but `dynamic`, and `original_max_position_embeddings` by
# `default` and `linear`. Raise `ValueError`, with a message naming the argument and its value, for
#
# * an unknown `rope_type`;
# * an odd or non-positive `head_dim` (and `head_dim = 2` with `dynamic`, whose exponent
#   $d/(d-2)$ is undefined);
# * `factor < 1` (the methods stretch the context, never shrink it);
# * `dynamic`, `yarn` or `llama3` without `original_max_position_embeddings`;
# * `llama3` without `low_freq_factor` and `high_freq_factor`, or with high $\le$ low;
# * a key in `params` that the `rope_type` does not use. (`transformers` only logs a warning for
#   unrecognised keys; a typo such as `beta_fats=16` would then silently fall back to the default.)

# %%
#| export
def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    """RoPE inverse frequencies with context-length scaling, as transformers 5.x ROPE_INIT_FUNCTIONS.

    default: theta_i = base^(-2i/d)        linear: theta_i / s           (Chen et al., 2023)
    dynamic: base' = base * (s L / L0 - (s - 1))^(d/(d-2)), L = max(seq_len, L0)   (bloc97, emozilla)
    yarn:    theta_i / s * ramp_i + theta_i * (1 - ramp_i), attention factor 0.1 ln s + 1  (Peng et al.)
    llama3:  keep wavelengths < L0/high, divide those > L0/low by s, blend between (Llama 3.1)
    Returns (inv_freq (head_dim/2,) float32, attention_factor float); cos and sin are multiplied by the factor.
    """
    ### BEGIN SOLUTION
    # Hint: the idea: validate; compute theta_i = base^(-2i/d) (with a larger base for dynamic); then change
    #       them as the rope_type says.
    #       Shapes: inv_freq (head_dim/2,) float32; attention_factor a Python float
    uses = {"default": set(), "linear": set(), "dynamic": set(),
            "yarn": {"attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"},
            "llama3": {"low_freq_factor", "high_freq_factor"}}
    if rope_type not in uses:
        raise ValueError(f"unknown rope_type={rope_type!r}; expected one of {', '.join(uses)}")
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    if factor is None or factor < 1:
        raise ValueError(f"factor must be >= 1 (scaling stretches the context, never shrinks it), got factor={factor}")
    unused = sorted(set(params) - uses[rope_type])
    if unused:
        raise ValueError(f"rope_type={rope_type!r} does not use the parameter(s) {', '.join(unused)}")
    train_len = original_max_position_embeddings
    if rope_type in ("dynamic", "yarn", "llama3") and train_len is None:
        raise ValueError(f"rope_type={rope_type!r} needs original_max_position_embeddings (the training length "
                         "L0), got original_max_position_embeddings=None")
    d = head_dim

    if rope_type == "dynamic":
        if d == 2:
            raise ValueError("dynamic scaling needs head_dim >= 4 (its exponent is d/(d-2)), got head_dim=2")
        length = train_len if seq_len is None else max(int(seq_len), train_len)  # L = max(seq_len, L0)
        # base' = base * (s L / L0 - (s - 1))^(d/(d-2))
        base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))
    # theta_i = base^(-2i/d), in float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))  # (d/2,)

    if rope_type in ("default", "dynamic"):
        return inv_freq, 1.0
    if rope_type == "linear":
        return inv_freq / factor, 1.0  # slower, not faster: positions m -> m / s

    if rope_type == "yarn":
        ramp = yarn_ramp(d, base, train_len, params.get("beta_fast") or 32, params.get("beta_slow") or 1,
                         params.get("truncate", True))  # (d/2,) 0 = keep, 1 = interpolate
        # theta'_j = ramp_j theta_j / s + (1 - ramp_j) theta_j
        inv_freq = inv_freq / factor * ramp + inv_freq * (1 - ramp)  # (d/2,)

        # m(s, mu) = 0.1 mu ln s + 1, and 1 for s <= 1
        def m(scale, mu=1.0):
            return 1.0 if scale <= 1 else 0.1 * mu * math.log(scale) + 1.0

        attention_factor = params.get("attention_factor")
        if attention_factor is None:
            mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
            attention_factor = m(factor, mscale) / m(factor, mscale_all_dim) if mscale and mscale_all_dim else m(factor)
        return inv_freq, float(attention_factor)

    # llama3
    low, high = params.get("low_freq_factor"), params.get("high_freq_factor")
    if low is None or high is None or high <= low:
        raise ValueError("llama3 needs low_freq_factor < high_freq_factor, got "
                         f"low_freq_factor={low}, high_freq_factor={high}")
    wavelength = 2 * math.pi / inv_freq  # (d/2,)
    # sigma = (L0 / lambda - low) / (high - low); theta' = (1 - sigma) theta / s + sigma theta
    sigma = (train_len / wavelength - low) / (high - low)  # (d/2,)
    blended = (1 - sigma) * inv_freq / factor + sigma * inv_freq  # (d/2,)
    # lambda > L0 / low: theta / s;   lambda < L0 / high: theta;   between: blended
    inv_freq = torch.where(wavelength > train_len / low, inv_freq / factor,
                           torch.where(wavelength < train_len / high, inv_freq, blended))  # (d/2,)
    return inv_freq, 1.0
    ### END SOLUTION


# %% tags=["selfcheck"]
check("scaled_rope_inv_freq", scaled_rope_inv_freq)

# %% [markdown]
# ## 5.7 The methods side by side
#
# Divide each method's frequencies by the unscaled ones and you get the factor by which it slows
# each pair: $1$ means untouched, $1/s$ fully interpolated. Below, for LLaMA 3's $d = 128$ and base
# $5\cdot10^5$, $L_0 = 8192$, $s = 8$ (dynamic at $L = 2L_0$). Against the pair index (left),
# linear is flat, dynamic a smooth geometric slope, YaRN and llama3 two plateaus joined by a ramp.
# Against the wavelength (right), the plateaus line up with the training length: what completes
# many turns within $L_0$ is kept, what completes less than one is interpolated.

# %% tags=["demo"]
@demo
def plot_scale_factors(head_dim=128, base=500000.0, train_len=8192, factor=8.0):
    plain, _ = scaled_rope_inv_freq(head_dim, base, "default")
    methods = {
        "linear": scaled_rope_inv_freq(head_dim, base, "linear", factor),
        f"dynamic, L = {2 * train_len}": scaled_rope_inv_freq(head_dim, base, "dynamic", factor, train_len,
                                                              seq_len=2 * train_len),
        "yarn": scaled_rope_inv_freq(head_dim, base, "yarn", factor, train_len),
        "llama3": scaled_rope_inv_freq(head_dim, base, "llama3", factor, train_len, low_freq_factor=1.0,
                                       high_freq_factor=4.0),
    }
    wavelength = 2 * math.pi / plain  # (d/2,)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for name, (inv_freq, attention_factor) in methods.items():
        ratio = (inv_freq / plain).numpy()  # (d/2,) per-pair scale
        label = name + (f" (attention × {attention_factor:.3f})" if attention_factor != 1.0 else "")
        ax0.plot(ratio, ".-", label=label)
        ax1.semilogx(wavelength.numpy(), ratio, ".-", label=label)
    for ax in (ax0, ax1):
        ax.set_yscale("log", base=2)
        ax.set_ylabel("scaled θ / original θ")
    ax0.set_xlabel("pair index i")
    ax1.set_xlabel("wavelength 2π/θ (tokens)")
    for x, text in ((train_len, "L0"), (train_len / 4, "L0/4"), (train_len / 32, "L0/32")):
        ax1.axvline(x, color="k", lw=0.6)
        ax1.text(x, 1.05, text, fontsize=8)
    ax0.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


plot_scale_factors()

# %% [markdown]
# Now the rotation angle itself. Take the slowest pair of LLaMA 2's geometry ($d = 128$, base
# $10^4$, $L_0 = 4096$) and run to $4L_0$. Unscaled (`default`), the angle leaves the trained range
# as soon as the distance passes $L_0$. `linear`, `yarn` and `llama3` with $s = 4$ all divide this
# pair by exactly 4 (their lines coincide), so it reaches the edge of the trained range only at
# $4L_0$. `dynamic` at $L = 4L_0$ has $\alpha = 4\cdot 4 - 3 = 13$ and slows it further.

# %% tags=["demo"]
@demo
def plot_slowest_angle(head_dim=128, base=10000.0, train_len=4096, factor=4.0):
    positions = torch.arange(0, factor * train_len + 1, 64, dtype=torch.float32)  # (P,)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for rope_type, extra, style in (("default", {}, "-"), ("linear", {}, "-"), ("yarn", {}, "--"),
                                    ("llama3", {"low_freq_factor": 1.0, "high_freq_factor": 4.0}, ":"),
                                    ("dynamic", {"seq_len": int(factor * train_len)}, "-")):
        inv_freq, _ = scaled_rope_inv_freq(head_dim, base, rope_type, factor, train_len, **extra)
        label = rope_type + (f", L = {extra['seq_len']}" if "seq_len" in extra else "")
        ax.plot(positions.numpy(), (positions * inv_freq[-1]).numpy(), style, lw=2, label=label)
    trained = train_len * scaled_rope_inv_freq(head_dim, base, "default")[0][-1].item()
    ax.axhspan(0, trained, color="0.9", label="angles seen in training")
    ax.axvline(train_len, color="k", lw=0.8)
    ax.set_xlabel("relative distance m - n")
    ax.set_ylabel("angle of the slowest pair (rad)")
    ax.legend(fontsize=8)
    plt.show()


plot_slowest_angle()

# %% [markdown]
# ### Check against `transformers`
#
# If `transformers` 5.x is installed, compare your function with the library on a few
# configurations. The config is built the way a model's `config.json` would build it. (The
# grader does the same, on more cases.)

# %% tags=["demo"]
@demo
def compare_with_transformers(head_dim=64, base=10000.0, train_len=2048, factor=4.0):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # transformers' import may warn about optional packages
            import transformers
            from transformers import LlamaConfig
            from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    except ImportError:
        print("transformers is not installed: nothing to compare with")
        return
    if int(transformers.__version__.split(".")[0]) < 5:
        print(f"transformers {transformers.__version__}: these functions changed in 5.x; install 5.x to compare")
        return
    transformers.logging.set_verbosity_error()
    cases = [("linear", {}, None), ("dynamic", {}, 3 * train_len), ("yarn", {}, None),
             ("yarn", {"beta_fast": 16.0, "beta_slow": 2.0, "attention_factor": 1.1}, None),
             ("llama3", {"low_freq_factor": 1.0, "high_freq_factor": 4.0}, None)]
    for rope_type, params, seq_len in cases:
        rope_parameters = {"rope_type": rope_type, "rope_theta": base, "factor": factor, **params}
        if rope_type in ("yarn", "llama3"):
            rope_parameters["original_max_position_embeddings"] = train_len
        config = LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim,
                             max_position_embeddings=train_len if rope_type == "dynamic" else int(factor * train_len),
                             rope_parameters=rope_parameters)
        theirs, their_factor = ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)
        ours, our_factor = scaled_rope_inv_freq(head_dim, base, rope_type, factor, train_len, seq_len, **params)
        rel = ((ours.double() - theirs.double()).abs() / theirs.double()).max().item()
        print(f"{rope_type:8s} {str(params)[:50]:50s} max rel. difference {rel:.1e}, "
              f"attention factor {our_factor:.4f} vs {their_factor:.4f}")


compare_with_transformers()

# %% [markdown]
# ## 5.8 Using the frequencies in a model
#
# Nothing else in chapter 4's code changes. Your `rope_cos_sin` from chapter 4 builds its angles
# from `rope_inv_freq(head_dim, base)`; build them from the scaled frequencies instead, and multiply
# the resulting `cos` and `sin` by `attention_factor` before `apply_rope`:
#
# ```python
# inv_freq, attention_factor = scaled_rope_inv_freq(head_dim, base, "yarn", 4.0, 4096)
# # ... chapter 4's cos/sin construction, with this inv_freq in place of rope_inv_freq(...) ...
# cos, sin = cos * attention_factor, sin * attention_factor    # (B, L, d) each
# ```
#
# With `dynamic`, the module recomputes `inv_freq` from the current length (section 5.3). The
# frequencies are a non-persistent buffer: a checkpoint stores the scaling *parameters* in its
# config, never the frequencies.
#
# Which to use? Position interpolation and YaRN are meant to be followed by a short fine-tuning at
# the new length (Peng et al. report that YaRN needs less of it); `dynamic` is the no-training
# option; `llama3` is what Llama 3.1 checkpoints were trained with, so use it, with their numbers,
# to run them. A model must be run with the scaling it was trained or fine-tuned with: the config
# says which.

# %% [markdown]
# ## 5.9 Summary
#
# * RoPE's formula extends to any position, but a trained model does not: pairs whose wavelength
#   exceeds the training length $L_0$ meet unseen angles beyond it, and attention grows more diffuse
#   with more keys. Press et al. (2022) measured sinusoidal, rotary and T5-bias models degrading
#   with length, ALiBi not.
# * `linear` (Chen et al., 2023) divides every frequency by $s$; `dynamic` raises the base by
#   $(sL/L_0 - (s-1))^{d/(d-2)}$ for $L > L_0$; YaRN (Peng et al., 2023) interpolates only the pairs
#   with fewer than $\beta_{slow}$ turns, keeps those with more than $\beta_{fast}$, ramps between,
#   and multiplies cos and sin by $0.1\ln s + 1$; `llama3` splits by wavelength bands.
# * All of them return `(inv_freq, attention_factor)` and leave the rotation itself alone.
#
# **Further reading.** Press et al. (2022), *Train Short, Test Long* (ALiBi). Chen et al. (2023),
# *Extending Context Window of Large Language Models via Positional Interpolation*. bloc97 (2023),
# "NTK-Aware Scaled RoPE" (r/LocalLLaMA). Peng et al. (2023), *YaRN: Efficient Context Window
# Extension of Large Language Models*. The `transformers` source, `modeling_rope_utils.py`, is short
# and worth reading next to this chapter.


# %% [markdown]
# ## Hand your code on
#
# Chapter 7 trains small language models with every position scheme of the course, built from *your* code.
# Once this chapter's exercises pass their self-checks, run the cell below: it copies them (with the imports
# and helpers they use) into `posenc_mine/ch05.py` beside this notebook, and runs their self-checks on the
# copy. Run it again whenever you change an exercise. The grader ignores this cell.

# %%
import posenc_selfcheck

posenc_selfcheck.export_exercises("05_long_context", globals())
