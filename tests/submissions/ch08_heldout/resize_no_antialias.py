"""Held-out learner mistake: the antialias argument never reaches F.interpolate (Hugging Face's call)."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    H, W = (int(v) for v in old_grid)
    nH, nW = (int(v) for v in new_grid)
    if H <= 0 or W <= 0 or table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"old_grid={old_grid} and the table disagree")
    if nH <= 0 or nW <= 0:
        raise ValueError(f"new_grid={new_grid}")
    d = table.shape[1]
    patch_pos = table[num_prefix_tokens:].reshape(1, H, W, d).permute(0, 3, 1, 2).float()
    patch_pos = F.interpolate(patch_pos, size=(nH, nW), mode=mode, align_corners=False)
    patch_pos = patch_pos.permute(0, 2, 3, 1).reshape(nH * nW, d)
    return torch.cat([table[:num_prefix_tokens], patch_pos.to(table.dtype)])
