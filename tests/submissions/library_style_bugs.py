"""Learner-style submission in the style of popular libraries, with three bugs they are known for:
RoPEAttention keeps its frequencies in a registered buffer (so module.to(torch.bfloat16) rounds them, as in
transformers' rotary embeddings) and masks a chunk after a cached prefix with a float tensor of ones and zeros
(SDPA adds it: nothing is masked); RotaryCache grows its tables on the default CPU instead of the buffers'
device (it breaks on a GPU as soon as a position passes max_len). Everything else is correct."""
import torch
import torch.nn.functional as F
from torch import nn


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        if self.head_dim % 2:
            raise ValueError(f"head_dim={self.head_dim} must be even")
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        inv_freq = 1.0 / base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        b, n, d = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            position_ids = torch.arange(past, past + n, device=x.device)
        q, k, v = (p(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        freqs = position_ids[..., None].float() * self.inv_freq.float()  # upcast: too late, the buffer is rounded
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]

        def rope(t):
            t1, t2 = t[..., : self.head_dim // 2], t[..., self.head_dim // 2:]
            return t * cos + torch.cat((-t2, t1), dim=-1) * sin

        q, k = rope(q), rope(k)
        if kv_cache is not None:
            k, v = torch.cat((kv_cache[0], k), dim=2), torch.cat((kv_cache[1], v), dim=2)
        total = k.shape[2]
        if not causal or n == 1:
            out = F.scaled_dot_product_attention(q, k, v)
        elif n == total:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            mask = torch.ones(n, total, device=x.device).tril(total - n)  # float: added, masks nothing
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))
        return self.o_proj(out.transpose(1, 2).reshape(b, n, d)), (k, v)


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim <= 0 or head_dim % 2:
            raise ValueError(f"head_dim={head_dim} must be positive and even")
        if max_len <= 0:
            raise ValueError(f"max_len={max_len} must be positive")
        self.head_dim, self.base = head_dim, base
        self._build(max_len)

    def _build(self, length):
        inv_freq = 1.0 / self.base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32) / self.head_dim)
        freqs = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)  # on the CPU, always
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)
        self.max_len = length

    def forward(self, position_ids, dtype=None):
        if position_ids.numel() and int(position_ids.min()) < 0:
            raise ValueError(f"position_ids must be >= 0, got {int(position_ids.min())}")
        if position_ids.numel() and int(position_ids.max()) >= self.max_len:
            self._build(2 * int(position_ids.max()) + 1)
        dtype = dtype or torch.float32
        return self.cos_cached[position_ids].to(dtype), self.sin_cached[position_ids].to(dtype)
