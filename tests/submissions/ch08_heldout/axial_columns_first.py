"""Held-out learner mistake: (x, y) as most image code writes it, the columns first."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4, got {head_dim}")
    if position_ids.dim() != 2 or position_ids.shape[-1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got {tuple(position_ids.shape)}")
    dim = head_dim // 2
    freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=position_ids.device) / dim))
    y, x = position_ids.float().unbind(-1)
    ang = torch.cat([torch.outer(x, freq), torch.outer(y, freq)], dim=-1)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()
