"""A learner's chapter 5: the YaRN ramp runs the wrong way (fast pairs interpolated), and dynamic NTK uses the
static NTK-aware base whatever the length. Validation is there."""

import math

import torch

TYPES = ["default", "linear", "dynamic", "yarn", "llama3"]


def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    if head_dim % 2 or head_dim < 1:
        raise ValueError(f"head_dim={head_dim} must be even and positive")

    def dim_for(rotations):
        return head_dim * math.log(original_max_position_embeddings / (2 * math.pi * rotations)) / (2 * math.log(base))

    start, stop = dim_for(beta_fast), dim_for(beta_slow)
    if truncate:
        start, stop = math.floor(start), math.ceil(stop)
    start, stop = max(start, 0), min(stop, head_dim - 1)
    if start == stop:
        stop += 0.001
    pos = torch.arange(head_dim // 2, dtype=torch.float32)
    # 1 where we interpolate
    return ((stop - pos) / (stop - start)).clamp(0, 1)


def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    if rope_type not in TYPES:
        raise ValueError(f"rope_type {rope_type!r} is not supported")
    if head_dim % 2 or head_dim <= 0:
        raise ValueError(f"bad head_dim={head_dim}")
    if factor < 1:
        raise ValueError(f"factor={factor} < 1")
    if rope_type in ("dynamic", "yarn", "llama3") and original_max_position_embeddings is None:
        raise ValueError("original_max_position_embeddings is required")
    d = head_dim
    if rope_type == "dynamic":
        base = base * factor ** (d / (d - 2))
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    if rope_type == "linear":
        inv = inv / factor
    elif rope_type == "yarn":
        w = yarn_ramp(d, base, original_max_position_embeddings, params.get("beta_fast") or 32,
                      params.get("beta_slow") or 1, params.get("truncate", True))
        inv = inv / factor * w + inv * (1 - w)
        scale = params.get("attention_factor") or (1.0 + 0.1 * math.log(factor))
        return inv, scale
    elif rope_type == "llama3":
        lf, hf = params["low_freq_factor"], params["high_freq_factor"]
        L0 = original_max_position_embeddings
        wavelen = 2 * math.pi / inv
        smooth = (L0 / wavelen - lf) / (hf - lf)
        mid = (1 - smooth) * inv / factor + smooth * inv
        inv = torch.where(wavelen < L0 / hf, inv, torch.where(wavelen > L0 / lf, inv / factor, mid))
    return inv, 1.0
