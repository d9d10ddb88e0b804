"""Chapter 3 mistakes: relative positions, Shaw attention, biases, buckets and slopes gone wrong.

Each is the smallest change to the reference that reproduces what learners (and the seed tutorials)
write; the grader names the mistake when a learner's answer equals its answer.
"""

from __future__ import annotations

import math

import torch

from .. import ch03_relative as ref
from .mistake import Mistake


# ---- relative_positions --------------------------------------------------------------------------
def _rel_sign_flipped(q_len, k_len, device=None):
    return -ref.relative_positions(q_len, k_len, device=device)


def _rel_start_aligned(q_len, k_len, device=None):
    # queries placed at positions 0 .. q_len-1 instead of after the cached keys
    return torch.arange(k_len, device=device)[None, :] - torch.arange(q_len, device=device)[:, None]


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


_SHAW = {
    "sign_flipped": (_shaw(sign=-1), "the relative distance has the wrong sign: the tables are indexed with i − j. "
                     "Shaw et al. use clip(j − i, −K, K) + K (key position minus query position), so a key one "
                     "step before the query reads row K − 1"),
    "clip_off_by_one": (_shaw(clip=1), "distances are clipped at ±(K − 1), so rows 0 and 2K of the tables are never "
                        "read: clip j − i to [−K, K] (2K + 1 rows), then add K"),
    "unscaled": (_shaw(scale_rel=False), "the relative logit q·a^K is not divided by sqrt(d): in "
                 "e_ij = q_i·(k_j + a^K_ij) / sqrt(d) both terms are scaled"),
    "value_ignored": (_shaw(use_values=False), "the value table is ignored: the output is "
                      "sum_j alpha_ij (v_j + a^V_ij), not just attn @ v"),
    "causal_flipped": (_shaw(mask_sign=-1), "the causal mask points the wrong way: it hides the keys before the "
                       "query and keeps those after it. Mask the keys with j − i > 0 (relative_positions > 0)"),
}


# ---- RelativePositionBias ------------------------------------------------------------------------
def _bias_module(sign=1, clip=0):
    class Wrong(ref.RelativePositionBias):
        def forward(self, q_len, k_len):
            K = self.max_distance
            rel = ref.relative_positions(q_len, k_len, device=self.bias.weight.device)
            return self.bias((sign * rel).clamp(-(K - clip), K - clip) + K).permute(2, 0, 1).unsqueeze(0)

    return Wrong


# ---- t5_bucket -----------------------------------------------------------------------------------
def _t5_causal_as_bidirectional(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return ref.t5_bucket(relative_position, True, num_buckets, max_distance)


def _t5_sign_flipped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return ref.t5_bucket(-relative_position, bidirectional, num_buckets, max_distance)


# ---- ALiBi ---------------------------------------------------------------------------------------
def _slopes_power_of_two_formula(num_heads, device=None):
    # 2^(-8h/n) for every n, also when n is not a power of two
    return 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float32, device=device) / num_heads)


def _alibi_bias_power_of_two_formula(num_heads, q_len, k_len, device=None):
    distance = ref.relative_positions(q_len, k_len, device=device).abs()
    return -(_slopes_power_of_two_formula(num_heads, device)[:, None, None] * distance).unsqueeze(0)


def _alibi_bias_key_position(num_heads, q_len, k_len, device=None):
    # BLOOM's shortcut m * j: equal after a causal softmax, but not the bias -m|j - i|
    j = torch.arange(k_len, device=device).expand(q_len, k_len)
    return (ref.alibi_slopes(num_heads, device)[:, None, None] * j).unsqueeze(0)


def _alibi_bias_positive(num_heads, q_len, k_len, device=None):
    return -ref.alibi_bias(num_heads, q_len, k_len, device)


_POWER_OF_TWO = ("the power-of-two formula 2^(-8h/n) is used for a head count that is not a power of two. "
                 "Take c = 2^floor(log2 n): the c slopes 2^(-8h/c), then every other slope of the 2c-head "
                 "sequence for the remaining n − c heads (slopes(2c)[0::2][:n − c])")

MISTAKES = {
    "rel_sign_flipped": Mistake(
        "relative_positions", "the sign is flipped: you compute i − j; the convention (Shaw et al., T5) is "
        "j − i, key position minus query position", _rel_sign_flipped),
    "rel_start_aligned": Mistake(
        "relative_positions", "the queries are aligned to the start: with fewer queries than keys, query i sits "
        "at position k_len − q_len + i (after the cached keys), not at i", _rel_start_aligned),
    "bias_sign_flipped": Mistake(
        "RelativePositionBias", "the bias is indexed with i − j (Swin's query − key convention); here row "
        "clip(j − i, −K, K) + K holds distance j − i", _bias_module(sign=-1)),
    "bias_clip_off_by_one": Mistake(
        "RelativePositionBias", "distances are clipped at ±(K − 1), so the first and last rows of the table are "
        "never used: clip j − i to [−K, K], then add K", _bias_module(clip=1)),
    "t5_causal_as_bidirectional": Mistake(
        "t5_bucket", "the causal buckets are computed with the bidirectional rule: with bidirectional=False use all "
        "num_buckets for n = max(i − j, 0) = max(−r, 0), with no offset for r > 0",
        _t5_causal_as_bidirectional),
    "t5_sign_flipped": Mistake(
        "t5_bucket", "the direction is flipped: the input is r = j − i, so keys after the query have r > 0 "
        "(bidirectional: upper half of the buckets) and the causal distance is max(−r, 0)", _t5_sign_flipped),
    "alibi_slopes_power_of_two_formula": Mistake("alibi_slopes", _POWER_OF_TWO, _slopes_power_of_two_formula),
    "alibi_bias_power_of_two_formula": Mistake("alibi_bias", "the slopes: " + _POWER_OF_TWO,
                                               _alibi_bias_power_of_two_formula),
    "alibi_bias_key_position": Mistake(
        "alibi_bias", "this is m·j, BLOOM's shortcut: after a causal softmax it gives the same attention, but the "
        "bias asked for is −m·|j − i| (zero at the query, equal for both directions)", _alibi_bias_key_position),
    "alibi_bias_positive": Mistake(
        "alibi_bias", "the sign: ALiBi *subtracts* m·|j − i|, so distant keys get lower logits",
        _alibi_bias_positive),
}
for _kind, (_impl, _text) in _SHAW.items():
    MISTAKES[f"shaw_{_kind}"] = Mistake("shaw_attention", _text, _impl)
    MISTAKES[f"shaw_direct_{_kind}"] = Mistake("shaw_attention_direct", _text, _impl)
