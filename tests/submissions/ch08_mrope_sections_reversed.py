"""Learner-style submission: the sections take the ids in the order (width, height, time)."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    freqs = position_ids[..., None].float() * inv_freq  # (3, B, L, d/2)
    t, h, w = freqs.split(mrope_section, dim=-1)
    freqs = torch.cat([t[2], h[1], w[0]], dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
