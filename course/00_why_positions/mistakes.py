"""Chapter 0 mistakes: scaled dot-product attention written the ways learners get it wrong.

Only the implementations; each mistake's message is declared in exercises.py beside this file. The mistakes here are
the ones whose behaviour reaches further than the statements their declaration rewrites; the others are derived
(grader/mistakes.py).
"""

from __future__ import annotations

import math

import torch


def _attention(kind):
    """The reference computation with one thing wrong."""

    def attention(q, k, v, mask=None):
        out_dtype = q.dtype
        work = torch.promote_types(q.dtype, torch.float32)
        q, k, v = q.to(work), k.to(work), v.to(work)
        d = q.shape[-1]
        scale = 1.0 / math.sqrt(d)
        scores = (q @ k.transpose(-2, -1)) * scale  # (..., Lq, Lk)
        if mask is not None and kind != "mask_after_softmax":
            if mask.dtype == torch.bool:
                # "inverted": True taken as "masked out" (nn.MultiheadAttention's convention)
                forbidden = mask if kind == "mask_inverted" else ~mask
                scores = scores.masked_fill(forbidden, float("-inf"))
            else:
                scores = scores + mask.to(work)
        weights = torch.softmax(scores, dim=-2 if kind == "softmax_over_queries" else -1)
        if mask is not None and kind == "mask_after_softmax":
            if mask.dtype == torch.bool:
                weights = weights.masked_fill(~mask, 0.0)  # zeroed, not renormalised
            else:
                weights = weights + mask.to(work)
        weights = weights.masked_fill(torch.isneginf(scores).all(dim=-1, keepdim=True), 0.0)
        return (weights @ v).to(out_dtype)

    return attention


IMPLEMENTATIONS = {
    "sdpa_softmax_over_queries": _attention("softmax_over_queries"),  # softmax over dim=-2
    "sdpa_mask_inverted": _attention("mask_inverted"),  # bool mask True taken as "masked out"
    # weights masked after the softmax: a float mask too is added to the weights after it, where the declared
    # statements move only the bool mask
    "sdpa_mask_after_softmax": _attention("mask_after_softmax"),
}

