"""Held-out learner mistake: the row angles on the first half of the head, the column angles on the second."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim={head_dim}")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids shape {tuple(position_ids.shape)}")
    half = head_dim // 2
    theta = 1.0 / base ** (torch.arange(0, half, 2, device=position_ids.device, dtype=torch.float32) / half)
    rows = position_ids[:, :1].float() * theta
    cols = position_ids[:, 1:].float() * theta
    emb = torch.cat([rows, rows, cols, cols], dim=1)  # first half rows, second half columns
    return emb.cos(), emb.sin()
