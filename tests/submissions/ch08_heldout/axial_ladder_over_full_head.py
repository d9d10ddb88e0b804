"""Held-out learner mistake: chapter 4's ladder over the whole head, its first d/4 frequencies."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim={head_dim} must be a multiple of 4")
    if position_ids.dim() != 2 or position_ids.size(1) != 2:
        raise ValueError(f"position_ids must be (N, 2), got {tuple(position_ids.shape)}")
    inv = base ** (-torch.arange(0, head_dim // 2, 2, device=position_ids.device).float() / head_dim)
    r = position_ids[:, 0, None].float() * inv
    c = position_ids[:, 1, None].float() * inv
    emb = torch.cat([r, c, r, c], dim=-1)
    return emb.cos(), emb.sin()
