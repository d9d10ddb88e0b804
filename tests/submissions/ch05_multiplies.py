"""A learner's chapter 5: linear scaling multiplies, dynamic forgets the exponent, llama3 swaps its two factors,
YaRN (written inline) never returns its attention factor, and yarn_ramp ignores truncate. No input validation."""

import math

import torch


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    L = original_max_position_embeddings
    lo = max(head_dim * math.log(L / (beta_fast * 2 * math.pi)) / (2 * math.log(base)), 0)
    hi = min(head_dim * math.log(L / (beta_slow * 2 * math.pi)) / (2 * math.log(base)), head_dim - 1)
    idx = torch.arange(head_dim // 2).float()
    return torch.clamp((idx - lo) / (hi - lo), min=0.0, max=1.0)


def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    exps = torch.arange(0, head_dim, 2).float() / head_dim
    freqs = 1.0 / base ** exps
    L0 = original_max_position_embeddings
    if rope_type == "linear":
        return freqs * factor, 1.0
    if rope_type == "dynamic":
        L = L0 if seq_len is None else max(seq_len, L0)
        new_base = base * (factor * L / L0 - factor + 1)
        return 1.0 / new_base ** exps, 1.0
    if rope_type == "yarn":
        bf, bs = params.get("beta_fast") or 32, params.get("beta_slow") or 1
        low = head_dim * math.log(L0 / (2 * math.pi * bf)) / (2 * math.log(base))
        high = head_dim * math.log(L0 / (2 * math.pi * bs)) / (2 * math.log(base))
        if params.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, head_dim - 1)
        if low == high:
            high += 0.001
        keep = 1 - ((torch.arange(head_dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        return freqs / factor * (1 - keep) + freqs * keep, 1.0
    if rope_type == "llama3":
        lo_f, hi_f = params["high_freq_factor"], params["low_freq_factor"]
        wl = 2 * math.pi / freqs
        out = freqs.clone()
        for i in range(len(freqs)):
            if wl[i] > L0 / lo_f:
                out[i] = freqs[i] / factor
            elif wl[i] >= L0 / hi_f:
                s = (L0 / wl[i] - lo_f) / (hi_f - lo_f)
                out[i] = (1 - s) * freqs[i] / factor + s * freqs[i]
        return out, 1.0
    return freqs, 1.0
