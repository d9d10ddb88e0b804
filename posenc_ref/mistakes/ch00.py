"""Chapter 0 mistakes: scaled dot-product attention written the ways learners get it wrong."""

from __future__ import annotations

import math

import torch

from .mistake import Mistake


def _attention(kind):
    """The reference computation with one thing wrong."""

    def attention(q, k, v, mask=None):
        out_dtype = q.dtype
        work = torch.promote_types(q.dtype, torch.float32)
        q, k, v = q.to(work), k.to(work), v.to(work)
        d = q.shape[-1]
        scale = {"no_scale": 1.0, "scale_by_d": 1.0 / d}.get(kind, 1.0 / math.sqrt(d))
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


_TEXT = {
    "no_scale": "the scores are not scaled: divide q·k by sqrt(d), d = head_dim (q.shape[-1]); without it the "
                "scores grow like sqrt(d) and the softmax saturates",
    "scale_by_d": "the scores are divided by d; divide by sqrt(d) (math.sqrt(q.shape[-1])): q·k has variance d, "
                  "so sqrt(d) brings it back to 1",
    "softmax_over_queries": "the softmax runs over the queries (dim=-2); it must run over the keys, the last "
                            "dimension, so that each query's weights sum to 1",
    "mask_inverted": "the bool mask is used the wrong way round: True means the query MAY attend (torch SDPA's "
                     "convention); set the scores to -inf where the mask is False (scores.masked_fill(~mask, "
                     "-inf)). nn.MultiheadAttention uses the opposite convention",
    "mask_after_softmax": "the mask is applied after the softmax; it belongs in the scores before it (-inf where a "
                          "bool mask is False, a float mask added), so masked keys get weight 0 and each row of "
                          "weights still sums to 1",
}

MISTAKES = {f"sdpa_{kind}": Mistake("scaled_dot_product_attention", text, _attention(kind))
            for kind, text in _TEXT.items()}
