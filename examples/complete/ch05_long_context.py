"""Chapter 5, as a learner might finish it: correct, but written independently of the reference
(frequencies as exp(-(2i/d) ln base) in float64, cast to float32 at the end; the YaRN blend written
as w * (1 - ramp + ramp / s); llama3 with its bands decided on float64 wavelengths and a clamped
smooth factor instead of three torch.where branches; explicit per-type tables of allowed params)."""

import math

import torch

_ALLOWED_PARAMS = {
    "default": (),
    "linear": (),
    "dynamic": (),
    "yarn": ("attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"),
    "llama3": ("low_freq_factor", "high_freq_factor"),
}


def _check_head_dim(head_dim):
    if isinstance(head_dim, bool) or int(head_dim) != head_dim or head_dim <= 0 or int(head_dim) % 2 == 1:
        raise ValueError(f"head_dim must be a positive even integer (got head_dim={head_dim})")
    return int(head_dim)


def _plain_inv_freq(head_dim, base):
    """w_i = base^(-2i/d) = exp(-(2i/d) ln base), i = 0 .. d/2 - 1, in float64."""
    exponents = torch.arange(head_dim // 2, dtype=torch.float64) * (2.0 / head_dim)
    return torch.exp(-exponents * math.log(base))


# practitioner-style: as transformers' llama3 rope init computes its wavelengths (int64 arange cast to float)
def rope_wavelengths(head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(f"head_dim must be a positive even integer (got head_dim={head_dim})")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(dtype=torch.float) / head_dim))
    return 2 * math.pi / inv_freq


def _corr(turns, head_dim, base, train_len):
    """Fractional pair index whose frequency completes `turns` full turns within train_len tokens."""
    return head_dim * math.log(train_len / (2.0 * math.pi * turns)) / (2.0 * math.log(base))


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    d = _check_head_dim(head_dim)
    if not base > 1:
        raise ValueError(f"base must be greater than 1 (got base={base})")
    if original_max_position_embeddings is None or not original_max_position_embeddings > 0:
        raise ValueError("original_max_position_embeddings must be positive "
                         f"(got original_max_position_embeddings={original_max_position_embeddings})")
    low = _corr(beta_fast, d, base, original_max_position_embeddings)
    high = _corr(beta_slow, d, base, original_max_position_embeddings)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low = max(low, 0)
    high = min(high, d - 1)  # YaRN's code clamps to d - 1, not to the last pair index d/2 - 1
    if high == low:
        high = high + 0.001
    ramp = [(j - low) / (high - low) for j in range(d // 2)]
    ramp = [min(1.0, max(0.0, r)) for r in ramp]
    return torch.tensor(ramp, dtype=torch.float64).to(torch.float32)


def _yarn_attention_factor(factor, attention_factor, mscale, mscale_all_dim):
    if attention_factor is not None:
        return float(attention_factor)

    def temperature(scale, mu=1.0):
        return 1.0 if scale <= 1 else 1.0 + 0.1 * mu * math.log(scale)

    if mscale and mscale_all_dim:
        return float(temperature(factor, mscale) / temperature(factor, mscale_all_dim))
    return float(temperature(factor))


def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    if rope_type not in _ALLOWED_PARAMS:
        raise ValueError(f"unknown rope_type={rope_type!r}; expected one of {sorted(_ALLOWED_PARAMS)}")
    d = _check_head_dim(head_dim)
    if not base > 0:
        raise ValueError(f"base must be positive (got base={base})")
    if factor is None or not factor >= 1:
        raise ValueError(f"factor must be >= 1: scaling stretches the context (got factor={factor})")
    unused = [key for key in params if key not in _ALLOWED_PARAMS[rope_type]]
    if unused:
        raise ValueError(f"rope_type={rope_type!r} does not use the parameter(s) {', '.join(unused)} "
                         f"(it accepts: {', '.join(_ALLOWED_PARAMS[rope_type]) or 'none'})")
    needs_l0 = rope_type in ("dynamic", "yarn", "llama3")
    if needs_l0 and original_max_position_embeddings is None:
        raise ValueError(f"rope_type={rope_type!r} needs original_max_position_embeddings (the training length), "
                         "got original_max_position_embeddings=None")
    if needs_l0 and not original_max_position_embeddings > 0:
        raise ValueError("original_max_position_embeddings must be positive "
                         f"(got original_max_position_embeddings={original_max_position_embeddings})")
    L0 = original_max_position_embeddings

    if rope_type == "default":
        return _plain_inv_freq(d, base).to(torch.float32), 1.0

    if rope_type == "linear":
        return (_plain_inv_freq(d, base) / factor).to(torch.float32), 1.0

    if rope_type == "dynamic":
        if d == 2:
            raise ValueError("head_dim=2 is too small for dynamic scaling: the exponent d/(d-2) is undefined")
        length = L0 if seq_len is None else max(int(seq_len), L0)
        alpha = factor * length / L0 - (factor - 1.0)
        new_base = base * alpha ** (d / (d - 2))
        return _plain_inv_freq(d, new_base).to(torch.float32), 1.0

    if rope_type == "yarn":
        beta_fast = params.get("beta_fast") or 32.0
        beta_slow = params.get("beta_slow") or 1.0
        truncate = params.get("truncate", True)
        truncate = True if truncate is None else bool(truncate)
        ramp = yarn_ramp(d, base, L0, beta_fast, beta_slow, truncate).to(torch.float64)
        w = _plain_inv_freq(d, base)
        # ramp 0: keep w; ramp 1: w / s; linear in between
        blended = w * ((1.0 - ramp) + ramp / factor)
        scale = _yarn_attention_factor(factor, params.get("attention_factor"), params.get("mscale"),
                                       params.get("mscale_all_dim"))
        return blended.to(torch.float32), scale

    # llama3
    low_ff, high_ff = params.get("low_freq_factor"), params.get("high_freq_factor")
    if low_ff is None or high_ff is None:
        raise ValueError("rope_type='llama3' needs low_freq_factor and high_freq_factor "
                         f"(got low_freq_factor={low_ff}, high_freq_factor={high_ff})")
    if not high_ff > low_ff:
        raise ValueError(f"high_freq_factor must be greater than low_freq_factor "
                         f"(got low_freq_factor={low_ff}, high_freq_factor={high_ff})")
    w = _plain_inv_freq(d, base)
    turns = L0 * w / (2.0 * math.pi)  # L0 / wavelength: full turns within the training length
    # s = 0 below low_freq_factor turns (interpolate), 1 above high_freq_factor turns (keep), linear between;
    # this is the same piecewise function as Llama 3.1's three bands, continuous at both edges
    s = ((turns - low_ff) / (high_ff - low_ff)).clamp(0.0, 1.0)
    scaled = w * ((1.0 - s) / factor + s)
    return scaled.to(torch.float32), 1.0
