"""Chapter 5 mistakes, by hand: RoPE scaling written the ways learners (and forum posts) get it wrong.

IMPLEMENTATIONS maps each mistake's name to its wrong implementation; its exercise and message are declared in
grader/checks/ch05.py.

Each wrong `scaled_rope_inv_freq` is wrong for one rope_type only and defers to the reference for the
others, so a check of another type never mistakes it for the reference's answer.
"""

from __future__ import annotations

import math

import torch

from .. import ch05_long_context as ref


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


IMPLEMENTATIONS = {
    # linear: the frequencies multiplied by the factor instead of divided
    "linear_multiplies": _only("linear", _linear_multiplies),
    # dynamic NTK: alpha without the exponent d/(d-2), seq_len ignored (static NTK), or L not clamped to L0
    "dynamic_no_exponent": _only("dynamic", lambda *a: _dynamic(*a, exponent=False)),
    "dynamic_static": _only("dynamic", lambda *a: _dynamic(*a, static=True)),
    "dynamic_no_clamp": _only("dynamic", lambda *a: _dynamic(*a, clamp=False)),
    # YaRN: the ramp reversed, the attention factor missing or squared
    "yarn_reversed": _only("yarn", lambda *a, **p: _yarn(*a, reverse=True, **p)),
    "yarn_no_attention_factor": _only("yarn", lambda *a, **p: _yarn(*a, attention="none", **p)),
    "yarn_attention_squared": _only("yarn", lambda *a, **p: _yarn(*a, attention="squared", **p)),
    # llama3: low_freq_factor and high_freq_factor swapped
    "llama3_swapped": _only("llama3", _llama3_swapped),
    # yarn_ramp: reversed, low/high not rounded, high clamped to d/2 - 1
    "ramp_reversed": _ramp("reversed"),
    "ramp_not_truncated": _ramp("not_truncated"),
    "ramp_clamp_half": _ramp("clamp_half"),
}

