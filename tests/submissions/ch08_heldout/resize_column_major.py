"""Held-out learner mistake: the resized image is read back with transpose(0, 2), column by column."""
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError("table must be (rows, d)")
    h, w = old_grid
    nh, nw = new_grid
    if nh < 1 or nw < 1:
        raise ValueError(f"bad new_grid {new_grid}")
    if h < 1 or w < 1 or len(table) != num_prefix_tokens + h * w:
        raise ValueError(f"bad old_grid {old_grid} for {len(table)} rows")
    cls_rows = table[:num_prefix_tokens]
    d = table.shape[-1]
    img = table[num_prefix_tokens:].float().view(h, w, d).permute(2, 0, 1).unsqueeze(0)
    img = F.interpolate(img, size=(nh, nw), mode=mode, align_corners=False, antialias=antialias)
    patches = img.squeeze(0).transpose(0, 2).reshape(-1, d)  # (W', H', d) -> rows
    return torch.cat((cls_rows, patches.to(table.dtype)))
