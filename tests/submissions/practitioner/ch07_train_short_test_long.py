"""Practitioner-style chapter 7, correct: a Hugging Face-style attention (one additive float mask built with
torch.finfo(dtype).min instead of -inf, the scheme's bias added to it), a tied head as in `tie_weights`
(`lm_head.weight = embed_tokens.weight`), an embedding scale kept as a plain attribute (Gemma's
normalizer), and positions in the style of `cache_position`."""
import torch
import torch.nn.functional as F
from torch import nn


class PositionalAttention(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"hidden size {d_model} is not a multiple of the number of heads (num_heads={num_heads})")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.scheme = scheme
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        bsz, q_len, hidden = x.size()
        past_len = 0 if kv_cache is None else kv_cache[0].size(-2)
        cache_position = torch.arange(past_len, past_len + q_len, device=x.device)
        if position_ids is None:
            position_ids = cache_position
        shape = (bsz, q_len, self.num_heads, self.head_dim)
        query = self.scheme.rotate(self.q_proj(x).view(shape).transpose(1, 2), position_ids)
        key = self.scheme.rotate(self.k_proj(x).view(shape).transpose(1, 2), position_ids)
        value = self.v_proj(x).view(shape).transpose(1, 2)
        if kv_cache is not None:
            key, value = torch.cat([kv_cache[0], key], dim=-2), torch.cat([kv_cache[1], value], dim=-2)
        kv_len = key.size(-2)
        key_positions = torch.cat([torch.arange(past_len, device=x.device), position_ids])
        mask = torch.zeros(q_len, kv_len, dtype=query.dtype, device=x.device)
        if causal:
            future = torch.arange(kv_len, device=x.device)[None, :] > cache_position[:, None]
            mask = mask.masked_fill(future, torch.finfo(query.dtype).min)
        bias = self.scheme.bias(position_ids, key_positions)
        if bias is not None:
            mask = mask + bias.to(query.dtype)
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(bsz, q_len, hidden)), (key, value)


class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        self.attn_norm = nn.LayerNorm(d_model)
        self.attn = PositionalAttention(d_model, num_heads, scheme)
        self.mlp_norm = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, hidden_states, position_ids, causal=True, kv_cache=None):
        residual = hidden_states
        attn_out, present = self.attn(self.attn_norm(hidden_states), position_ids, causal, kv_cache)
        hidden_states = residual + attn_out
        return hidden_states + self.mlp(self.mlp_norm(hidden_states)), present


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size, d_model, num_layers, num_heads, scheme, causal=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"hidden size {d_model} is not a multiple of num_heads={num_heads}")
        self.embed_tokens = nn.Embedding(vocab_size, d_model)
        self.scheme = scheme
        self.layers = nn.ModuleList(DecoderLayer(d_model, num_heads, scheme) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.embed_tokens.weight  # tie_weights
        self.normalizer = d_model ** 0.5
        self.causal = causal

    def forward(self, tokens, kv_caches=None):
        past_len = 0 if not kv_caches else kv_caches[0][0].size(-2)
        cache_position = torch.arange(past_len, past_len + tokens.size(1), device=tokens.device)
        hidden_states = self.scheme.embed(self.embed_tokens(tokens) * self.normalizer, cache_position)
        presents = []
        for idx, layer in enumerate(self.layers):
            hidden_states, present = layer(hidden_states, cache_position, self.causal,
                                           kv_caches[idx] if kv_caches else None)
            presents.append(present)
        return self.lm_head(self.norm(hidden_states)), presents
