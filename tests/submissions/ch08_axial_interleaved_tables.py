"""Learner-style submission: GPT-J style tables, each angle repeated twice in a row."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    dim = head_dim // 2
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, device=position_ids.device).float() / dim)
    freqs = (position_ids[..., None].float() * inv_freq).flatten(1)
    emb = torch.repeat_interleave(freqs, 2, dim=-1)
    return emb.cos(), emb.sin()
