"""Learner-style submission: True in a bool mask is taken to mean "masked out"."""
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = 1 / math.sqrt(q.shape[-1])
    scores = (q * scale) @ k.transpose(-2, -1)
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(mask, float("-inf"))
        else:
            scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v
