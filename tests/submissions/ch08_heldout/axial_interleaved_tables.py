"""Held-out learner mistake: each angle written twice in a row (the interleaved layout)."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim={head_dim}")
    if position_ids.dim() != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids {tuple(position_ids.shape)}")
    half = head_dim // 2
    theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half)
    ang = (position_ids.float()[:, :, None] * theta).reshape(len(position_ids), half)
    ang = torch.stack([ang, ang], dim=-1).reshape(len(position_ids), head_dim)
    return torch.cos(ang), torch.sin(ang)
