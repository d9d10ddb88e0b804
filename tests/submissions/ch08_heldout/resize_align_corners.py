"""Held-out learner mistake: align_corners=True."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError("table must be 2-D")
    (gh, gw), (th, tw) = old_grid, new_grid
    if min(gh, gw) <= 0 or table.size(0) - num_prefix_tokens != gh * gw:
        raise ValueError(f"old_grid {old_grid} does not match the table")
    if min(th, tw) <= 0:
        raise ValueError(f"new_grid {new_grid} has a side <= 0")
    prefix = table[:num_prefix_tokens]
    pos = table[num_prefix_tokens:].float().reshape(1, gh, gw, -1).permute(0, 3, 1, 2)
    pos = F.interpolate(pos, size=(th, tw), mode=mode, align_corners=True, antialias=antialias)
    pos = pos.permute(0, 2, 3, 1).flatten(1, 2)[0]
    return torch.cat([prefix, pos.to(table.dtype)], dim=0)
