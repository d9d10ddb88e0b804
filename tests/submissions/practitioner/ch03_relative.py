"""Practitioner-style chapter 3, correct: einsum for every contraction, T5's bucket function written the
way the T5 code base writes it (torch.min against a full_like), ALiBi slopes with Python floats as in
Press et al.'s get_slopes, and validation messages worded its own way."""
import math

import torch
from torch import nn


def relative_positions(q_len, k_len, device=None):
    if q_len < 1 or k_len < 1:
        raise ValueError(f"lengths must be positive: q_len={q_len}, k_len={k_len}")
    memory = torch.arange(k_len, dtype=torch.long, device=device)[None, :]
    context = torch.arange(k_len - q_len, k_len, dtype=torch.long, device=device)[:, None]
    return memory - context


def _rows(q, k, rel_k, rel_v, max_distance):
    if max_distance < 0:
        raise ValueError(f"max_distance={max_distance} must not be negative")
    want = (2 * max_distance + 1, q.size(-1))
    for name, table in (("rel_k", rel_k), ("rel_v", rel_v)):
        if tuple(table.shape) != want:
            raise ValueError(f"{name} has shape {tuple(table.shape)}, expected {want}")
    rel = relative_positions(q.size(-2), k.size(-2), device=q.device)
    return rel.clamp(-max_distance, max_distance) + max_distance, rel > 0


def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    idx, future = _rows(q, k, rel_k, rel_v, max_distance)
    a_k, a_v = rel_k[idx], rel_v[idx]  # (Lq, Lk, d)
    logits = (torch.einsum("bhqd,bhkd->bhqk", q, k) + torch.einsum("bhqd,qkd->bhqk", q, a_k)) / math.sqrt(q.size(-1))
    if causal:
        logits = logits.masked_fill(future, float("-inf"))
    attn = logits.softmax(-1)
    return torch.einsum("bhqk,bhkd->bhqd", attn, v) + torch.einsum("bhqk,qkd->bhqd", attn, a_v)


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    idx, future = _rows(q, k, rel_k, rel_v, max_distance)
    b, h, lq, d = q.shape
    index = idx.expand(b, h, lq, k.size(-2))
    logits = torch.einsum("bhqd,bhkd->bhqk", q, k) + torch.einsum("bhqd,rd->bhqr", q, rel_k).gather(-1, index)
    logits = logits / math.sqrt(d)
    if causal:
        logits = logits.masked_fill(future, float("-inf"))
    attn = logits.softmax(-1)
    summed = torch.zeros(b, h, lq, rel_v.size(0), dtype=attn.dtype, device=attn.device).scatter_add(-1, index, attn)
    return torch.einsum("bhqk,bhkd->bhqd", attn, v) + torch.einsum("bhqr,rd->bhqd", summed, rel_v)


class RelativePositionBias(nn.Module):
    def __init__(self, num_heads, max_distance):
        super().__init__()
        if num_heads < 1:
            raise ValueError(f"need at least one head (num_heads={num_heads})")
        if max_distance < 0:
            raise ValueError(f"max_distance={max_distance} must not be negative")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        rel = relative_positions(q_len, k_len, device=self.bias.weight.device)
        rows = rel.clamp(-self.max_distance, self.max_distance) + self.max_distance
        return torch.einsum("qkh->hqk", self.bias(rows))[None]


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def alibi_slopes(num_heads, device=None):
    if num_heads < 1:
        raise ValueError(f"num_heads={num_heads}: there must be at least one head")

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(num_heads).is_integer():
        slopes = get_slopes_power_of_2(num_heads)
    else:
        closest = 2 ** math.floor(math.log2(num_heads))
        slopes = get_slopes_power_of_2(closest) + get_slopes_power_of_2(2 * closest)[0::2][: num_heads - closest]
    return torch.tensor(slopes, dtype=torch.float32, device=device)


def alibi_bias(num_heads, q_len, k_len, device=None):
    distance = relative_positions(q_len, k_len, device=device).abs().to(torch.float32)
    return -torch.einsum("h,qk->hqk", alibi_slopes(num_heads, device=device), distance).unsqueeze(0)
