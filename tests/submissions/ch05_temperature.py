"""A learner's chapter 5: YaRN returns the logit temperature (0.1 ln s + 1)^2 instead of its square root, dynamic
NTK does not clamp short inputs to L0, and the ramp is clamped to the last pair (d/2 - 1). The attention factor
comes back as a tensor."""

import math

import torch


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    if head_dim <= 0 or head_dim % 2 == 1:
        raise ValueError("head_dim must be even, got head_dim=%d" % head_dim)
    n_pairs = head_dim // 2

    def corr(n_rot):
        return (head_dim * math.log(original_max_position_embeddings / (n_rot * 2 * math.pi))) / (2 * math.log(base))

    a, b = corr(beta_fast), corr(beta_slow)
    if truncate:
        a, b = math.floor(a), math.ceil(b)
    a, b = max(a, 0), min(b, n_pairs - 1)
    if a == b:
        b += 0.001
    return torch.clamp((torch.arange(n_pairs, dtype=torch.float32) - a) / (b - a), 0, 1)


def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(f"head_dim={head_dim} is odd")
    if factor < 1:
        raise ValueError(f"factor={factor}")
    L0 = original_max_position_embeddings
    one = torch.tensor(1.0)
    if rope_type == "dynamic":
        L = seq_len if seq_len is not None else L0
        base = base * (factor * L / L0 - (factor - 1)) ** (head_dim / (head_dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    if rope_type in ("default", "dynamic"):
        return inv_freq, one
    if rope_type == "linear":
        return inv_freq / factor, one
    if rope_type == "yarn":
        ramp = yarn_ramp(head_dim, base, L0, params.get("beta_fast") or 32, params.get("beta_slow") or 1,
                         params.get("truncate", True))
        inv_freq = ramp * inv_freq / factor + (1 - ramp) * inv_freq
        if "attention_factor" in params:
            return inv_freq, torch.tensor(params["attention_factor"])
        # sqrt(1/t) = 0.1 ln(s) + 1, so the logits get 1/t
        return inv_freq, torch.tensor((0.1 * math.log(factor) + 1) ** 2)
    if rope_type == "llama3":
        low, high = params["low_freq_factor"], params["high_freq_factor"]
        wavelen = 2 * math.pi / inv_freq
        sm = (L0 / wavelen - low) / (high - low)
        out = torch.where(wavelen > L0 / low, inv_freq / factor, inv_freq)
        mid = (wavelen >= L0 / high) & (wavelen <= L0 / low)
        out[mid] = ((1 - sm) * inv_freq / factor + sm * inv_freq)[mid]
        return out, one
    raise ValueError(f"unknown rope_type={rope_type}")
