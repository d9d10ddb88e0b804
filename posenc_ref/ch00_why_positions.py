"""Generated from course/00_why_positions/chapter.py by `python -m grader build`: edit the chapter."""

# from course/00_why_positions/chapter.py#py-7ebc5c41
import math

import torch


# from course/00_why_positions/chapter.py#py-bc54b019
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q kᵀ / sqrt(d) + mask) v, softmax over the keys. Returns (..., Lq, dv).

    q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), usually (batch, heads, seq, head_dim).

    mask: None, bool (True = may attend) or float (added to the scores), broadcastable to (..., Lq, Lk).
    A query whose keys are all masked gets zeros, as torch's SDPA returns.
    """
    # Hint: the idea: one score per (query, key) pair, the mask applied to the scores, a softmax over the
    #       keys of each query, then a weighted average of the values. Check the inputs before computing.
    #       Shapes: q (..., Lq, d) and k (..., Lk, d) give scores (..., Lq, Lk); the weights (..., Lq, Lk)
    #       times v (..., Lk, dv) give the output (..., Lq, dv).
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same head_dim, got head_dim={q.shape[-1]} for q "
                         f"and head_dim={k.shape[-1]} for k")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must hold the same number of keys, got k_len={k.shape[-2]} "
                         f"and v_len={v.shape[-2]}")
    if mask is not None and mask.dtype != torch.bool and not mask.is_floating_point():
        raise ValueError(f"mask must be bool (True = may attend) or floating (added to the scores), "
                         f"got mask dtype {mask.dtype}")
    out_dtype = q.dtype
    # float16/bfloat16 are computed in float32; float64 stays float64
    work = torch.promote_types(q.dtype, torch.float32)
    q, k, v = q.to(work), k.to(work), v.to(work)
    # s_ij = q_i · k_j / sqrt(d)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., Lq, Lk)
    if mask is not None:
        if mask.dtype == torch.bool:
            # m_ij = -inf where the query may not attend
            scores = scores.masked_fill(~mask, float("-inf"))  # (..., Lq, Lk)
        else:
            scores = scores + mask.to(work)  # (..., Lq, Lk)
    # a_ij = exp(s_ij) / sum_j' exp(s_ij'): each query's weights over the keys
    weights = torch.softmax(scores, dim=-1)  # (..., Lq, Lk)
    # a query that sees no key: 0/0 = NaN above; torch returns zeros there
    blocked = torch.isneginf(scores).all(dim=-1, keepdim=True)  # (..., Lq, 1)
    weights = weights.masked_fill(blocked, 0.0)  # (..., Lq, Lk)
    # o_i = sum_j a_ij v_j
    return (weights @ v).to(out_dtype)  # (..., Lq, dv)
