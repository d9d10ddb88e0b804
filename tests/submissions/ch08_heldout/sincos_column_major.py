"""Held-out learner mistake: meshgrid with indexing="xy" (numpy's default), so the patches run column by column."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model={d_model}: need a multiple of 4")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h} / grid_w={grid_w}")
    quarter = d_model // 4
    omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / quarter)
    rr, cc = torch.meshgrid(torch.arange(grid_h, device=device), torch.arange(grid_w, device=device), indexing="xy")
    rows, cols = rr.reshape(-1).double(), cc.reshape(-1).double()
    a, b = torch.outer(rows, omega), torch.outer(cols, omega)
    return torch.cat([a.sin(), a.cos(), b.sin(), b.cos()], dim=-1).float()
