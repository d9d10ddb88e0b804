"""Learner-style submission: attention without the 1/sqrt(d) scale."""
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        else:
            scores = scores + mask
    attn = scores.softmax(dim=-1)
    return torch.matmul(attn, v)
