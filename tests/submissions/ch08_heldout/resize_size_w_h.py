"""Held-out learner mistake: the new size given to F.interpolate as (width, height)."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    old_h, old_w = old_grid
    if old_h <= 0 or old_w <= 0 or table.shape[0] != num_prefix_tokens + old_h * old_w:
        raise ValueError("old_grid does not match the table")
    if min(new_grid) <= 0:
        raise ValueError("new_grid must be positive")
    extra, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]
    dim = grid.shape[1]
    grid = grid.float().reshape(1, old_h, old_w, dim).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=tuple(new_grid)[::-1], mode=mode, antialias=antialias)
    grid = grid.permute(0, 2, 3, 1).reshape(-1, dim)
    return torch.cat([extra, grid.to(table.dtype)])
