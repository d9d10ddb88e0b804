"""Held-out learner mistake: the tables returned as (sin, cos)."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim={head_dim} must be a positive multiple of 4")
    if position_ids.dim() != 2 or position_ids.shape[-1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got {tuple(position_ids.shape)}")
    half = head_dim // 2
    inv_freq = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half)
    freqs = (position_ids.float().unsqueeze(-1) * inv_freq).flatten(1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return torch.sin(emb), torch.cos(emb)
