"""Held-out learner mistake: chapter 1's table over the H·W flattened positions."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model={d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h}")
    n = grid_h * grid_w
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32, device=device) / d_model))
    pos = torch.arange(n, dtype=torch.float32, device=device)
    angles = torch.outer(pos, inv_freq)
    pe = torch.empty(n, d_model, dtype=torch.float32, device=device)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe
