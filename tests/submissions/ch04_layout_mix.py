"""Learner-style submission: RoPE tables built with repeat_interleave (interleaved layout) but used
with rotate_half (half layout), everywhere; the interleaved exercise done with rotate_half too."""
import torch
import torch.nn.functional as F
from torch import nn


def rope_inv_freq(head_dim, base=10000.0):
    if head_dim % 2 == 1 or head_dim < 2:
        raise ValueError(f"head_dim={head_dim} must be even")
    return base ** (-torch.arange(0, head_dim, 2).float() / head_dim)


def rope_cos_sin(position_ids, head_dim, base=10000.0):
    inv = rope_inv_freq(head_dim, base).to(position_ids.device)
    ang = position_ids.float().unsqueeze(-1) * inv
    ang = torch.repeat_interleave(ang, 2, dim=-1)  # one angle per pair
    return torch.cos(ang), torch.sin(ang)


def rotate_half(x):
    if x.shape[-1] % 2:
        raise ValueError(f"odd size {x.shape[-1]}")
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


def apply_rope_interleaved(x, position_ids, base=10000.0):
    cos, sin = rope_cos_sin(position_ids, x.shape[-1], base)
    cos = cos.to(x.dtype)
    sin = sin.to(x.dtype)
    if cos.dim() == 3:
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return x * cos + rotate_half(x) * sin


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        self.h = num_heads
        self.dh = d_model // num_heads
        self.base = base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, T, C = x.shape
        start = 0 if kv_cache is None else kv_cache[0].size(2)
        if position_ids is None:
            position_ids = torch.arange(start, start + T, device=x.device)
        q = self.q_proj(x).reshape(B, T, self.h, self.dh).permute(0, 2, 1, 3)
        k = self.k_proj(x).reshape(B, T, self.h, self.dh).permute(0, 2, 1, 3)
        v = self.v_proj(x).reshape(B, T, self.h, self.dh).permute(0, 2, 1, 3)
        cos, sin = rope_cos_sin(position_ids, self.dh, self.base)
        if cos.dim() == 3:
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if kv_cache is not None:
            k = torch.cat([kv_cache[0], k], 2)
            v = torch.cat([kv_cache[1], v], 2)
        S = k.size(2)
        mask = None
        if causal and T > 1:
            mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(y.permute(0, 2, 1, 3).reshape(B, T, C)), (k, v)
