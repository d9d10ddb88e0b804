"""Held-out learner mistake: the chosen angles repeated pairwise (the interleaved layout) for the tables."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"bad mrope_section {mrope_section}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"bad position_ids {tuple(position_ids.shape)}")
    theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    ang = position_ids.float()[..., None] * theta
    bounds = [0, mrope_section[0], mrope_section[0] + mrope_section[1], head_dim // 2]
    chosen = torch.cat([ang[k, ..., bounds[k]:bounds[k + 1]] for k in range(3)], dim=-1)
    emb = torch.repeat_interleave(chosen, 2, dim=-1)
    return emb.cos(), emb.sin()
