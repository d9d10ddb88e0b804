"""Practitioner-style chapter 5, correct: the structure of transformers' modeling_rope_utils (helper
functions per rope_type, the YaRN correction range computed with math, llama3 with a smooth factor),
frequencies via torch.pow, validation messages worded their own way."""
import math

import torch

_USES = {"default": (), "linear": (), "dynamic": (), "llama3": ("low_freq_factor", "high_freq_factor"),
         "yarn": ("attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate")}


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be a positive even number (head_dim={head_dim})")

    def find_correction_dim(num_rotations):
        return (head_dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi))) / (
            2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001
    linear_func = (torch.arange(head_dim // 2, dtype=torch.float32) - low) / (high - low)
    return torch.clamp(linear_func, 0, 1)


def _inv_freq(head_dim, base):
    return 1.0 / torch.pow(torch.tensor(base, dtype=torch.float32),
                           torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)


def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    if rope_type not in _USES:
        raise ValueError(f"rope_type {rope_type!r} is not one of {sorted(_USES)}")
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim={head_dim} must be even and positive")
    if factor is None or factor < 1.0:
        raise ValueError(f"a scaling factor below 1 (factor={factor}) would shrink the context")
    stray = [key for key in params if key not in _USES[rope_type]]
    if stray:
        raise ValueError(f"{rope_type} scaling does not take {', '.join(stray)}")
    l0 = original_max_position_embeddings
    if rope_type in ("dynamic", "yarn", "llama3") and l0 is None:
        raise ValueError(f"{rope_type} scaling needs original_max_position_embeddings")
    if rope_type == "default":
        return _inv_freq(head_dim, base), 1.0
    if rope_type == "linear":
        return _inv_freq(head_dim, base) / factor, 1.0
    if rope_type == "dynamic":
        if head_dim < 4:
            raise ValueError(f"dynamic scaling is undefined for head_dim={head_dim}")
        length = l0 if seq_len is None or seq_len < l0 else seq_len
        base = base * ((factor * length / l0) - (factor - 1)) ** (head_dim / (head_dim - 2))
        return _inv_freq(head_dim, base), 1.0
    if rope_type == "yarn":
        pos_freqs = base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        ramp = yarn_ramp(head_dim, base, l0, params.get("beta_fast") or 32, params.get("beta_slow") or 1,
                         params.get("truncate", True))
        extrapolation_factor = 1 - ramp
        inv_freq = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor

        def get_mscale(scale, mscale=1):
            return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

        attention = params.get("attention_factor")
        if attention is None:
            if params.get("mscale") and params.get("mscale_all_dim"):
                attention = get_mscale(factor, params["mscale"]) / get_mscale(factor, params["mscale_all_dim"])
            else:
                attention = get_mscale(factor)
        return inv_freq, float(attention)
    low_f, high_f = params.get("low_freq_factor"), params.get("high_freq_factor")
    if low_f is None or high_f is None or not high_f > low_f:
        raise ValueError(f"llama3 needs low_freq_factor < high_freq_factor (got {low_f}, {high_f})")
    inv_freq = _inv_freq(head_dim, base)
    low_freq_wavelen, high_freq_wavelen = l0 / low_f, l0 / high_f
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (l0 / wavelen - low_f) / (high_f - low_f)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama), 1.0
