# A learner's chapter-1 answers with typical mistakes, written the way learners write them:
# sin/cos swapped, the textbook rotation (which shifts backwards), and a module that keeps the
# table in a plain attribute, builds positions on the CPU and never checks d_model.
import math

import torch
from torch import nn


def sinusoidal_table(seq_len, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError(f"d_model={d_model} must be even")
    if seq_len < 1:
        raise ValueError(f"bad seq_len={seq_len}")
    pos = torch.arange(seq_len).float().unsqueeze(1)
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.cos(pos * div)
    pe[:, 1::2] = torch.sin(pos * div)
    return pe


def shift_matrix(k, d_model, base=10000.0):
    if d_model % 2 or d_model <= 0:
        raise ValueError(f"d_model={d_model} must be even")
    m = torch.zeros(d_model, d_model)
    for i in range(d_model // 2):
        a = k / base ** (2 * i / d_model)
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = math.cos(a), -math.sin(a)
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = math.sin(a), math.cos(a)
    return m


class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        self.d_model, self.base = d_model, base

    def forward(self, x, offset=0):
        L = x.shape[1]
        pos = torch.arange(offset, offset + L).float().unsqueeze(1)
        div = torch.exp(torch.arange(0, self.d_model, 2).float() * (-math.log(self.base) / self.d_model))
        pe = torch.zeros(L, self.d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        return x + pe
