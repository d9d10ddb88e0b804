"""Held-out learner mistake: the tables built first over the whole head, then cut by twice each section."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={list(mrope_section)}")
    if position_ids.dim() != 3 or position_ids.size(0) != 3:
        raise ValueError(f"position_ids {tuple(position_ids.shape)}")
    half = head_dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float32, device=position_ids.device) * 2 / head_dim)
    ang = position_ids.float().unsqueeze(-1) * theta
    emb = torch.cat((ang, ang), dim=-1)  # (3, B, L, d)
    out, off = [], 0
    for k, s in enumerate(mrope_section):
        out.append(emb[k, ..., off:off + 2 * s])
        off += 2 * s
    emb = torch.cat(out, dim=-1)
    return emb.cos(), emb.sin()
