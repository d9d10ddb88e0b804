"""Held-out learner mistake: chapter 1's exponent 2i/d kept, so each quarter's frequencies stop at base^(-1/2)."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model must be a positive multiple of 4, got {d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h and grid_w must be positive: {grid_h}, {grid_w}")
    i = torch.arange(d_model // 4, dtype=torch.float64, device=device)
    w = base ** (-2 * i / d_model)
    p = torch.arange(grid_h * grid_w, device=device)
    r = (p // grid_w).double().unsqueeze(1) * w
    c = (p % grid_w).double().unsqueeze(1) * w
    return torch.cat([r.sin(), r.cos(), c.sin(), c.cos()], -1).float()
