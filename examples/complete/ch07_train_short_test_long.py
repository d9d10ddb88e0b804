"""Learner-style submission, correct and written independently of the reference: the attention computes its
softmax explicitly (no SDPA), builds one additive mask from the bias and the causal rule, and the decoder
keeps its blocks' pieces in plain attributes with a tied head through F.linear."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class PositionalAttention(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of num_heads {num_heads}")
        self.nh, self.hd = num_heads, d_model // num_heads
        self.scheme = scheme
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, name, nn.Linear(d_model, d_model, bias=False))

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        B, T, C = x.shape
        old = kv_cache[0].size(2) if kv_cache is not None else 0
        pos = position_ids if position_ids is not None else old + torch.arange(T, device=x.device)
        q, k, v = (p(x).reshape(B, T, self.nh, self.hd).permute(0, 2, 1, 3)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        q = self.scheme.rotate(q, pos)
        k = self.scheme.rotate(k, pos)
        if kv_cache is not None:
            k = torch.cat([kv_cache[0], k], 2)
            v = torch.cat([kv_cache[1], v], 2)
        S = k.size(2)
        key_pos = torch.cat([torch.arange(old, device=x.device), pos])
        att = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.hd ** -0.5
        extra = self.scheme.bias(pos, key_pos)
        if extra is not None:
            att = att + extra.to(att.dtype)
        if causal:
            future = torch.arange(S, device=x.device)[None, :] > torch.arange(S - T, S, device=x.device)[:, None]
            att = att.masked_fill(future, float("-inf"))
        y = torch.einsum("bhqk,bhkd->bhqd", att.softmax(-1), v)
        return self.o_proj(y.permute(0, 2, 1, 3).reshape(B, T, C)), (k, v)


class DecoderBlock(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        self.attn_norm = nn.LayerNorm(d_model)
        self.attn = PositionalAttention(d_model, num_heads, scheme)
        self.mlp_norm = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, h, pos, causal=True, kv_cache=None):
        a, kv = self.attn(self.attn_norm(h), pos, causal=causal, kv_cache=kv_cache)
        h = h + a
        h = h + self.mlp(self.mlp_norm(h))
        return h, kv


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size, d_model, num_layers, num_heads, scheme, causal=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of num_heads {num_heads}")
        self.embed_tokens = nn.Embedding(vocab_size, d_model)
        self.scheme = scheme
        self.layers = nn.ModuleList([DecoderBlock(d_model, num_heads, scheme) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.causal = causal
        self.scale = math.sqrt(d_model)

    def forward(self, tokens, kv_caches=None):
        old = 0 if kv_caches is None else kv_caches[0][0].size(2)
        pos = torch.arange(old, old + tokens.size(1), device=tokens.device)
        h = self.scheme.embed(self.embed_tokens(tokens) * self.scale, pos)
        new = []
        for i, block in enumerate(self.layers):
            h, kv = block(h, pos, self.causal, kv_caches[i] if kv_caches else None)
            new.append(kv)
        return F.linear(self.norm(h), self.embed_tokens.weight), new
