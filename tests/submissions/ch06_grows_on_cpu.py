"""Learner-style submission: a RotaryCache that is right on one device, but grows its tables on the
default CPU instead of the buffers' device (it breaks on a GPU as soon as a position passes max_len)."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim <= 0 or head_dim % 2:
            raise ValueError(f"head_dim={head_dim} must be positive and even")
        if max_len <= 0:
            raise ValueError(f"max_len={max_len} must be positive")
        self.head_dim, self.base = head_dim, base
        self._build(max_len)

    def _build(self, length):
        inv_freq = 1.0 / self.base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim)
        freqs = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)  # on the CPU, always
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)
        self.max_len = length

    def forward(self, position_ids, dtype=None):
        if position_ids.numel() and int(position_ids.min()) < 0:
            raise ValueError(f"position_ids must be >= 0, got {int(position_ids.min())}")
        if position_ids.numel() and int(position_ids.max()) >= self.max_len:
            self._build(2 * int(position_ids.max()) + 1)
        dtype = dtype or torch.float32
        return self.cos_cached[position_ids].to(dtype), self.sin_cached[position_ids].to(dtype)
