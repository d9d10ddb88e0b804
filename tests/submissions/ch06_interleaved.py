"""Learner-style chapter 6 submission: GPT-J style interleaved tables, kept as plain attributes."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim % 2:
            raise ValueError(f"odd head_dim={head_dim}")
        self.dim, self.base, self.max_len = head_dim, base, max_len
        self.make(max_len)

    def make(self, n):
        theta = self.base ** (-torch.arange(0, self.dim, 2).float() / self.dim)
        ang = torch.arange(n).float()[:, None] * theta[None, :]
        ang = ang.repeat_interleave(2, dim=-1)  # each angle twice, side by side
        self.cos, self.sin = ang.cos(), ang.sin()  # plain attributes
        self.max_len = n

    def forward(self, position_ids, dtype=torch.float32):
        if position_ids.min() < 0:
            raise ValueError("position_ids must not be negative")
        if position_ids.max() >= self.max_len:
            self.make(int(position_ids.max()) + 1)
        return self.cos[position_ids].to(dtype), self.sin[position_ids].to(dtype)
