"""Learner-style submission: relative distance computed as i − j (query minus key) everywhere."""
import math

import torch
from torch import nn


def relative_positions(q_len, k_len, device=None):
    if q_len <= 0 or k_len <= 0:
        raise ValueError(f"q_len and k_len must be positive, got q_len={q_len}, k_len={k_len}")
    offset = k_len - q_len
    rows = torch.arange(q_len, device=device).unsqueeze(1) + offset
    cols = torch.arange(k_len, device=device).unsqueeze(0)
    return rows - cols


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    if rel_k.shape[0] != 2 * max_distance + 1:
        raise ValueError(f"rel_k needs 2*max_distance+1 rows, got {rel_k.shape[0]}")
    n_q, n_k, d = q.size(2), k.size(2), q.size(3)
    dist = relative_positions(n_q, n_k, device=q.device)
    index = torch.clamp(dist, min=-max_distance, max=max_distance) + max_distance
    index = index.expand(q.size(0), q.size(1), n_q, n_k)
    logits = torch.matmul(q, k.transpose(2, 3))
    logits = logits + torch.gather(torch.matmul(q, rel_k.t()), 3, index)
    logits = logits / math.sqrt(d)
    if causal:
        logits = logits.masked_fill(dist < 0, -float("inf"))  # "future" with my sign convention
    p = torch.softmax(logits, dim=3)
    buckets = torch.zeros(q.size(0), q.size(1), n_q, rel_v.size(0), dtype=p.dtype, device=p.device)
    buckets = buckets.scatter_add(3, index, p)
    return torch.matmul(p, v) + torch.matmul(buckets, rel_v)


class RelativePositionBias(nn.Module):
    def __init__(self, num_heads, max_distance):
        super().__init__()
        if num_heads <= 0 or max_distance < 0:
            raise ValueError(f"bad num_heads={num_heads} or max_distance={max_distance}")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        dist = relative_positions(q_len, k_len, device=self.bias.weight.device)
        idx = dist.clamp(-self.max_distance, self.max_distance) + self.max_distance
        return self.bias(idx).permute(2, 0, 1)[None]
