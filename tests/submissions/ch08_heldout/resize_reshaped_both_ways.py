"""Held-out learner mistake: reshape where a permute belongs, on the way in and on the way out."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D, got {table.dim()} dims")
    (h, w), (h2, w2) = old_grid, new_grid
    if h <= 0 or w <= 0 or table.shape[0] != num_prefix_tokens + h * w:
        raise ValueError(f"old_grid={old_grid} does not fit {table.shape[0]} rows")
    if h2 <= 0 or w2 <= 0:
        raise ValueError(f"new_grid={new_grid} must be positive")
    dim = table.shape[-1]
    x = table[num_prefix_tokens:].to(torch.float32).view(1, dim, h, w)
    x = F.interpolate(x, size=(h2, w2), mode=mode, align_corners=False, antialias=antialias)
    x = x.view(h2 * w2, dim)
    return torch.cat([table[:num_prefix_tokens], x.to(table.dtype)], dim=0)
