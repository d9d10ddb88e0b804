"""Held-out learner mistake: the sections given the ids in the order (x, y, t): width, height, time."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) * 2 != head_dim:
        raise ValueError(f"mrope_section={mrope_section} must sum to head_dim // 2")
    if position_ids.dim() != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    t_ids, h_ids, w_ids = position_ids.float()
    parts, start = [], 0
    for ids, size in zip((w_ids, h_ids, t_ids), mrope_section):
        parts.append(ids[..., None] * inv_freq[start:start + size])
        start += size
    freqs = torch.cat(parts, dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
