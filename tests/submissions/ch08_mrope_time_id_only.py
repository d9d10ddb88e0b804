"""Learner-style submission: plain 1-D RoPE on the first (time) id."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    freqs = position_ids[0, ..., None].float() * inv_freq
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
