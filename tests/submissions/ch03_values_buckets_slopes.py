"""Learner-style submission: Shaw without the value table, T5 causal buckets computed with the
bidirectional rule, the power-of-two slope formula for every head count, and biases built on a
hard-coded device."""
import math

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def relative_positions(q_len, k_len, device=None):
    if q_len <= 0:
        raise ValueError(f"q_len must be > 0 (q_len={q_len})")
    if k_len <= 0:
        raise ValueError(f"k_len must be > 0 (k_len={k_len})")
    i = torch.arange(q_len, device=device) + (k_len - q_len)
    j = torch.arange(k_len, device=device)
    return j.view(1, -1) - i.view(-1, 1)


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    if rel_k.shape[0] != 2 * max_distance + 1:
        raise ValueError(f"rel_k has {rel_k.shape[0]} rows, expected 2 * max_distance + 1")
    r = relative_positions(q.shape[-2], k.shape[-2], device=q.device)
    idx = (r.clamp(-max_distance, max_distance) + max_distance).expand(*q.shape[:-1], k.shape[-2])
    scores = (q @ k.transpose(-1, -2) + (q @ rel_k.T).gather(-1, idx)) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(r > 0, float("-inf"))
    return scores.softmax(-1) @ v


class RelativePositionBias(nn.Module):
    def __init__(self, num_heads, max_distance):
        super().__init__()
        if num_heads <= 0:
            raise ValueError(f"num_heads={num_heads} must be positive")
        if max_distance < 0:
            raise ValueError(f"max_distance={max_distance} must be >= 0")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        r = relative_positions(q_len, k_len, device=DEVICE)
        r = r.clamp(-self.max_distance, self.max_distance) + self.max_distance
        return self.bias(r).permute(2, 0, 1).unsqueeze(0)


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    half = num_buckets // 2
    ret = (relative_position > 0).long() * half
    n = relative_position.abs()
    max_exact = half // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (half - max_exact)
    ).long()
    val_if_large = torch.minimum(val_if_large, torch.full_like(val_if_large, half - 1))
    return ret + torch.where(is_small, n, val_if_large)


def alibi_slopes(num_heads, device=None):
    if num_heads <= 0:
        raise ValueError(f"num_heads={num_heads} must be positive")
    start = 2 ** (-8 / num_heads)
    return torch.tensor([start ** (h + 1) for h in range(num_heads)], dtype=torch.float32, device=device)


def alibi_bias(num_heads, q_len, k_len, device=None):
    slopes = alibi_slopes(num_heads, device=DEVICE)
    dist = relative_positions(q_len, k_len, device=DEVICE).abs()
    return (-slopes.view(-1, 1, 1) * dist).unsqueeze(0)
