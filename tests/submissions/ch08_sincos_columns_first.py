"""Learner-style submission: MAE's original layout, the column blocks first."""
import numpy as np
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    grid = np.meshgrid(np.arange(grid_w, dtype=np.float64), np.arange(grid_h, dtype=np.float64))  # w goes first
    omega = 1.0 / base ** (np.arange(d_model // 4, dtype=np.float64) / (d_model // 4))
    out = []
    for g in grid:
        a = np.einsum("m,d->md", g.reshape(-1), omega)
        out += [np.sin(a), np.cos(a)]
    return torch.tensor(np.concatenate(out, axis=1), dtype=torch.float32, device=device)
