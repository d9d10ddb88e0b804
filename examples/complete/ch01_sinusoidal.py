"""Chapter 1, as a learner might finish it: correct, but written independently of the reference
(exp/log frequencies, stack + reshape to interleave, a cached table grown on demand)."""

import math

import torch
from torch import nn


def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    if d_model < 2 or d_model % 2 == 1:
        raise ValueError(f"d_model must be even and positive (got d_model={d_model})")
    if seq_len < 1:
        raise ValueError(f"seq_len must be at least 1 (got seq_len={seq_len})")
    freqs = torch.exp(torch.arange(0, d_model, 2, device=device, dtype=torch.float32) * (-math.log(base) / d_model))
    angles = torch.arange(seq_len, device=device, dtype=torch.float32)[:, None] * freqs[None, :]
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)


def shift_matrix(k, d_model, base=10000.0):
    if d_model < 2 or d_model % 2 == 1:
        raise ValueError(f"d_model must be even and positive (got d_model={d_model})")
    blocks = []
    for i in range(d_model // 2):
        theta = k * math.exp(-math.log(base) * 2 * i / d_model)
        c, s = math.cos(theta), math.sin(theta)
        blocks.append(torch.tensor([[c, s], [-s, c]], dtype=torch.float32))
    return torch.block_diag(*blocks)


class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        if max_len < 1:
            raise ValueError(f"max_len must be positive (got max_len={max_len})")
        self.d_model = d_model
        self.base = base
        self.drop = nn.Dropout(dropout)
        self.register_buffer("table", sinusoidal_table(max_len, d_model, base), persistent=False)

    def forward(self, x, offset=0):
        if x.size(-1) != self.d_model:
            raise ValueError(f"expected last dim d_model={self.d_model}, got {x.size(-1)}")
        if offset < 0:
            raise ValueError(f"offset must be non-negative, got offset={offset}")
        stop = offset + x.size(1)
        table = self.table
        if stop > table.size(0):
            table = sinusoidal_table(stop, self.d_model, self.base, device=x.device)
        return self.drop(x + table[offset:stop].to(dtype=x.dtype))
