"""Learner-style submission: positions always start at 0, in the attention block and in the decoder, so
tokens decoded with a cache sit at position 0 again."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class PositionalAttention(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        self.h, self.dh, self.scheme = num_heads, d_model // num_heads, scheme
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, T, C = x.shape
        if position_ids is None:
            position_ids = torch.arange(T, device=x.device)
        q, k, v = (p(x).view(B, T, self.h, self.dh).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)
        past = 0
        if kv_cache is not None:
            past = kv_cache[0].shape[2]
            k, v = torch.cat([kv_cache[0], k], 2), torch.cat([kv_cache[1], v], 2)
        S = k.shape[2]
        bias = self.scheme.bias(position_ids, torch.cat([torch.arange(past, device=x.device), position_ids]))
        mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T) if causal else None
        if bias is not None:
            bias = bias.to(q.dtype)
            mask = bias if mask is None else bias.masked_fill(~mask, float("-inf"))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, C)), (k, v)


class Block(nn.Module):
    def __init__(self, d, h, scheme):
        super().__init__()
        self.attn_norm, self.mlp_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = PositionalAttention(d, h, scheme)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pos, causal, cache):
        a, cache = self.attn(self.attn_norm(x), pos, causal, cache)
        x = x + a
        return x + self.mlp(self.mlp_norm(x)), cache


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size, d_model, num_layers, num_heads, scheme, causal=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        self.embed_tokens = nn.Embedding(vocab_size, d_model)
        self.scheme, self.causal = scheme, causal
        self.layers = nn.ModuleList([Block(d_model, num_heads, scheme) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)

    def forward(self, tokens, kv_caches=None):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.scheme.embed(self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim), pos)
        caches = []
        for i, layer in enumerate(self.layers):
            x, c = layer(x, pos, self.causal, None if kv_caches is None else kv_caches[i])
            caches.append(c)
        return self.norm(x) @ self.embed_tokens.weight.T, caches
