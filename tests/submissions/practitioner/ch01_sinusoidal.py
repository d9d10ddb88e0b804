"""Practitioner-style chapter 1, correct: angles in float64 (more accurate than float32), the
interleaving done with stack + flatten, M_k assembled with torch.block_diag, and a module that keeps a
(1, max_len, d) buffer (the common tutorial shape) and extends it on the input's device."""
import torch
from torch import nn


def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    if d_model < 1 or d_model % 2:
        raise ValueError(f"an interleaved sin/cos table needs an even width; d_model={d_model}")
    if seq_len < 1:
        raise ValueError(f"at least one position is needed; seq_len={seq_len}")
    freq = torch.exp(-torch.arange(0, d_model, 2, dtype=torch.float64, device=device) / d_model * torch.log(
        torch.tensor(float(base), dtype=torch.float64, device=device)))
    angle = torch.arange(seq_len, dtype=torch.float64, device=device)[:, None] * freq  # (L, d/2)
    return torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2).to(torch.float32)


def shift_matrix(k, d_model, base=10000.0):
    if d_model < 1 or d_model % 2:
        raise ValueError(f"d_model={d_model} must be even and positive")
    freq = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    blocks = []
    for a in (k * freq).tolist():
        c, s = torch.cos(torch.tensor(a, dtype=torch.float64)), torch.sin(torch.tensor(a, dtype=torch.float64))
        blocks.append(torch.stack((torch.stack((c, s)), torch.stack((-s, c)))))
    return torch.block_diag(*blocks).to(torch.float32)


class SinusoidalPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        if max_len < 1:
            raise ValueError(f"max_len={max_len} must be positive")
        self.d_model, self.base = d_model, base
        self.drop = nn.Dropout(p=dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model, base).unsqueeze(0), persistent=False)

    def forward(self, x, offset=0):
        if x.size(-1) != self.d_model:
            raise ValueError(f"expected the last dimension to be d_model={self.d_model}, got {x.size(-1)}")
        if offset < 0:
            raise ValueError(f"offset={offset} cannot be negative")
        end = offset + x.size(1)
        if end > self.pe.size(1):
            rows = sinusoidal_table(end, self.d_model, self.base, device=x.device)[offset:]
        else:
            rows = self.pe[0, offset:end]
        return self.drop(x + rows.to(dtype=x.dtype))
