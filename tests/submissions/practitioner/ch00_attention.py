"""Practitioner-style chapter 0, correct: einsum instead of matmul, float64 internals for every input
dtype, masks applied with torch.where, and validation messages worded its own way (they still name the
values)."""
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    if q.size(-1) != k.size(-1):
        raise ValueError(f"head_dim mismatch between q ({q.size(-1)}) and k ({k.size(-1)})")
    if k.size(-2) != v.size(-2):
        raise ValueError(f"{k.size(-2)} keys cannot pair with {v.size(-2)} values")
    if mask is not None and mask.dtype != torch.bool and not torch.is_floating_point(mask):
        raise ValueError(f"attention mask of dtype {mask.dtype} is ambiguous; pass bool or float")
    wide = torch.float64
    logits = torch.einsum("...qd,...kd->...qk", q.to(wide), k.to(wide)) * (1.0 / math.sqrt(q.size(-1)))
    if mask is not None:
        if mask.dtype == torch.bool:
            logits = torch.where(mask, logits, torch.full_like(logits, -math.inf))
        else:
            logits = logits + mask.to(wide)
    probs = torch.softmax(logits, dim=-1)
    probs = torch.where(torch.isnan(probs), torch.zeros_like(probs), probs)  # rows with no key at all
    return torch.einsum("...qk,...kd->...qd", probs, v.to(wide)).to(q.dtype)
