"""Learner-style submission: tables built on the CPU whatever the input's device, apply_rope that
does not cast the float32 tables, and an attention layer that builds its angles in the input's dtype
(and its positions on the CPU)."""
import torch
import torch.nn.functional as F
from torch import nn


def rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim % 2:
        raise ValueError(f"head_dim={head_dim} must be even")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))  # on the CPU
    freqs = torch.einsum("...l,f->...lf", position_ids.float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    r = cos.shape[-1]
    if r > x.shape[-1] or r % 2:
        raise ValueError(f"rotary width {r} does not fit head_dim {x.shape[-1]}")
    if cos.dim() == 3:
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    rot, rest = x[..., :r], x[..., r:]
    x1, x2 = rot[..., : r // 2], rot[..., r // 2:]
    out = rot * cos + torch.cat((-x2, x1), dim=-1) * sin  # float32 tables promote the result
    return torch.cat((out, rest.to(out.dtype)), dim=-1)


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        self.num_heads, self.head_dim, self.base = num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        b, t, d = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            position_ids = torch.arange(past, past + t)  # on the CPU
        inv = 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, device=x.device).float() / self.head_dim))
        inv = inv.to(x.dtype)
        ang = position_ids[..., None].to(x.dtype) * inv  # angles in the input's dtype
        ang = torch.cat((ang, ang), dim=-1)
        cos, sin = ang.cos(), ang.sin()
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]
        heads = [m(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
                 for m in (self.q_proj, self.k_proj, self.v_proj)]
        q, k, v = heads
        h = self.head_dim // 2
        q = q * cos + torch.cat((-q[..., h:], q[..., :h]), dim=-1) * sin
        k = k * cos + torch.cat((-k[..., h:], k[..., :h]), dim=-1) * sin
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=2)
            v = torch.cat((kv_cache[1], v), dim=2)
        s = k.shape[2]
        mask = torch.ones(t, s, dtype=torch.bool, device=x.device).tril(s - t) if causal else None
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, d)), (k, v)
