"""Chapter 7 mistakes, by hand: position schemes wired into attention the wrong way.

The mistakes here are the ones whose behaviour reaches further than the statements their declaration
(exercises.py beside this file) rewrites; the others, the decoder's among them, are derived from those statements
(grader/mistakes.py).
"""

from __future__ import annotations

import math

import torch

from posenc_ref import ch07_train_short_test_long as ref


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
            if bias is not None:  # cast as the reference casts it (leaving it in float32 is its own, derived mistake)
                bias = bias.to(q.dtype)  # (H, L, K)
            diagonal = 0 if kind == "top_left_causal" else k_len - seq
            allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(diagonal)
            if kind == "causal_flipped":  # the keys after the query instead of those before it
                allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).triu(diagonal)
            if not causal or (kind == "no_causal_with_bias" and bias is not None):
                allowed = torch.ones_like(allowed)
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


# a mistake's name: scheme_, then the one slip that _attention(kind) makes
_ATTENTION_KINDS = (
    "bias_after_softmax", "bias_before_scale", "no_causal_with_bias", "no_decode_offset", "rotates_v",
    "k_not_rotated", "cache_unrotated", "top_left_causal", "embeds_inside", "causal_flipped", "scale_by_d",
    "merge_no_transpose", "split_wrong_order", "bias_negated", "bias_ignored", "cache_rotated_again",
)

IMPLEMENTATIONS = {
    **{f"scheme_{kind}": _attention(kind) for kind in _ATTENTION_KINDS},
}

