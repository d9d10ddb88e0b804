"""Learner-style submission: the first half of the head for the rows, the second half for the columns."""
import torch


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    dim = head_dim // 2
    inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, device=position_ids.device).float() / dim)
    rows = position_ids[:, 0, None].float() * inv_freq
    cols = position_ids[:, 1, None].float() * inv_freq
    emb = torch.cat([rows, rows, cols, cols], dim=-1)  # rows rotate x[:d/2], columns x[d/2:]
    return emb.cos(), emb.sin()
