"""Learner-style submission: positions always start at 0, so tokens decoded with a cache all sit at
position 0 (and a chunk after the cache restarts at 0 too)."""
import torch
import torch.nn.functional as F
from torch import nn


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} not divisible by num_heads {num_heads}")
        self.nh, self.hs, self.base = num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def rope(self, t, pos):
        inv = 1.0 / (self.base ** (torch.arange(0, self.hs, 2, device=t.device, dtype=torch.float32) / self.hs))
        a = pos[..., None].float() * inv
        a = torch.cat((a, a), dim=-1)
        if a.dim() == 3:
            a = a[:, None]
        c, s = a.cos().to(t.dtype), a.sin().to(t.dtype)
        t1, t2 = t.chunk(2, dim=-1)
        return t * c + torch.cat((-t2, t1), dim=-1) * s

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, T, C = x.size()
        if position_ids is None:
            position_ids = torch.arange(T, device=x.device)
        q = self.q_proj(x).view(B, T, self.nh, self.hs).transpose(1, 2)  # (B, nh, T, hs)
        k = self.k_proj(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        q, k = self.rope(q, position_ids), self.rope(k, position_ids)
        if kv_cache is not None:
            k = torch.cat([kv_cache[0], k], dim=2)
            v = torch.cat([kv_cache[1], v], dim=2)
        S = k.size(2)
        mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T) if causal else None
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(y.transpose(1, 2).contiguous().view(B, T, C)), (k, v)
