# Chapter 1 with the exponent i/d instead of 2i/d, and a module that slices a fixed table
# (fails past max_len) and keeps the table as a trainable parameter.
import torch
from torch import nn


def sinusoidal_table(seq_len, d_model, base=10000.0):
    if d_model % 2 or d_model <= 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    if seq_len <= 0:
        raise ValueError(f"seq_len must be positive, got {seq_len}")
    i = torch.arange(d_model // 2, dtype=torch.float32)
    w = base ** (-i / d_model)
    ang = torch.arange(seq_len, dtype=torch.float32)[:, None] * w
    pe = torch.zeros(seq_len, d_model)
    pe[:, ::2] = ang.sin()
    pe[:, 1::2] = ang.cos()
    return pe


class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        self.pe = nn.Parameter(sinusoidal_table(max_len, d_model, base))

    def forward(self, x, offset=0):
        return x + self.pe[offset:offset + x.shape[1]]
