"""Learner-style submission, correct and written independently of the reference: angles in float64
(more accurate than float32), real arithmetic for the interleaved layout, a property test that
samples random position pairs and shifts (and rejects a rotation that ignores the position), an attention
layer with explicit softmax."""
import math

import torch
from torch import nn


def rope_inv_freq(head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(f"head_dim must be even and positive, got head_dim={head_dim}")
    exps = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
    return (base ** -exps).float()


def rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(f"head_dim must be even and positive, got head_dim={head_dim}")
    exps = torch.arange(0, head_dim, 2, dtype=torch.float64, device=position_ids.device) / head_dim
    ang = position_ids.to(torch.float64).unsqueeze(-1) * base ** -exps
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos().float(), ang.sin().float()


def rotate_half(x):
    n = x.shape[-1]
    if n % 2:
        raise ValueError(f"cannot split a last dimension of size {n} in halves")
    first, second = torch.split(x, n // 2, dim=-1)
    return torch.cat([second.neg(), first], dim=-1)


def apply_rope(x, cos, sin):
    r = cos.shape[-1]
    if r % 2 or r > x.shape[-1]:
        raise ValueError(f"rotary width {r} must be even and <= {x.shape[-1]}")
    if cos.dim() == 3:
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    cos, sin = cos.type_as(x), sin.type_as(x)
    part = x[..., :r]
    return torch.cat([part * cos + rotate_half(part) * sin, x[..., r:]], dim=-1)


def apply_rope_interleaved(x, position_ids, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"head_dim must be even, got head_dim={d}")
    exps = torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d
    ang = position_ids.to(x.device, torch.float64).unsqueeze(-1) * base ** -exps
    if ang.dim() == 3:
        ang = ang.unsqueeze(1)
    c, s = ang.cos(), ang.sin()
    xe, xo = x[..., 0::2].double(), x[..., 1::2].double()
    out = torch.empty(x.shape, dtype=torch.float64, device=x.device)
    out[..., 0::2] = xe * c - xo * s
    out[..., 1::2] = xo * c + xe * s
    return out.to(x.dtype)


def interleaved_to_half_perm(head_dim):
    if head_dim % 2:
        raise ValueError(f"head_dim={head_dim} is odd")
    return torch.tensor([2 * i for i in range(head_dim // 2)] + [2 * i + 1 for i in range(head_dim // 2)])


def check_relative_property(rope_fn, head_dim):
    g = torch.Generator().manual_seed(123)
    q = torch.randn(head_dim, generator=g, dtype=torch.float64)
    k = torch.randn(head_dim, generator=g, dtype=torch.float64)
    pos = torch.arange(400)
    fq = rope_fn(q.repeat(1, 1, 400, 1), pos)[0, 0]
    fk = rope_fn(k.repeat(1, 1, 400, 1), pos)[0, 0]
    scale = q.norm() * k.norm()
    if ((fq.norm(dim=-1) - q.norm()).abs() > 1e-3 * q.norm()).any():
        return False
    if ((fk.norm(dim=-1) - k.norm()).abs() > 1e-3 * k.norm()).any():
        return False
    if (fq - fq[0]).norm(dim=-1).max() < 1e-3 * q.norm():  # the same vector everywhere: no position at all
        return False
    m = torch.randint(0, 200, (300,), generator=g)
    n = torch.randint(0, 200, (300,), generator=g)
    s = torch.randint(0, 200, (300,), generator=g)
    before = (fq[m] * fk[n]).sum(-1)
    after = (fq[m + s] * fk[n + s]).sum(-1)
    return bool(((before - after).abs() < 1e-3 * scale).all())


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not a multiple of num_heads={num_heads}")
        if (d_model // num_heads) % 2:
            raise ValueError(f"head_dim={d_model // num_heads} is odd")
        self.heads, self.dim, self.base = num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, L, D = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            position_ids = past + torch.arange(L, device=x.device)
        q, k, v = (p(x).view(B, L, self.heads, self.dim).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        cos, sin = rope_cos_sin(position_ids, self.dim, self.base)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if kv_cache is not None:
            k = torch.cat([kv_cache[0], k], dim=2)
            v = torch.cat([kv_cache[1], v], dim=2)
        S = k.shape[2]
        scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(self.dim)
        if causal:
            qpos = torch.arange(S - L, S, device=x.device)[:, None]
            kpos = torch.arange(S, device=x.device)[None, :]
            scores = scores.masked_fill(kpos > qpos, float("-inf"))
        out = (scores.softmax(dim=-1) @ v.float()).to(x.dtype)
        return self.o_proj(out.transpose(1, 2).reshape(B, L, D)), (k, v)
