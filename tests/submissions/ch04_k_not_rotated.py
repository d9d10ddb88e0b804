"""Learner-style submission: only the queries are rotated; its property test checks nothing but
position 0 and the shape (too lax)."""
import torch
import torch.nn.functional as F
from torch import nn


def check_relative_property(rope_fn, head_dim):
    x = torch.randn(2, 3, 5, head_dim)
    out = rope_fn(x, torch.zeros(5, dtype=torch.long))
    return out.shape == x.shape and torch.allclose(out, x, atol=1e-5)


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        self.num_heads, self.head_dim, self.base = num_heads, d_model // num_heads, base
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, name, nn.Linear(d_model, d_model, bias=False))

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        b, n, d = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            position_ids = torch.arange(past, past + n, device=x.device)
        q = self.q_proj(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        freqs = 1.0 / self.base ** (torch.arange(0, self.head_dim, 2, device=x.device).float() / self.head_dim)
        angles = position_ids[..., None].float() * freqs
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        if cos.dim() == 3:
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        half = self.head_dim // 2
        q = q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=2)
            v = torch.cat((kv_cache[1], v), dim=2)
        if causal and n > 1:
            s = k.shape[2]
            mask = torch.ones(n, s, dtype=torch.bool, device=x.device).tril(s - n)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            out = F.scaled_dot_product_attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(b, n, d)), (k, v)
