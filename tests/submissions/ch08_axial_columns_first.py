"""Learner-style submission: (x, y) order, the column angles first."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    dim = head_dim // 2
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, device=position_ids.device).float() / dim)
    xy = position_ids.flip(-1).float()  # (column, row): x first
    freqs = (xy[..., None] * inv_freq).flatten(1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
