"""Learner-style submission: the sections cut out of the full head's tables, with doubled section sizes."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    freqs = position_ids[..., None].float() * inv_freq
    emb = torch.cat([freqs, freqs], dim=-1)  # (3, B, L, d)
    parts = emb.split([2 * s for s in mrope_section], dim=-1)
    emb = torch.cat([part[i] for i, part in enumerate(parts)], dim=-1)
    return emb.cos(), emb.sin()
