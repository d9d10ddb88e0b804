"""Held-out learner mistake: the patch number divided by the grid's height, so a row holds H patches (right only on
a square grid)."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model={d_model}: need a positive multiple of 4")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h}, grid_w={grid_w}: both must be positive")
    q = d_model // 4
    omega = 1.0 / base ** (torch.arange(q, dtype=torch.float64, device=device) / q)
    k = torch.arange(grid_h * grid_w, device=device)
    r, c = (k // grid_h).double(), (k % grid_h).double()
    a, b = r[:, None] * omega, c[:, None] * omega
    return torch.cat([a.sin(), a.cos(), b.sin(), b.cos()], dim=1).float()
