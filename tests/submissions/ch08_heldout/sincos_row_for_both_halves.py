"""Held-out learner mistake: a copy-paste slip, the column computed as the row."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model must be a multiple of 4, got {d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h} and grid_w={grid_w} must be positive")
    D = d_model // 4
    omega = 1.0 / base ** (torch.arange(D, dtype=torch.float64, device=device) / D)
    k = torch.arange(grid_h * grid_w, dtype=torch.float64, device=device)
    r = torch.div(k, grid_w, rounding_mode="floor")
    c = torch.div(k, grid_w, rounding_mode="floor")
    ra, ca = r[:, None] * omega, c[:, None] * omega
    return torch.cat([ra.sin(), ra.cos(), ca.sin(), ca.cos()], dim=1).float()
