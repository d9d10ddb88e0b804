"""Held-out learner mistake: Qwen3-VL's interleaved frequencies (apply_interleaved_mrope), not Qwen2-VL's blocks."""
import torch


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={list(mrope_section)} does not sum to {head_dim // 2}")
    if position_ids.dim() != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq): {tuple(position_ids.shape)}")
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    freqs = position_ids.float()[..., None] * inv_freq  # (3, B, L, d/2)
    freqs_t = freqs[0].clone()
    for dim, offset in ((1, 1), (2, 2)):  # H, W
        idx = slice(offset, mrope_section[dim] * 3, 3)
        freqs_t[..., idx] = freqs[dim, ..., idx]
    emb = torch.cat((freqs_t, freqs_t), dim=-1)
    return emb.cos(), emb.sin()
