"""Chapter 5 mistakes: RoPE scaling written the ways learners (and forum posts) get it wrong.

Each wrong `scaled_rope_inv_freq` is wrong for one rope_type only and defers to the reference for the
others, so a check of another type never mistakes it for the reference's answer.
"""

from __future__ import annotations

import math

import torch

from .. import ch05_long_context as ref
from .mistake import Mistake


def _default(head_dim, base):
    # w_i = base^(-2i/d)
    return 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d/2,)


def _only(rope_type, wrong):
    """A scaled_rope_inv_freq that is `wrong` for `rope_type` and the reference elsewhere."""

    def scaled_rope_inv_freq(head_dim, base, kind, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                             **params):
        if kind != rope_type:
            return ref.scaled_rope_inv_freq(head_dim, base, kind, factor, original_max_position_embeddings, seq_len,
                                            **params)
        return wrong(head_dim, base, factor, original_max_position_embeddings, seq_len, **params)

    return scaled_rope_inv_freq


# ---- linear ----------------------------------------------------------------------------------------
def _linear_multiplies(d, base, factor, train_len, seq_len):
    return _default(d, base) * factor, 1.0


# ---- dynamic ---------------------------------------------------------------------------------------
def _dynamic(d, base, factor, train_len, seq_len, exponent=True, clamp=True, static=False):
    length = train_len if seq_len is None else (max(seq_len, train_len) if clamp else seq_len)
    alpha = factor if static else factor * length / train_len - (factor - 1)
    return _default(d, base * alpha ** (d / (d - 2) if exponent else 1.0)), 1.0


# ---- yarn ------------------------------------------------------------------------------------------
def _yarn(d, base, factor, train_len, seq_len, reverse=False, attention=None, **params):
    inv_freq, attention_factor = ref.scaled_rope_inv_freq(d, base, "yarn", factor, train_len, seq_len, **params)
    if reverse:
        ramp = ref.yarn_ramp(d, base, train_len, params.get("beta_fast") or 32, params.get("beta_slow") or 1,
                             params.get("truncate", True))
        plain = _default(d, base)
        inv_freq = plain / factor * (1 - ramp) + plain * ramp  # interpolates the fast pairs, keeps the slow
    if attention == "none":
        attention_factor = 1.0
    elif attention == "squared":
        attention_factor = attention_factor**2
    return inv_freq, attention_factor


# ---- llama3 ----------------------------------------------------------------------------------------
def _llama3_swapped(d, base, factor, train_len, seq_len, low_freq_factor, high_freq_factor):
    inv_freq = _default(d, base)
    wavelength = 2 * math.pi / inv_freq
    low, high = high_freq_factor, low_freq_factor  # the slip
    smooth = (train_len / wavelength - low) / (high - low)
    blended = (1 - smooth) * inv_freq / factor + smooth * inv_freq
    out = torch.where(wavelength > train_len / low, inv_freq / factor,
                      torch.where(wavelength < train_len / high, inv_freq, blended))
    return out, 1.0


# ---- yarn_ramp -------------------------------------------------------------------------------------
def _ramp(kind):
    def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
        if kind == "reversed":
            return 1 - ref.yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, truncate)
        if kind == "not_truncated":
            return ref.yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast, beta_slow, False)
        # kind == "clamp_half": the upper end clamped to the last pair, d/2 - 1
        d, train_len = head_dim, original_max_position_embeddings

        def corr(turns):
            return d * math.log(train_len / (2 * math.pi * turns)) / (2 * math.log(base))

        low, high = corr(beta_fast), corr(beta_slow)
        if truncate:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d // 2 - 1)
        if low == high:
            high += 0.001
        return ((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)

    return yarn_ramp


SCALED = "scaled_rope_inv_freq"
MISTAKES = {
    "linear_multiplies": Mistake(
        SCALED,
        "linear scaling multiplies the frequencies by the factor; it divides them (inv_freq / factor): "
        "position interpolation squeezes positions m -> m / s, so every pair turns s times slower",
        _only("linear", _linear_multiplies)),
    "dynamic_no_exponent": Mistake(
        SCALED,
        "dynamic NTK: the base is multiplied by alpha = factor*L/L0 - (factor-1) without the exponent d/(d-2); "
        "base' = base * alpha^(d/(d-2)) is what divides the slowest pair by exactly alpha",
        _only("dynamic", lambda *a: _dynamic(*a, exponent=False))),
    "dynamic_static": Mistake(
        SCALED,
        "dynamic NTK ignores seq_len here (base * factor^(d/(d-2)), the static NTK-aware base); dynamic uses "
        "alpha = factor*L/L0 - (factor-1) with L = max(seq_len, L0), so alpha = 1 (no change) up to L0",
        _only("dynamic", lambda *a: _dynamic(*a, static=True))),
    "dynamic_no_clamp": Mistake(
        SCALED,
        "dynamic NTK with seq_len below L0: use L = max(seq_len, L0); without the clamp alpha < 1 speeds the "
        "slow pairs up (and turns negative for short inputs), while the model should run as trained",
        _only("dynamic", lambda *a: _dynamic(*a, clamp=False))),
    "yarn_reversed": Mistake(
        SCALED,
        "YaRN's ramp is reversed: you interpolate the fast pairs (small index, many turns in L0) and keep the slow "
        "ones; the ramp is 0 (keep w) for the fast pairs and 1 (w / factor) for the slow ones",
        _only("yarn", lambda *a, **p: _yarn(*a, reverse=True, **p))),
    "yarn_no_attention_factor": Mistake(
        SCALED,
        "YaRN's attention factor is missing (you return 1.0): it is 0.1*ln(factor) + 1 unless params give "
        "attention_factor (or mscale and mscale_all_dim); cos and sin are multiplied by it",
        _only("yarn", lambda *a, **p: _yarn(*a, attention="none", **p))),
    "yarn_attention_squared": Mistake(
        SCALED,
        "YaRN's attention factor is squared: (0.1*ln(factor) + 1)^2 is the scale of the logits (1/t), but the "
        "returned factor multiplies cos and sin, i.e. both q and k, so it is sqrt(1/t) = 0.1*ln(factor) + 1",
        _only("yarn", lambda *a, **p: _yarn(*a, attention="squared", **p))),
    "llama3_swapped": Mistake(
        SCALED,
        "llama3: low_freq_factor and high_freq_factor are swapped: wavelengths above L0 / low_freq_factor are "
        "divided by the factor, those below L0 / high_freq_factor kept, and "
        "sigma = (L0/wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor) blends between",
        _only("llama3", _llama3_swapped)),
    "ramp_reversed": Mistake(
        "yarn_ramp",
        "the ramp is reversed: it should be 0 for the fast pairs (j <= low, many turns in L0: keep w) and rise "
        "to 1 for the slow ones (j >= high: w / factor); use clamp((j - low) / (high - low), 0, 1)",
        _ramp("reversed")),
    "ramp_not_truncated": Mistake(
        "yarn_ramp",
        "low and high are not rounded: with truncate=True (the default) low = floor(corr(beta_fast)) and "
        "high = ceil(corr(beta_slow))",
        _ramp("not_truncated")),
    "ramp_clamp_half": Mistake(
        "yarn_ramp",
        "high is clamped to d/2 - 1 (the last pair); YaRN's code and transformers clamp it to head_dim - 1, "
        "which changes the ramp's slope when ceil(corr(beta_slow)) > d/2 - 1",
        _ramp("clamp_half")),
}
