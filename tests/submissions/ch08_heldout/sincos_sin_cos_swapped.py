"""Held-out learner mistake: cosines before sines in every half."""
import math

import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model % 4 != 0 or d_model <= 0:
        raise ValueError(f"d_model must be divisible by 4 (d_model={d_model})")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h, grid_w = {grid_h}, {grid_w}")
    n = d_model // 4
    omega = torch.exp(-math.log(base) * torch.arange(n, dtype=torch.float64, device=device) / n)
    idx = torch.arange(grid_h * grid_w, device=device)
    row, col = (idx // grid_w).double(), (idx % grid_w).double()
    blocks = []
    for p in (row, col):
        ang = p[:, None] * omega
        blocks += [torch.cos(ang), torch.sin(ang)]
    return torch.cat(blocks, dim=1).to(torch.float32)
