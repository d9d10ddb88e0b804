"""Learner-style chapter 6 submission: clamps positions instead of growing, persistent buffers."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
        if max_len <= 0:
            raise ValueError(f"bad max_len={max_len}")
        self.max_len = max_len
        inv = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        f = torch.outer(torch.arange(max_len, dtype=torch.float32), inv)
        f = torch.cat([f, f], dim=-1)
        self.register_buffer("c", f.cos())  # persistent by default
        self.register_buffer("s", f.sin())

    def forward(self, position_ids, dtype=None):
        if (position_ids < 0).any():
            raise ValueError("negative position_ids")
        p = position_ids.clamp(max=self.max_len - 1)  # avoid index errors
        dtype = dtype or torch.float32
        return self.c[p].to(dtype), self.s[p].to(dtype)
