"""Chapter 4 mistakes: RoPE built the ways learners, tutorials and bug reports get it wrong.

Only the implementations; each mistake's message is declared in exercises.py beside this file. The mistakes here are
the ones whose behaviour reaches further than the statements their declaration rewrites; the others are derived
(grader/mistakes.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from posenc_ref import ch04_rope as ref


# ---- tables -----------------------------------------------------------------------------------
def _cos_sin(kind):
    def rope_cos_sin(position_ids, head_dim, base=10000.0):
        step = 1.0 if kind == "i_over_d" else 2.0
        inv_freq = 1.0 / base ** (torch.arange(head_dim // 2, dtype=torch.float32, device=position_ids.device)
                                  * step / head_dim)
        freqs = position_ids[..., None].float() * inv_freq  # (..., L, d/2)
        if kind == "interleaved":
            emb = freqs.repeat_interleave(2, dim=-1)  # tables of the other layout
        else:
            emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()

    return rope_cos_sin


# ---- rotate_half and apply_rope ---------------------------------------------------------------
def _rotate_half(kind):
    def rotate_half(x):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        if kind == "sign":
            return torch.cat((x2, -x1), dim=-1)
        if kind == "no_minus":
            return torch.cat((x2, x1), dim=-1)
        return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)  # "neighbours" (GPT-J)

    return rotate_half


def _apply(kind):
    """apply_rope with one mistake: the sign, no cast, or a broken rotate_half inside ("rotate_half_<kind>")."""
    turn = _rotate_half(kind.removeprefix("rotate_half_")) if kind.startswith("rotate_half_") else ref.rotate_half

    def apply_rope(x, cos, sin):
        rot = cos.shape[-1]
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]
        if kind != "no_cast":
            cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        xr = x[..., :rot]
        sign = -1 if kind == "sign" else 1
        return torch.cat((xr * cos + sign * turn(xr) * sin, x[..., rot:]), dim=-1)

    return apply_rope


# ---- interleaved layout and the permutation ---------------------------------------------------
def _interleaved(kind):
    def apply_rope_interleaved(x, position_ids, base=10000.0):
        if kind == "half_layout":
            return ref.apply_rope(x, *ref.rope_cos_sin(position_ids, x.shape[-1], base))
        if kind == "layout_mix":
            return ref.apply_rope(x, *_cos_sin("interleaved")(position_ids, x.shape[-1], base))
        if kind == "i_over_d":
            cos, sin = _cos_sin("i_over_d")(position_ids, x.shape[-1], base)
            half = x.shape[-1] // 2
            cos, sin = cos[..., :half], sin[..., :half]
        else:  # "conjugate": e^(-i p theta)
            cos, sin = ref.rope_cos_sin(position_ids, x.shape[-1], base)
            half = x.shape[-1] // 2
            cos, sin = cos[..., :half], -sin[..., :half]
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]
        even, odd = x[..., 0::2].float(), x[..., 1::2].float()
        return torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2).to(x.dtype)

    return apply_rope_interleaved


# ---- the attention layer ----------------------------------------------------------------------
def _attention(kind):
    """RoPEAttention with one mistake; everything else as in the reference."""
    tables = {"layout_mix": _cos_sin("interleaved"), "i_over_d": _cos_sin("i_over_d")}.get(kind, ref.rope_cos_sin)
    turn = _rotate_half("sign") if kind == "sign" else ref.rotate_half

    class Wrong(ref.RoPEAttention):
        def __init__(self, d_model, num_heads, base=10000.0):
            super().__init__(d_model, num_heads, base)
            if kind == "inv_freq_buffer":  # frequencies kept in a buffer: module.to(dtype) rounds them
                self.register_buffer("inv_freq", ref.rope_inv_freq(self.head_dim, base), persistent=False)

        def forward(self, x, position_ids=None, causal=True, kv_cache=None):
            batch, seq, _ = x.shape
            past = 0 if kv_cache is None else kv_cache[0].shape[2]
            if position_ids is None:
                start = 0 if kind == "no_decode_offset" else past
                position_ids = torch.arange(start, start + seq, device=x.device)

            def heads(t):
                return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

            q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
            if kind == "angles_in_input_dtype":
                inv_freq = ref.rope_inv_freq(self.head_dim, self.base, device=x.device).to(x.dtype)
                freqs = position_ids[..., None].to(x.dtype) * inv_freq
                emb = torch.cat((freqs, freqs), dim=-1)
                cos, sin = emb.cos(), emb.sin()
            elif kind == "inv_freq_buffer":  # float32 positions times the (rounded) buffer, upcast
                freqs = position_ids[..., None].float() * self.inv_freq.float()
                emb = torch.cat((freqs, freqs), dim=-1)
                cos, sin = emb.cos(), emb.sin()
            else:
                cos, sin = tables(position_ids, self.head_dim, self.base)
            cos, sin = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)
            cos, sin = cos.to(x.dtype), sin.to(x.dtype)

            def rope(t):
                return t * cos + turn(t) * sin

            q = rope(q)
            if kind != "k_not_rotated":
                k = rope(k)
            if kind == "rotates_v":
                v = rope(v)
            if kv_cache is not None:
                k, v = torch.cat((kv_cache[0], k), dim=2), torch.cat((kv_cache[1], v), dim=2)
            k_len = k.shape[2]
            if causal and kind == "causal_flipped":  # keys at or after the query
                allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).triu(k_len - seq)
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
            elif causal and kind == "float_mask" and seq != k_len:  # 1.0 / 0.0 added to the scores: nothing masked
                allowed = torch.ones(seq, k_len, device=x.device).tril(k_len - seq)
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed.to(q.dtype))
            elif not causal or seq == 1:
                out = F.scaled_dot_product_attention(q, k, v)
            elif seq == k_len or kind == "top_left_causal":
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)
                out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
            return self.o_proj(out.transpose(1, 2).reshape(batch, seq, self.d_model)), (k, v)

    return Wrong


IMPLEMENTATIONS = {
    "apply_sign": _apply("sign"),  # x * cos - rotate_half(x) * sin
    "apply_rotate_half_no_minus": _apply("rotate_half_no_minus"),
    "apply_rotate_half_neighbours": _apply("rotate_half_neighbours"),
    "apply_no_cast": _apply("no_cast"),  # float32 cos/sin promote the output
    "interleaved_half_layout": _interleaved("half_layout"),
    "interleaved_layout_mix": _interleaved("layout_mix"),  # interleaved tables, rotate_half pairing
    "interleaved_conjugate": _interleaved("conjugate"),  # e^(-i p theta)
    "interleaved_i_over_d": _interleaved("i_over_d"),
    "attn_layout_mix": _attention("layout_mix"),
    "attn_sign": _attention("sign"),
    "attn_i_over_d": _attention("i_over_d"),
    "attn_rotates_v": _attention("rotates_v"),
    "attn_k_not_rotated": _attention("k_not_rotated"),
    "attn_no_decode_offset": _attention("no_decode_offset"),  # positions restart at 0 after a cache
    "attn_top_left_causal": _attention("top_left_causal"),  # is_causal=True with a cache
    "attn_causal_flipped": _attention("causal_flipped"),
    "attn_float_mask": _attention("float_mask"),  # a 1.0 / 0.0 mask masks nothing
    "attn_inv_freq_cast_by_to": _attention("inv_freq_buffer"),  # frequencies rounded by module.to(dtype)
    "attn_angles_in_input_dtype": _attention("angles_in_input_dtype"),
}

