"""Held-out learner mistake: the patch rows reshaped straight to (1, d, H, W), without moving the channels; read
back with the patch embedding's flatten(2).transpose(1, 2)."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    H, W = old_grid
    H2, W2 = new_grid
    if H <= 0 or W <= 0 or table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"table rows do not match old_grid={old_grid}")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid={new_grid} must be positive")
    d = table.shape[1]
    prefix, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]
    image = grid.float().reshape(1, d, H, W)
    image = F.interpolate(image, size=(H2, W2), mode=mode, align_corners=False, antialias=antialias)
    rows = image.flatten(2).transpose(1, 2)[0]  # (H2*W2, d), as a ViT's patch embedding flattens
    return torch.cat([prefix, rows.to(table.dtype)], dim=0)
