"""Learner-style submission: the mask is applied to the weights, after the softmax."""
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    attn = torch.softmax(scores, dim=-1)
    if mask is not None:
        if mask.dtype == torch.bool:
            attn = attn * mask
        else:
            attn = attn + mask
    return attn @ v
