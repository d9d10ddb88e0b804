"""Held-out learner mistake: every frequency turned by the first id (the time id)."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError("mrope_section must have three parts summing to head_dim // 2")
    if position_ids.dim() != 3 or position_ids.shape[0] != 3:
        raise ValueError("position_ids must be (3, batch, seq)")
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    freqs = position_ids[0].float()[..., None] * inv_freq  # (B, L, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()
