"""Chapter 7 mistakes: position schemes wired into attention and into the decoder the wrong way."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .. import ch07_train_short_test_long as ref
from .mistake import Mistake


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


ATTN = "PositionalAttention"
DECODER = "TinyDecoder"

MISTAKES = {
    "scheme_bias_after_softmax": Mistake(
        ATTN, "the bias is added after the softmax: add it to the logits, before the softmax (SDPA's float "
              "attn_mask is added to q·k/sqrt(d)); after it, the weights no longer sum to one",
        _attention("bias_after_softmax")),
    "scheme_bias_before_scale": Mistake(
        ATTN, "the bias is divided by sqrt(d_head) with the scores: add it after the scaling, "
              "logits = q·k/sqrt(d) + bias (what SDPA does with a float attn_mask)",
        _attention("bias_before_scale")),
    "scheme_no_causal_with_bias": Mistake(
        ATTN, "with a bias the causal mask is gone: ALiBi's -m|j - i| penalises future keys but does not hide "
              "them; fold the mask into the bias as -inf (bias.masked_fill(~allowed, -inf))",
        _attention("no_causal_with_bias")),
    "scheme_no_decode_offset": Mistake(
        ATTN, "positions are not offset when decoding: with a cache of `past` keys the new tokens sit at "
              "past, past + 1, ..., not at 0, 1, ...",
        _attention("no_decode_offset")),
    "scheme_rotates_v": Mistake(
        ATTN, "the values are rotated too: scheme.rotate acts on queries and keys only", _attention("rotates_v")),
    "scheme_k_not_rotated": Mistake(
        ATTN, "the keys are not rotated: rotate both q and k with scheme.rotate", _attention("k_not_rotated")),
    "scheme_cache_unrotated": Mistake(
        ATTN, "the cache holds keys before their rotation: rotate the new keys, then append them to the cache "
              "(a key's rotation depends only on its own position, so it is never redone)",
        _attention("cache_unrotated")),
    "scheme_top_left_causal": Mistake(
        ATTN, "with a cache the causal mask is aligned to the start of the keys: query i of a chunk sits at "
              "k_len - seq + i, so allow keys j <= k_len - seq + i (tril(k_len - seq), not is_causal=True)",
        _attention("top_left_causal")),
    "scheme_embeds_inside": Mistake(
        ATTN, "the attention block calls scheme.embed: an absolute table is added once, by the decoder, to the "
              "token embeddings; inside attention it would be added in every layer",
        _attention("embeds_inside")),
    "scheme_causal_flipped": Mistake(
        ATTN, "the causal mask points the wrong way: each query sees the keys after it instead of those before "
              "it. The allowed keys are j <= k_len - seq + i, a lower triangle: tril(k_len - seq)",
        _attention("causal_flipped")),
    "scheme_scale_by_d": Mistake(
        ATTN, "the scores are divided by d_head; divide them by sqrt(d_head) (SDPA's default scale): q·k has "
              "variance d_head, so its square root brings it to one", _attention("scale_by_d")),
    "scheme_merge_no_transpose": Mistake(
        ATTN, "the heads are merged without moving them back: (B, H, L, d_head) must be transposed to "
              "(B, L, H, d_head) before the reshape to (B, L, d_model)", _attention("merge_no_transpose")),
    "scheme_split_wrong_order": Mistake(
        ATTN, "the heads are split in the wrong order: (B, L, d_model) is viewed as (B, L, H, d_head), then "
              "transposed to (B, H, L, d_head); viewed directly as (B, H, L, d_head) it mixes positions and "
              "heads", _attention("split_wrong_order")),
    "scheme_bias_negated": Mistake(
        ATTN, "the bias is subtracted: it is added to the scaled logits, q·k/sqrt(d) + bias (ALiBi's bias is "
              "already negative)", _attention("bias_negated")),
    "scheme_bias_swapped": Mistake(
        ATTN, "scheme.bias gets its arguments swapped: it takes the query positions first, then the keys', "
              "scheme.bias(position_ids, k_positions), and returns (H, L, K); swapped, it is (H, K, L) and measures "
              "i - j, which shows as soon as a cache makes K differ from L", _attention("bias_swapped")),
    "scheme_bias_ignored": Mistake(
        ATTN, "the bias never reaches the logits: pass scheme.bias(...) to SDPA as the float attn_mask (with the "
              "causal mask folded in as -inf)", _attention("bias_ignored")),
    "scheme_cache_rotated_again": Mistake(
        ATTN, "the keys are rotated again after joining the cache: the cached keys were rotated when they were "
              "new; rotate only the new keys, before appending them", _attention("cache_rotated_again")),
    "scheme_bias_not_cast": Mistake(
        ATTN, "the bias keeps its float32 dtype with bfloat16 queries: cast it to q's dtype first, "
              "bias.to(q.dtype), as the model would compute it in that dtype", _attention("bias_not_cast")),
    "decoder_embed_every_layer": Mistake(
        DECODER, "the absolute table is added before every layer: add it once, to the token embeddings",
        _decoder("embed_every_layer")),
    "decoder_embed_after_first_layer": Mistake(
        DECODER, "the absolute table is added after the first layer: add it to the token embeddings, before "
                 "layer 0", _decoder("embed_after_first_layer")),
    "decoder_no_decode_offset": Mistake(
        DECODER, "positions are not offset when decoding: with caches holding `past` tokens the new tokens sit "
                 "at past, past + 1, ...", _decoder("no_decode_offset")),
    "decoder_no_final_norm": Mistake(
        DECODER, "the final LayerNorm is missing: logits = norm(h) @ embed_tokens.weight.T",
        _decoder("no_final_norm")),
    "decoder_no_embed_scale": Mistake(
        DECODER, "the token embeddings are not scaled: multiply them by sqrt(d_model) before the scheme's embed",
        _decoder("no_embed_scale")),
    "decoder_one_based_positions": Mistake(
        DECODER, "positions start at 1: the first token sits at position 0, the new tokens at past, past + 1, "
                 "...", _decoder("one_based_positions")),
    "decoder_embed_scale_after_table": Mistake(
        DECODER, "sqrt(d_model) is applied after the scheme's embed, so it scales the position table too: scale "
                 "the token vectors first, then hand them to scheme.embed", _decoder("embed_scale_after_table")),
    "decoder_post_norm": Mistake(
        DECODER, "the blocks are post-norm, LN(h + Attn(h)): the given DecoderBlock is pre-norm, "
                 "h + Attn(LN(h)) then h + MLP(LN(h)); use it as it is", _decoder("post_norm")),
    "decoder_no_attention_residual": Mistake(
        DECODER, "the attention's residual is missing: h = h + Attn(LN(h)), not h = Attn(LN(h)); the given "
                 "DecoderBlock keeps it", _decoder("no_attention_residual")),
    "decoder_ignores_causal": Mistake(
        DECODER, "the decoder ignores causal=False: pass self.causal on to every attention block",
        _decoder("ignores_causal")),
}
