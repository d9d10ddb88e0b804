"""Held-out learner mistake: a copy-paste slip, the column read from position_ids[:, 0] too."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4, got {head_dim}")
    if position_ids.dim() != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got {tuple(position_ids.shape)}")
    half = head_dim // 2
    theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half)
    row = position_ids[:, 0].float()
    col = position_ids[:, 0].float()
    angles = torch.cat([row[:, None] * theta, col[:, None] * theta], dim=-1)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()
