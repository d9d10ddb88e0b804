"""Held-out learner mistake: one ladder of d/2 frequencies over the whole head, the fast half for the rows and the
slow half for the columns."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim={head_dim} is not a multiple of 4")
    if position_ids.dim() != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (N, 2): {tuple(position_ids.shape)}")
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    q = head_dim // 4
    ids = position_ids.float()
    angles = torch.cat([ids[:, :1] * inv_freq[:q], ids[:, 1:] * inv_freq[q:]], dim=-1)
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos(), emb.sin()
