"""Chapter 9, as a learner might finish it: correct, but written independently of the reference (the interleave as
an index permutation, MLA's rotation as DeepSeek-V3.1's even/odd slices with no permutation at all, the scale from
math.sqrt, the masks from broadcast comparisons written the other way round, Gemma's ladders from one helper, the
sink as a log-sum-exp in float64)."""

import math

import torch


def rope_interleave(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"odd last dimension d={d}")
    order = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2))).to(x.device)
    return x[..., order]


# practitioner-style: transformers 5.23's apply_rotary_pos_emb_interleave, even and odd slices rotated directly
def mla_query_key(q, k_nope, k_rot, cos, sin, past_k_rot=None):
    r = cos.shape[-1]
    n = q.shape[-1] - r
    if k_nope.shape[-1] != n:
        raise ValueError(f"k_nope has width {k_nope.shape[-1]}, expected {n}")
    c, s = cos[..., : r // 2], sin[..., : r // 2]

    def turn(t):
        even, odd = t[..., 0::2], t[..., 1::2]
        return torch.cat([even * c - odd * s, odd * c + even * s], dim=-1)

    shared = turn(k_rot)
    if past_k_rot is not None:
        shared = torch.cat([past_k_rot, shared], dim=2)
    heads = k_nope.shape[1]
    query = torch.cat([q[..., :n], turn(q[..., n:])], dim=-1)
    key = torch.cat([k_nope, shared.repeat(1, heads, 1, 1)], dim=-1)
    return query, key, shared


def mla_softmax_scale(qk_nope_head_dim, qk_rope_head_dim, v_head_dim, factor=1.0, mscale_all_dim=0.0):
    scale = 1.0 / math.sqrt(qk_nope_head_dim + qk_rope_head_dim)
    if mscale_all_dim and factor > 1:
        scale *= (1.0 + 0.1 * mscale_all_dim * math.log(factor)) ** 2
    return scale


def nope_layer_temperature(positions, floor_scale, attn_scale):
    blocks = torch.div(positions + 1, floor_scale, rounding_mode="floor").float()
    return 1.0 + attn_scale * torch.log(1.0 + blocks)


def no_rope_layers(num_hidden_layers, interval):
    if interval < 1:
        raise ValueError(f"interval={interval} must be at least 1")
    flags = [1] * num_hidden_layers
    for layer in range(interval - 1, num_hidden_layers, interval):
        flags[layer] = 0
    return flags


def chunked_causal_mask(seq_len, chunk_size, past=0):
    if chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size} must be at least 1")
    keys = torch.arange(past + seq_len)
    queries = keys[past:, None]
    same_chunk = (keys // chunk_size)[None, :] == queries // chunk_size
    return same_chunk & (queries >= keys[None, :])


def layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor):
    exponent = torch.arange(0, head_dim, 2).float() / head_dim

    def ladder(base, factor):
        return (1.0 / (base ** exponent)) / factor

    out = []
    for kind in layer_types:
        if kind == "sliding_attention":
            out.append(ladder(local_base, 1.0))
        elif kind == "full_attention":
            out.append(ladder(global_base, global_factor))
        else:
            raise ValueError(f"unknown layer type {kind!r}")
    return out


def sliding_window_mask(seq_len, window, past=0):
    if window < 1:
        raise ValueError(f"window={window} must be at least 1")
    distance = (torch.arange(past, past + seq_len)[:, None] - torch.arange(past + seq_len)[None, :])
    return (distance >= 0) & (distance < window)


def attention_with_sinks(q, k, v, sinks, mask, scaling):
    logits = torch.einsum("bhld,bhsd->bhls", q, k).double() * scaling
    if mask is not None:
        logits = torch.where(mask, logits, torch.tensor(-math.inf, dtype=logits.dtype))
    sink = sinks.double()[None, :, None, None].expand(*logits.shape[:-1], 1)
    normaliser = torch.logsumexp(torch.cat([logits, sink], dim=-1), dim=-1, keepdim=True)
    weights = torch.exp(logits - normaliser)
    return torch.einsum("bhls,bhsd->bhld", weights.to(v.dtype), v)
