"""Learner-style submission: the scores are divided by d instead of sqrt(d)."""
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.einsum("...id,...jd->...ij", q, k) / d_k
    if mask is not None:
        if mask.dtype == torch.bool:
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        else:
            scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, v)
