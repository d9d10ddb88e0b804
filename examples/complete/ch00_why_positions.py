"""Chapter 0, as a learner might finish it, written independently of the reference."""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.size(-1)
    if k.size(-1) != d:
        raise ValueError(f"head_dim mismatch: q has head_dim={d}, k has head_dim={k.size(-1)}")
    if k.size(-2) != v.size(-2):
        raise ValueError(f"k has {k.size(-2)} keys but v has {v.size(-2)}")
    if mask is not None and not (mask.dtype == torch.bool or torch.is_floating_point(mask)):
        raise ValueError(f"mask must be bool or float, not {mask.dtype}")
    dtype = q.dtype
    acc = torch.float64 if dtype == torch.float64 else torch.float32
    logits = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) * (1.0 / math.sqrt(d))
    if mask is not None:
        bias = mask.to(acc) if mask.dtype != torch.bool else torch.where(
            mask, torch.zeros((), dtype=acc, device=q.device), torch.full((), -math.inf, dtype=acc, device=q.device))
        logits = logits + bias
    row_max = logits.amax(dim=-1, keepdim=True)
    dead = torch.isinf(row_max) & (row_max < 0)
    e = torch.exp(logits - torch.where(dead, torch.zeros_like(row_max), row_max))
    weights = e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(acc).tiny)
    return torch.matmul(weights, v.to(acc)).to(dtype)
