"""Held-out learner mistake: chapter 2's 1-D resize applied to the whole table, class token included."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    H, W = old_grid
    H2, W2 = new_grid
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    if H <= 0 or W <= 0 or table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"old_grid={old_grid} does not fit a table of {table.shape[0]} rows")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid={new_grid} must be positive")
    x = table.to(torch.float32).t().unsqueeze(0)  # (1, d, rows): every row a point on a line
    y = F.interpolate(x, size=num_prefix_tokens + H2 * W2, mode="linear", align_corners=False)
    return y.squeeze(0).t().to(table.dtype)
