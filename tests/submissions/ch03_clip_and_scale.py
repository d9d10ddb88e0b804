"""Learner-style submission: Shaw with distances clipped at ±(K−1), the direct form with an unscaled
relative logit, and a bias table clipped at ±(K−1)."""
import math

import torch
from torch import nn


def relative_positions(q_len, k_len, device=None):
    if q_len < 1:
        raise ValueError(f"q_len={q_len} must be positive")
    if k_len < 1:
        raise ValueError(f"k_len={k_len} must be positive")
    return torch.arange(k_len, device=device)[None] - torch.arange(k_len - q_len, k_len, device=device)[:, None]


def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    K = max_distance
    r = relative_positions(q.shape[2], k.shape[2], q.device)
    idx = torch.clamp(r, -K, K) + K
    ak = rel_k[idx]
    av = rel_v[idx]
    content = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    position = torch.einsum("bhid,ijd->bhij", q, ak)  # forgot to scale this one
    s = content + position
    if causal:
        s = s.masked_fill(r > 0, float("-inf"))
    a = s.softmax(-1)
    return a @ v + torch.einsum("bhij,ijd->bhid", a, av)


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    if rel_k.shape[0] != 2 * max_distance + 1 or rel_v.shape[0] != 2 * max_distance + 1:
        raise ValueError("rel_k and rel_v must have 2 * max_distance + 1 rows")
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    r = relative_positions(Lq, Lk, q.device)
    # clip so that the index stays strictly inside the table
    idx = (torch.clamp(r, -(max_distance - 1), max_distance - 1) + max_distance).expand(B, H, Lq, Lk)
    s = (q @ k.transpose(-1, -2) + torch.gather(q @ rel_k.T, -1, idx)) / math.sqrt(d)
    if causal:
        s = s.masked_fill(r > 0, float("-inf"))
    a = s.softmax(-1)
    w = torch.zeros(B, H, Lq, rel_v.shape[0], dtype=a.dtype, device=a.device).scatter_add(-1, idx, a)
    return a @ v + w @ rel_v


class RelativePositionBias(nn.Module):
    def __init__(self, num_heads, max_distance):
        super().__init__()
        if num_heads < 1:
            raise ValueError(f"num_heads={num_heads}")
        if max_distance < 0:
            raise ValueError(f"max_distance={max_distance}")
        self.K = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        r = relative_positions(q_len, k_len, device=self.bias.weight.device)
        r = r.clamp(1 - self.K, self.K - 1)
        return self.bias(r + self.K).permute(2, 0, 1).unsqueeze(0)
