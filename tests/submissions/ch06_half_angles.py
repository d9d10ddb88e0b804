"""Learner-style chapter 6 submission: angles computed in the requested dtype, no check on positions."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim <= 0 or head_dim % 2:
            raise ValueError(f"head_dim={head_dim} must be even")
        if max_len <= 0:
            raise ValueError(f"max_len={max_len} must be positive")
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, position_ids, dtype=None):
        dtype = dtype or torch.float32
        # everything in the dtype the model runs in
        freqs = position_ids.to(dtype)[..., None] * self.inv_freq.to(dtype)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()
