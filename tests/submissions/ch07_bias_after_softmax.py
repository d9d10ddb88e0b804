"""Learner-style submission: the bias is added to the attention weights after the softmax (as if it were a
reweighting), and the decoder adds the absolute table after the first layer instead of before it."""
import math

import torch
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
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            position_ids = torch.arange(past, past + T, device=x.device)
        q = self.q_proj(x).view(B, T, self.h, self.dh).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.h, self.dh).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.h, self.dh).transpose(1, 2)
        q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)
        if kv_cache is not None:
            k, v = torch.cat([kv_cache[0], k], 2), torch.cat([kv_cache[1], v], 2)
        S = k.shape[2]
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.dh)
        mask = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T) if causal else None
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        w = scores.softmax(-1)
        bias = self.scheme.bias(position_ids, torch.cat([torch.arange(past, device=x.device), position_ids]))
        if bias is not None:
            w = w + (bias if mask is None else bias.masked_fill(~mask, 0.0))  # the bias reweights the attention
        out = (w @ v).transpose(1, 2).reshape(B, T, C)
        return self.o_proj(out), (k, v)


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
        past = 0 if kv_caches is None else kv_caches[0][0].shape[2]
        pos = torch.arange(past, past + tokens.shape[1], device=tokens.device)
        x = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)
        caches = []
        for i, layer in enumerate(self.layers):
            x, c = layer(x, pos, self.causal, None if kv_caches is None else kv_caches[i])
            if i == 0:
                x = self.scheme.embed(x, pos)  # positions join after the first layer
            caches.append(c)
        return self.norm(x) @ self.embed_tokens.weight.T, caches
