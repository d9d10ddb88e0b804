"""Held-out learner mistake: chapter 1's interleaving inside each half."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4:
        raise ValueError("d_model must be a multiple of 4")
    if grid_h < 1 or grid_w < 1:
        raise ValueError("grid_h and grid_w must be >= 1")
    D = d_model // 4
    freqs = base ** (-torch.arange(D, dtype=torch.float64, device=device) / D)
    k = torch.arange(grid_h * grid_w, device=device)
    r, c = (k // grid_w).double(), (k % grid_w).double()
    pe = torch.zeros(grid_h * grid_w, d_model, dtype=torch.float64, device=device)
    half = d_model // 2
    pe[:, 0:half:2] = torch.sin(r[:, None] * freqs)
    pe[:, 1:half:2] = torch.cos(r[:, None] * freqs)
    pe[:, half::2] = torch.sin(c[:, None] * freqs)
    pe[:, half + 1::2] = torch.cos(c[:, None] * freqs)
    return pe.float()
