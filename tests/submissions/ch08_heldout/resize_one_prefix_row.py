"""Held-out learner mistake (it raises): one prefix row, whatever num_prefix_tokens says."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    H, W = old_grid
    if H <= 0 or W <= 0 or table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"old_grid={old_grid} does not fit the table")
    if min(new_grid) <= 0:
        raise ValueError(f"new_grid={new_grid} must be positive")
    cls_token, grid = table[:1], table[1:]
    d = table.shape[1]
    grid = grid.float().reshape(1, H, W, d).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=tuple(new_grid), mode=mode, align_corners=False, antialias=antialias)
    return torch.cat([cls_token, grid.permute(0, 2, 3, 1).reshape(-1, d).to(table.dtype)])
