"""Chapter 7 mistakes, by hand: position schemes wired into attention and into the decoder the wrong way.

IMPLEMENTATIONS maps each mistake's name to its wrong implementation; its exercise and message are declared in
grader/checks/ch07.py.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .. import ch07_train_short_test_long as ref


# ---- the attention block ----------------------------------------------------------------------
def _attention(kind):
    """PositionalAttention with one wiring mistake; everything else as in the reference."""

    class Wrong(ref.PositionalAttention):
        def forward(self, x, position_ids=None, causal=True, kv_cache=None):
            batch, seq, _ = x.shape
            past = 0 if kv_cache is None else kv_cache[0].shape[2]
            if position_ids is None:
                start = 0 if kind == "no_decode_offset" else past
                position_ids = torch.arange(start, start + seq, device=x.device)
            if kind == "embeds_inside":
                x = self.scheme.embed(x, position_ids)

            def heads(t):
                if kind == "split_wrong_order":  # (B, L, d) read as (B, H, L, d_head): no transpose
                    return t.view(batch, self.num_heads, seq, self.head_dim)
                return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

            q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
            q = self.scheme.rotate(q, position_ids)
            if kind not in ("k_not_rotated", "cache_unrotated"):
                k = self.scheme.rotate(k, position_ids)
            if kind == "rotates_v":
                v = self.scheme.rotate(v, position_ids)
            if kv_cache is not None:
                k, v = torch.cat((kv_cache[0], k), dim=2), torch.cat((kv_cache[1], v), dim=2)
            k_len = k.shape[2]
            k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))
            if kind == "cache_rotated_again":  # every key, cached or new, rotated once more at its position
                k = self.scheme.rotate(k, k_positions)
            cached = k
            if kind == "cache_unrotated":  # every key rotated again at each call; the cache keeps them raw
                k = self.scheme.rotate(k, k_positions)
            bias = self.scheme.bias(position_ids, k_positions)
            if kind == "bias_swapped":  # bias(k_positions, position_ids): (H, K, L) where (H, L, K) belongs
                bias = self.scheme.bias(k_positions, position_ids)
            diagonal = 0 if kind == "top_left_causal" else k_len - seq
            allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(diagonal)
            if kind == "causal_flipped":  # the keys after the query instead of those before it
                allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).triu(diagonal)
            if not causal or (kind == "no_causal_with_bias" and bias is not None):
                allowed = torch.ones_like(allowed)
            if kind in ("bias_not_cast", "bias_swapped") and bias is not None:  # SDPA's path, as the solution's
                if kind == "bias_swapped":  # (so that a cache raises the very error the solution would raise)
                    bias = bias.to(q.dtype)
                mask = bias.masked_fill(~allowed, float("-inf"))  # bias_not_cast: float32 on bfloat16 q
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                return self.o_proj(out.transpose(1, 2).reshape(batch, seq, self.d_model)), (cached, v)
            scale = self.head_dim if kind == "scale_by_d" else math.sqrt(self.head_dim)
            scores = q @ k.transpose(-2, -1) / scale  # (B, H, L, K)
            if bias is not None and kind == "bias_before_scale":
                scores = (q @ k.transpose(-2, -1) + bias) / math.sqrt(self.head_dim)
            elif bias is not None and kind == "bias_negated":
                scores = scores - bias
            elif bias is not None and kind not in ("bias_after_softmax", "bias_ignored"):
                scores = scores + bias
            weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
            if bias is not None and kind == "bias_after_softmax":
                weights = weights + bias.masked_fill(~allowed, 0.0)
            out = weights @ v  # (B, H, L, d_head)
            if kind == "merge_no_transpose":  # (B, H, L, d_head) read back as (B, L, d) without the transpose
                out = out.reshape(batch, seq, self.d_model)
            else:
                out = out.transpose(1, 2).reshape(batch, seq, self.d_model)
            return self.o_proj(out), (cached, v)

    return Wrong


# ---- the decoder ------------------------------------------------------------------------------
def _block(layer, h, position_ids, causal, cache, kind):
    """DecoderBlock's forward, or one of its mistakes: post-norm, or the attention's residual missing."""
    if kind == "post_norm":  # h <- LN(h + Attn(h)), h <- LN(h + MLP(h))
        attended, cache = layer.attn(h, position_ids, causal, cache)
        h = layer.attn_norm(h + attended)
        return layer.mlp_norm(h + layer.mlp(h)), cache
    attended, cache = layer.attn(layer.attn_norm(h), position_ids, causal, cache)
    h = attended if kind == "no_attention_residual" else h + attended
    return h + layer.mlp(layer.mlp_norm(h)), cache


def _decoder(kind):
    """TinyDecoder with one mistake in how positions, the norm, the embedding scale or the blocks are wired."""

    class Wrong(ref.TinyDecoder):
        def forward(self, tokens, kv_caches=None):
            batch, seq = tokens.shape
            past = 0 if kv_caches is None or kind == "no_decode_offset" else kv_caches[0][0].shape[2]
            first = past + 1 if kind == "one_based_positions" else past
            position_ids = torch.arange(first, first + seq, device=tokens.device)
            h = self.embed_tokens(tokens)
            if kind not in ("no_embed_scale", "embed_scale_after_table"):
                h = h * math.sqrt(self.embed_tokens.embedding_dim)
            if kind != "embed_after_first_layer":
                h = self.scheme.embed(h, position_ids)
            if kind == "embed_scale_after_table":  # sqrt(d) (E[t] + PE[p]): the table scaled with the tokens
                h = h * math.sqrt(self.embed_tokens.embedding_dim)
            caches = []
            for n, layer in enumerate(self.layers):
                if kind == "embed_every_layer" and n > 0:
                    h = self.scheme.embed(h, position_ids)
                cache = None if kv_caches is None else kv_caches[n]
                causal = True if kind == "ignores_causal" else self.causal
                h, cache = _block(layer, h, position_ids, causal, cache, kind)
                if kind == "embed_after_first_layer" and n == 0:
                    h = self.scheme.embed(h, position_ids)
                caches.append(cache)
            if kind != "no_final_norm":
                h = self.norm(h)
            return h @ self.embed_tokens.weight.T, caches

    return Wrong


# a mistake's name: scheme_ or decoder_, then the one slip that _attention(kind) / _decoder(kind) make
_ATTENTION_KINDS = (
    "bias_after_softmax", "bias_before_scale", "no_causal_with_bias", "no_decode_offset", "rotates_v",
    "k_not_rotated", "cache_unrotated", "top_left_causal", "embeds_inside", "causal_flipped", "scale_by_d",
    "merge_no_transpose", "split_wrong_order", "bias_negated", "bias_swapped", "bias_ignored",
    "cache_rotated_again", "bias_not_cast",
)
_DECODER_KINDS = (
    "embed_every_layer", "embed_after_first_layer", "no_decode_offset", "no_final_norm", "no_embed_scale",
    "one_based_positions", "embed_scale_after_table", "post_norm", "no_attention_residual", "ignores_causal",
)

IMPLEMENTATIONS = {
    **{f"scheme_{kind}": _attention(kind) for kind in _ATTENTION_KINDS},
    **{f"decoder_{kind}": _decoder(kind) for kind in _DECODER_KINDS},
}

