"""Learner-style submission: RoPE applied to the values as well as the queries and keys; its property
test compares with its own RoPE and so rejects correct variants (too strict)."""
import math

import torch
from torch import nn


def _tables(pos, dim, base, device):
    inv = 1.0 / base ** (torch.arange(0, dim, 2, device=device).float() / dim)
    f = pos.float()[..., None] * inv
    f = torch.cat([f, f], -1)
    return f.cos(), f.sin()


def _rope(t, cos, sin):
    h = t.shape[-1] // 2
    return t * cos + torch.cat([-t[..., h:], t[..., :h]], -1) * sin


def check_relative_property(rope_fn, head_dim):
    # compare with my own RoPE at a few positions
    x = torch.randn(1, 1, 16, head_dim)
    pos = torch.arange(16)
    cos, sin = _tables(pos, head_dim, 10000.0, "cpu")
    mine = _rope(x, cos, sin)
    return bool(torch.allclose(rope_fn(x, pos), mine, atol=1e-4))


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        assert d_model % num_heads == 0
        self.n_head, self.hd, self.base = num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, L, D = x.shape
        past = kv_cache[0].shape[-2] if kv_cache is not None else 0
        if position_ids is None:
            position_ids = torch.arange(past, past + L, device=x.device)
        split = lambda t: t.view(B, L, self.n_head, self.hd).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        cos, sin = _tables(position_ids, self.hd, self.base, x.device)
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        q, k, v = _rope(q, cos, sin), _rope(k, cos, sin), _rope(v, cos, sin)  # position everywhere
        if kv_cache is not None:
            k, v = torch.cat((kv_cache[0], k), dim=2), torch.cat((kv_cache[1], v), dim=2)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if causal:
            S = k.shape[2]
            allowed = torch.ones(L, S, dtype=torch.bool, device=x.device).tril(S - L)
            att = att.masked_fill(~allowed, float("-inf"))
        y = att.softmax(-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(B, L, D)), (k, v)
