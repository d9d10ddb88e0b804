"""Held-out learner mistake: timm's call copied from the text, mode and antialias fixed to its values."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    if min(old_grid) <= 0 or table.shape[0] != num_prefix_tokens + old_grid[0] * old_grid[1]:
        raise ValueError(f"old_grid={old_grid} does not fit")
    if min(new_grid) <= 0:
        raise ValueError(f"new_grid={new_grid} must be positive")
    d = table.shape[1]
    grid = table[num_prefix_tokens:].float().reshape(1, old_grid[0], old_grid[1], d).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=tuple(new_grid), mode="bicubic", align_corners=None, antialias=True)
    grid = grid.permute(0, 2, 3, 1).reshape(-1, d).to(table.dtype)
    return torch.cat([table[:num_prefix_tokens], grid])
