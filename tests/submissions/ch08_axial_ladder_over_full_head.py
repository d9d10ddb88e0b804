"""Learner-style submission: chapter 4's rope_inv_freq(head_dim) cut to d/4 frequencies (a ladder over the whole
head instead of half of it)."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    inv_freq = inv_freq[: head_dim // 4]
    freqs = (position_ids[..., None].float() * inv_freq).flatten(1)  # (N, d/2)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
