"""Generated from course/07_train_short_test_long/chapter.py by `python -m grader build`: edit the chapter."""

# from course/07_train_short_test_long/chapter.py#py-3b78ff30
import math  # noqa: F401  (used by the exercises: unused in the unfinished notebook)

import torch
import torch.nn.functional as F  # noqa: F401
from torch import nn


# from course/07_train_short_test_long/chapter.py#py-b4b9b5fe
class PositionalAttention(nn.Module):
    """Multi-head attention whose positions come from a scheme with three hooks:
    rotate(q or k, positions) before the scores, bias(q_positions, k_positions) added to them, and
    embed, which belongs to the decoder. scores = R(q) R(k)ᵀ / sqrt(d_head) + bias, causal."""

    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        # Hint: check d_model against num_heads, keep the sizes and the scheme (an attribute, so that it is
        #       registered as a submodule), and create the four Linear layers without bias.
        #       Shapes: each projection's weight (d_model, d_model); head_dim = d_model / num_heads
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.scheme = scheme
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        # Hint: positions first (the new tokens follow the cached ones), then project and split the heads,
        #       let the scheme rotate q and k, append them to the cache, ask the scheme for a bias over the
        #       query and key positions, and attend: the bias and the causal mask together form SDPA's mask.
        #       Shapes: x (B, L, d), q k v (B, H, L, d_head), with the cache k v (B, H, K, d_head),
        #       bias (H, L, K), output (B, L, d)
        batch, seq, _ = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            # the new tokens follow the cached ones
            position_ids = torch.arange(past, past + seq, device=x.device)  # (L,)

        def heads(t):  # (B, L, d) -> (B, H, L, d_head)
            return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        # q and k at their own positions (RoPE); values are never rotated
        q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)  # (B, H, L, d_head)
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=2)  # (B, H, K, d_head), K = past + L
            v = torch.cat((kv_cache[1], v), dim=2)
        k_len = k.shape[2]
        # keys: 0 .. past - 1 from the cache, then the new tokens
        k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))  # (K,)
        bias = self.scheme.bias(position_ids, k_positions)  # (H, L, K) or None
        if bias is None and (not causal or seq == k_len):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            # query i sits at k_len - seq + i: it may see keys j <= k_len - seq + i
            allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq) if causal else None
            if bias is None:
                mask = allowed
            else:
                # logits = q·k / sqrt(d_head) + bias, and -inf where the causal mask forbids
                bias = bias.to(q.dtype)  # (H, L, K)
                mask = bias if allowed is None else bias.masked_fill(~allowed, float("-inf"))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, L, d_head)
        out = out.transpose(1, 2).reshape(batch, seq, self.d_model)  # (B, L, d)
        return self.o_proj(out), (k, v)


# from course/07_train_short_test_long/chapter.py#py-de1ce193
class DecoderBlock(nn.Module):
    """Pre-norm block: h + Attn(LN(h)), then h + MLP(LN(h)). Returns (h, (k, v)). Given: the positions are
    the attention's and the decoder's business, not the block's."""

    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        self.attn_norm = nn.LayerNorm(d_model)
        self.attn = PositionalAttention(d_model, num_heads, scheme)
        self.mlp_norm = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, h, position_ids, causal=True, kv_cache=None):
        # h <- h + Attn(LN(h))
        attended, kv_cache = self.attn(self.attn_norm(h), position_ids, causal, kv_cache)
        h = h + attended  # (B, L, d)
        # h <- h + MLP(LN(h))
        return h + self.mlp(self.mlp_norm(h)), kv_cache


class TinyDecoder(nn.Module):
    """A GPT-style decoder whose positions come from one shared scheme.

    h_0 = scheme.embed(sqrt(d) E[tokens], p); pre-norm blocks; logits = LN(h) Eᵀ (weight tying)."""

    def __init__(self, vocab_size, d_model, num_layers, num_heads, scheme, causal=True):
        super().__init__()
        # Hint: check the sizes, then the five attributes named above (the layers in an nn.ModuleList).
        #       Shapes: embed_tokens.weight (vocab_size, d_model), one DecoderBlock per layer
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.embed_tokens = nn.Embedding(vocab_size, d_model)  # (V, d), also the output head
        self.scheme = scheme
        self.layers = nn.ModuleList(DecoderBlock(d_model, num_heads, scheme) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.causal = causal

    def forward(self, tokens, kv_caches=None):
        # Hint: the cached length gives the positions; the scaled token vectors meet the scheme's embed once;
        #       each layer takes its own cache and returns the new one; the head reuses the token table.
        #       Shapes: tokens (B, L), h (B, L, d), kv_caches: num_layers pairs of (B, H, K, d_head),
        #       logits (B, L, vocab_size)
        batch, seq = tokens.shape
        past = 0 if kv_caches is None else kv_caches[0][0].shape[2]
        position_ids = torch.arange(past, past + seq, device=tokens.device)  # (L,)
        # h_0 = embed(sqrt(d) E[tokens], p): the position enters here once, or not at all
        h = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)  # (B, L, d)
        h = self.scheme.embed(h, position_ids)
        caches = []
        for n, layer in enumerate(self.layers):
            h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])
            caches.append(cache)
        # logits = LN(h) Eᵀ
        return self.norm(h) @ self.embed_tokens.weight.T, caches  # (B, L, V)
