"""Chapter 3 mistakes: relative positions, Shaw attention, biases, buckets and slopes gone wrong.

Each is the smallest change to the reference that reproduces what learners (and the seed tutorials)
write; the grader names the mistake when a learner's answer equals its answer.

Only the implementations; each mistake's message is declared in exercises.py beside this file. The mistakes here are
the ones whose behaviour reaches further than the statements their declaration rewrites; the others are derived
(grader/mistakes.py).
"""

from __future__ import annotations

import math

import torch

from posenc_ref import ch03_relative as ref


# ---- Shaw attention (direct form; the efficient form gives the same numbers) -----------------------
def _shaw(sign=1, clip=0, scale_rel=True, use_values=True, mask_sign=1):
    """Shaw's attention with one thing changed: distance sign, clip at ±(K - clip), scaling, values, or the
    causal mask's direction (mask_sign=-1 hides the keys before the query instead of after it)."""

    def shaw(q, k, v, rel_k, rel_v, max_distance, causal=False):
        K = max_distance
        rel = ref.relative_positions(q.shape[-2], k.shape[-2], device=q.device)  # (Lq, Lk)
        idx = (sign * rel).clamp(-(K - clip), K - clip) + K  # (Lq, Lk)
        rel_logits = (q @ rel_k.T).gather(-1, idx.expand(*q.shape[:-1], k.shape[-2]))  # (B, H, Lq, Lk)
        scale = 1 / math.sqrt(q.shape[-1])
        scores = q @ k.transpose(-2, -1) * scale + rel_logits * (scale if scale_rel else 1.0)
        if causal:
            scores = scores.masked_fill(mask_sign * rel > 0, float("-inf"))
        attn = scores.softmax(-1).nan_to_num(0.0)  # a flipped mask may leave a query no key at all
        out = attn @ v
        if use_values:
            per_row = attn.new_zeros(*attn.shape[:-1], 2 * K + 1).scatter_add_(-1, idx.expand_as(attn), attn)
            out = out + per_row @ rel_v
        return out

    return shaw


# one wrong Shaw attention per mistake, graded under both exercises (shaw_attention, shaw_attention_direct)
_SHAW = {
    "sign_flipped": _shaw(sign=-1),  # tables indexed with i - j
    "clip_off_by_one": _shaw(clip=1),  # clipped at ±(K - 1)
    "unscaled": _shaw(scale_rel=False),  # q·a^K not divided by sqrt(d)
    "value_ignored": _shaw(use_values=False),  # no a^V term
    "causal_flipped": _shaw(mask_sign=-1),  # hides the keys before the query
}


# ---- t5_bucket -----------------------------------------------------------------------------------
# the input's sign flipped: the causal buckets are flipped too, not only the bidirectional offset the
# declaration rewrites
def _t5_sign_flipped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return ref.t5_bucket(-relative_position, bidirectional, num_buckets, max_distance)


# ---- ALiBi ---------------------------------------------------------------------------------------
def _slopes_power_of_two_formula(num_heads, device=None):
    # 2^(-8h/n) for every n, also when n is not a power of two, computed as one float32 power: the declared
    # `c = num_heads` gives (2^(-8/n))^h, which differs from it in the last bits
    return 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float32, device=device) / num_heads)


IMPLEMENTATIONS = {
    "t5_sign_flipped": _t5_sign_flipped,
    "alibi_slopes_power_of_two_formula": _slopes_power_of_two_formula,
    **{f"{prefix}{kind}": impl for kind, impl in _SHAW.items() for prefix in ("shaw_", "shaw_direct_")},
}

