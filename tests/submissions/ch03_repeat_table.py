"""Learner-style submission: Shaw's attention with the gathered (L, L, d) tables repeated over batch and
heads. Correct on small inputs; at L = 2048 it builds a (1, 8, 2048, 2048, 64) tensor."""
import math

import torch


def relative_positions(q_len, k_len, device=None):
    if q_len <= 0 or k_len <= 0:
        raise ValueError(f"sizes must be positive: q_len={q_len}, k_len={k_len}")
    return torch.arange(k_len, device=device)[None, :] - torch.arange(k_len - q_len, k_len, device=device)[:, None]


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    if rel_k.shape[0] != 2 * max_distance + 1 or rel_v.shape[0] != 2 * max_distance + 1:
        raise ValueError(f"rel_k and rel_v need 2 * max_distance + 1 = {2 * max_distance + 1} rows")
    b, h, lq, d = q.shape
    r = relative_positions(lq, k.shape[2], device=q.device)
    idx = r.clamp(-max_distance, max_distance) + max_distance
    a_k = rel_k[idx].unsqueeze(0).unsqueeze(0).repeat(b, h, 1, 1, 1)  # (b, h, lq, lk, d)
    a_v = rel_v[idx].unsqueeze(0).unsqueeze(0).repeat(b, h, 1, 1, 1)
    scores = q @ k.transpose(-2, -1) + (q.unsqueeze(3) @ a_k.transpose(-2, -1)).squeeze(3)
    scores = scores / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(r > 0, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    return attn @ v + (attn.unsqueeze(3) @ a_v).squeeze(3)
