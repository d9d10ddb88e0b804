"""Chapter 8 written the way the libraries write it: timm's resample (batched posemb, early return on the same
size), transformers' float64 sinusoids, Qwen2-VL's rotary modules (frozen inverse frequencies, float64 angles),
get_rope_index's itertools.groupby walk, recomposition of the sections, and a float64 einsum property test."""

import itertools

import torch
import torch.nn.functional as F
from torch import nn


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.dim() != 2:
        raise ValueError(f"posemb must be (tokens, dim): table has shape {tuple(table.shape)}")
    if any(int(s) <= 0 for s in new_grid):
        raise ValueError(f"new_grid={new_grid} must be positive")
    if any(int(s) <= 0 for s in old_grid) or table.shape[0] != num_prefix_tokens + old_grid[0] * old_grid[1]:
        raise ValueError(f"{table.shape[0]} rows do not match old_grid={old_grid} + {num_prefix_tokens} prefix tokens")
    if mode not in ("bilinear", "bicubic"):
        raise ValueError(f"interpolation mode={mode} is not supported")
    posemb = table[None]  # timm works on (1, N, C)
    if tuple(old_grid) == tuple(new_grid):
        return table
    prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    orig_dtype = posemb.dtype
    posemb = posemb.float().reshape(1, old_grid[0], old_grid[1], -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=list(new_grid), mode=mode, align_corners=None, antialias=antialias)
    posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, posemb.shape[1]).to(orig_dtype)
    return torch.cat([prefix, posemb], dim=1)[0]


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model % 4 != 0 or d_model <= 0:
        raise ValueError(f"`embed_dim` (d_model={d_model}) must be divisible by 4")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h} and grid_w={grid_w} must be positive")
    pos_dim = d_model // 4
    omega = torch.arange(pos_dim, dtype=torch.float64, device=device) / pos_dim
    omega = 1.0 / base**omega
    gh, gw = torch.meshgrid(torch.arange(grid_h, dtype=torch.float64, device=device),
                            torch.arange(grid_w, dtype=torch.float64, device=device), indexing="ij")
    emb_h, emb_w = gh.flatten().outer(omega), gw.flatten().outer(omega)
    return torch.cat([emb_h.sin(), emb_h.cos(), emb_w.sin(), emb_w.cos()], dim=1).to(torch.float32)


class VisionRotaryEmbedding(nn.Module):
    def __init__(self, head_dim, theta=10000.0):
        super().__init__()
        dim = head_dim // 2
        self.inv_freq = nn.Parameter(1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)),
                                     requires_grad=False)

    def forward(self, position_ids):
        with torch.autocast(device_type=position_ids.device.type, enabled=False):
            freqs = position_ids[..., None].double() * self.inv_freq.to(position_ids.device)  # (N, 2, d/4)
            freqs = torch.cat([freqs[:, 0], freqs[:, 1]], dim=-1)
            emb = torch.cat([freqs, freqs], dim=-1)
            return emb.cos().float(), emb.sin().float()


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim % 4 or head_dim < 4:
        raise ValueError(f"head_dim={head_dim} must be a multiple of 4")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (seq, 2), got {list(position_ids.shape)}")
    return VisionRotaryEmbedding(head_dim, base)(position_ids)


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(1234)
    q, k = torch.randn(2, n_vectors, 1, 1, head_dim, generator=g)
    hpos, wpos = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    ids = torch.stack([hpos.flatten(), wpos.flatten()], dim=-1)
    n = ids.shape[0]
    with torch.no_grad():
        fq = rope_fn(q.expand(-1, -1, n, -1).clone(), ids)
        fk = rope_fn(k.expand(-1, -1, n, -1).clone(), ids)
    if not isinstance(fq, torch.Tensor) or fq.shape != (n_vectors, 1, n, head_dim) or fk.shape != fq.shape:
        return False
    fq, fk = fq.squeeze(1).double(), fk.squeeze(1).double()
    if not bool(torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    q64, k64 = q.reshape(n_vectors, head_dim).double(), k.reshape(n_vectors, head_dim).double()
    if not torch.allclose(fq.norm(dim=-1), q64.norm(dim=-1, keepdim=True).expand(-1, n), rtol=rtol, atol=0):
        return False
    if not torch.allclose(fk.norm(dim=-1), k64.norm(dim=-1, keepdim=True).expand(-1, n), rtol=rtol, atol=0):
        return False
    tol = rtol * q64.norm(dim=-1)
    if not ((fq[:, ::grid] - fq[:, :1]).norm(dim=-1).amax(-1) > tol).all():  # moves down the first column
        return False
    if not ((fq[:, :grid] - fq[:, :1]).norm(dim=-1).amax(-1) > tol).all():  # moves along the first row
        return False
    scores = torch.einsum("vmd,vnd->vmn", fq, fk)
    d = (ids[None] - ids[:, None]).reshape(-1, 2)  # key minus query
    base_q = torch.clamp(-d, min=0)
    base_k = base_q + d
    canon = scores[:, base_q[:, 0] * grid + base_q[:, 1], base_k[:, 0] * grid + base_k[:, 1]].reshape(-1, n, n)
    scale = (q64.norm(dim=-1) * k64.norm(dim=-1))[:, None, None]
    return bool(((scores - canon).abs() <= rtol * scale).all().item())


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    position_ids = torch.zeros(3, *token_types.shape, dtype=torch.long, device=token_types.device)
    grid_iters = {1: iter(image_grid_thw) if image_grid_thw is not None else iter(()),
                  2: iter(video_grid_thw) if video_grid_thw is not None else iter(())}
    for batch_idx, types in enumerate(token_types):
        keep = attention_mask[batch_idx].bool() if attention_mask is not None else torch.ones_like(types).bool()
        current_pos, pieces = 0, []
        for key, group in itertools.groupby(types[keep].tolist()):
            length = len(list(group))
            if key == 0:
                pieces.append(torch.arange(length, device=types.device).view(1, -1).expand(3, -1) + current_pos)
                current_pos += length
                continue
            grid_thw = next(grid_iters[key], None)
            if grid_thw is None:
                raise ValueError("image_grid_thw / video_grid_thw has fewer rows than vision groups")
            t, h, w = (int(grid_thw[0]), int(grid_thw[1]) // spatial_merge_size, int(grid_thw[2]) // spatial_merge_size)
            if t * h * w != length:
                raise ValueError(f"grid_thw {grid_thw.tolist()} gives {t * h * w} tokens, the group has {length}")
            tt, hh, ww = torch.meshgrid(torch.arange(t, device=types.device), torch.arange(h, device=types.device),
                                        torch.arange(w, device=types.device), indexing="ij")
            pieces.append(torch.stack([tt, hh, ww], dim=0).reshape(3, -1) + current_pos)
            current_pos += max(h, w)
        if pieces:
            position_ids[:, batch_idx, keep] = torch.cat(pieces, dim=1)
    return position_ids


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={list(mrope_section)} must sum to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(
        device=position_ids.device, dtype=torch.float) / head_dim))
    freqs = position_ids[..., None].float() * inv_freq
    cos, sin = freqs.cos(), freqs.sin()

    def recompose(f):
        f = torch.cat([m[i % 3] for i, m in enumerate(f.split(list(mrope_section), dim=-1))], dim=-1)
        return torch.cat((f, f), dim=-1)

    return recompose(cos), recompose(sin)
