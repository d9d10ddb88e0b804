"""Chapter 4 mistakes: RoPE built the ways learners, tutorials and bug reports get it wrong."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import ch04_rope as ref
from .mistake import Mistake


# ---- frequencies and tables -------------------------------------------------------------------
def _inv_freq(kind):
    def rope_inv_freq(head_dim, base=10000.0, device=None):
        i = torch.arange(head_dim // 2, dtype=torch.float32, device=device)  # (d/2,)
        if kind == "i_over_d":
            return 1.0 / base ** (i / head_dim)
        return base ** (2 * i / head_dim)  # "not_inverted"

    return rope_inv_freq


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


def _perm_inverse(head_dim):
    return torch.argsort(ref.interleaved_to_half_perm(head_dim))


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


LAYOUT_MIX = ("rotate_half pairs coordinate i with i + d/2 (half layout), but the cos/sin tables repeat each angle "
              "side by side (repeat_interleave, interleaved layout): the blocks are not rotations. Build them with "
              "torch.cat((freqs, freqs), dim=-1)")
I_OVER_D = "the exponent is i/d; it should be 2i/d (theta_i = base^(-2i/d), from torch.arange(0, d, 2) / d)"
SIGN = ("rotate_half has its minus sign on the wrong half: it must be cat(-x2, x1). Yours turns every plane the other "
        "way (-m·theta): still relative, but not the convention of the checkpoints")

MISTAKES = {
    "inv_freq_i_over_d": Mistake("rope_inv_freq", I_OVER_D, _inv_freq("i_over_d")),
    "inv_freq_not_inverted": Mistake(
        "rope_inv_freq", "these are base^(2i/d); the frequencies are their inverses, 1 / base^(2i/d)",
        _inv_freq("not_inverted")),
    "cos_sin_interleaved": Mistake("rope_cos_sin", LAYOUT_MIX, _cos_sin("interleaved")),
    "cos_sin_i_over_d": Mistake("rope_cos_sin", I_OVER_D, _cos_sin("i_over_d")),
    "rotate_half_sign": Mistake("rotate_half", SIGN, _rotate_half("sign")),
    "rotate_half_no_minus": Mistake(
        "rotate_half", "the minus sign is missing: rotate_half(x) = cat(-x2, x1), without it the map is no rotation",
        _rotate_half("no_minus")),
    "rotate_half_neighbours": Mistake(
        "rotate_half", "that rotates neighbouring pairs (2i, 2i+1), GPT-J's rotate_every_two (interleaved layout); "
        "rotate_half pairs the two halves: cat(-x2, x1)", _rotate_half("neighbours")),
    "apply_sign": Mistake(
        "apply_rope", "the rotation turns the wrong way (-m·theta): out = x * cos + rotate_half(x) * sin, plus, not "
        "minus; if your formula has the plus, your rotate_half has its minus sign on the wrong half (its own "
        "self-check says so)", _apply("sign")),
    "apply_rotate_half_no_minus": Mistake(
        "apply_rope", "the rotation inside is not a rotation: rotate_half(x) must be cat(-x2, x1), and this one "
        "has no minus sign. If you call your rotate_half, fix it first (its own self-check says so)",
        _apply("rotate_half_no_minus")),
    "apply_rotate_half_neighbours": Mistake(
        "apply_rope", "the rotation pairs neighbouring coordinates (2i, 2i+1), the interleaved layout, while the "
        "tables are for the half layout: rotate_half must be cat(-x2, x1) on the two halves. If you call your "
        "rotate_half, fix it first", _apply("rotate_half_neighbours")),
    "apply_no_cast": Mistake(
        "apply_rope", "cos and sin are float32 and were not cast to x.dtype, so the output was promoted to float32: "
        "cast them with cos.to(x.dtype) before multiplying", _apply("no_cast")),
    "interleaved_half_layout": Mistake(
        "apply_rope_interleaved", "that is the half layout (planes i, i + d/2); the interleaved layout rotates "
        "neighbouring pairs (2i, 2i+1) as complex numbers x_2i + i·x_2i+1", _interleaved("half_layout")),
    "interleaved_layout_mix": Mistake(
        "apply_rope_interleaved", "layout mismatch: the tables pair neighbours (repeat_interleave) but rotate_half "
        "pairs i with i + d/2, so the blocks are not rotations. Rotate the neighbouring pairs (2i, 2i+1) themselves, "
        "as complex numbers x_2i + i·x_2i+1", _interleaved("layout_mix")),
    "interleaved_conjugate": Mistake(
        "apply_rope_interleaved", "the rotation turns the wrong way: multiply by e^(+i·p·theta), "
        "torch.polar(ones, +angles)", _interleaved("conjugate")),
    "interleaved_i_over_d": Mistake("apply_rope_interleaved", I_OVER_D, _interleaved("i_over_d")),
    "perm_inverse": Mistake(
        "interleaved_to_half_perm", "that is the inverse permutation (half to interleaved); x[..., perm] must put "
        "x[2i] at position i and x[2i+1] at i + d/2: perm = [0, 2, 4, ..., 1, 3, 5, ...]", _perm_inverse),
    "attn_layout_mix": Mistake("RoPEAttention", "layout mismatch: " + LAYOUT_MIX, _attention("layout_mix")),
    "attn_sign": Mistake("RoPEAttention", SIGN, _attention("sign")),
    "attn_i_over_d": Mistake("RoPEAttention", "in the RoPE frequencies, " + I_OVER_D, _attention("i_over_d")),
    "attn_rotates_v": Mistake(
        "RoPEAttention", "the values are rotated too: RoPE rotates only q and k (after the projections); "
        "rotating v carries each key's absolute position into the output", _attention("rotates_v")),
    "attn_k_not_rotated": Mistake(
        "RoPEAttention", "the keys are not rotated: apply RoPE to k as well as q, or the score depends on the "
        "query's absolute position instead of m - n", _attention("k_not_rotated")),
    "attn_no_decode_offset": Mistake(
        "RoPEAttention", "positions are not offset when decoding: with a cache of `past` tokens the new tokens sit at "
        "positions past, past + 1, ...; yours restart at 0", _attention("no_decode_offset")),
    "attn_top_left_causal": Mistake(
        "RoPEAttention", "with a cache, is_causal=True aligns the queries to the start of the keys; they sit at the "
        "end (query i at k_len - q_len + i): pass attn_mask=torch.ones(L, K, dtype=torch.bool).tril(K - L)",
        _attention("top_left_causal")),
    "attn_causal_flipped": Mistake(
        "RoPEAttention", "the causal mask points the wrong way: each query sees the keys after it instead of those "
        "before it. True (may attend) belongs where j <= K - L + i: torch.ones(L, K, dtype=torch.bool).tril(K - L)",
        _attention("causal_flipped")),
    "attn_float_mask": Mistake(
        "RoPEAttention", "the mask is a float tensor of ones and zeros: SDPA adds a float mask to the scores, so "
        "nothing is masked and each query also sees the keys after it. Build it with dtype=torch.bool (True = may "
        "attend)", _attention("float_mask")),
    "attn_inv_freq_cast_by_to": Mistake(
        "RoPEAttention", "the frequencies come from a floating buffer, and module.to(torch.bfloat16) (or float16) "
        "rounded it to half precision, as it does in transformers' rotary embeddings: at positions in the hundreds "
        "and thousands the angles are off by hundredths to tenths of a radian, and upcasting does not bring the "
        "lost digits back. Compute the frequencies in forward, in "
        "float32 on x.device, as rope_cos_sin does (it costs next to nothing)", _attention("inv_freq_buffer")),
    "attn_angles_in_input_dtype": Mistake(
        "RoPEAttention", "cos/sin were built in the input's dtype: positions and angles lose their precision in "
        "half precision (bfloat16 cannot even count past 256). Compute angles in float32, then cast cos and sin "
        "to x.dtype", _attention("angles_in_input_dtype")),
}
