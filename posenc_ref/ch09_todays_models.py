"""Generated from course/09_todays_models/chapter.py by `python -m grader build`: edit the chapter."""

# from course/09_todays_models/chapter.py#py-7ebc5c41
import math

import torch


# from course/09_todays_models/chapter.py#py-e90bb369
def rope_interleave(x):
    """DeepSeek's rotary layout: pairs (x0, x1), (x2, x3), ... -> the half layout [x0, x2, ..., x1, x3, ...] that
    rotate_half expects. x: (..., d) -> (..., d)."""
    # Hint: the idea: view the last axis as d/2 pairs, swap the pair axis with the coordinate-in-pair axis, and
    #       flatten back: the first coordinates of every pair come first, then the second ones.
    #       Shapes: x (..., d) -> (..., d/2, 2) -> (..., 2, d/2) -> (..., d)
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"the last dimension d must be even, got d={d}")
    # out[j] = x[2j], out[j + d/2] = x[2j + 1]
    return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)  # (..., d)


# from course/09_todays_models/chapter.py#py-a9570c18
def apply_rope_half(x, cos, sin):
    """Chapter 4's half-layout rotation, x·cos + rotate_half(x)·sin. x (..., L, R); cos, sin (L, R)."""
    x1, x2 = x.chunk(2, dim=-1)  # (..., L, R/2) each
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin  # (..., L, R)


# from course/09_todays_models/chapter.py#py-b3caa684
def mla_query_key(q, k_nope, k_rot, cos, sin, past_k_rot=None):
    """MLA's decoupled RoPE (DeepseekV3Attention): rotate the last R coordinates of each query head and the one
    rotary key shared by all heads (interleaved pairs -> half layout first), append the cached rotary keys, give
    every head the shared key. Returns query (B, H, L, N + R), key (B, H, S, N + R), k_rot cache (B, 1, S, R)."""
    # Hint: the idea: R = cos.shape[-1] is the rope part's width and `nope` = N the rest; split each query head
    #       there (nope first), bring the rope parts from interleaved pairs to the half layout with rope_interleave,
    #       rotate them with apply_rope_half, put the cached rotated keys in front, then concatenate.
    #       Shapes: q (B, H, L, N + R); k_nope (B, H, S, N); k_rot (B, 1, L, R); cos, sin (L, R)
    rope = cos.shape[-1]
    nope = q.shape[-1] - rope
    if k_nope.shape[-1] != nope:
        raise ValueError(f"k_nope's last size must be qk_nope_head_dim={nope}, got k_nope of shape "
                         f"{tuple(k_nope.shape)}")
    q_pass, q_rot = q[..., :nope], q[..., nope:]  # (B, H, L, N), (B, H, L, R)
    # DeepSeek's weights interleave the rotary pairs: to the half layout first
    q_rot, k_rot = rope_interleave(q_rot), rope_interleave(k_rot)  # (B, H, L, R), (B, 1, L, R)
    # x·cos + rotate_half(x)·sin: each query head, and the one key all heads share (rotated once)
    q_rot, k_rot = apply_rope_half(q_rot, cos, sin), apply_rope_half(k_rot, cos, sin)
    if past_k_rot is not None:
        # the cache holds keys rotated at their own positions: the new ones go after them
        k_rot = torch.cat((past_k_rot, k_rot), dim=-2)  # (B, 1, S, R)
    query = torch.cat((q_pass, q_rot), dim=-1)  # (B, H, L, N + R)
    # one rotary key for every head: a view (expand), never a copy per head
    key = torch.cat((k_nope, k_rot.expand(-1, k_nope.shape[1], -1, -1)), dim=-1)  # (B, H, S, N + R)
    return query, key, k_rot


# from course/09_todays_models/chapter.py#py-1c5cc00b
def mla_softmax_scale(qk_nope_head_dim, qk_rope_head_dim, v_head_dim, factor=1.0, mscale_all_dim=0.0):
    """DeepseekV3Attention.scaling: (N + R)^(-1/2), times (0.1·mscale_all_dim·ln(factor) + 1)^2 under YaRN."""
    # Hint: the idea: the softmax scale is one over the square root of the size of the dot product, the query's
    #       head: nope part plus rope part. YaRN's factor m multiplies it twice.
    #       Shapes: numbers only; return a float
    qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
    # 1/sqrt(N + R)
    scale = qk_head_dim ** -0.5
    if factor > 1 and mscale_all_dim:
        # m = 0.1·mscale_all_dim·ln(s) + 1
        mscale = 0.1 * mscale_all_dim * math.log(factor) + 1.0
        scale = scale * mscale * mscale
    return float(scale)


# from course/09_todays_models/chapter.py#py-d88c0ad9
def nope_layer_temperature(positions, floor_scale, attn_scale):
    """Llama 4's query scale on NoPE layers: 1 + attn_scale·log(1 + floor((p + 1)/floor_scale)). (L,) -> (L,)."""
    # Hint: the idea: count how many whole blocks of floor_scale tokens lie up to and including position p, take
    #       the log of one plus that count, and turn it into a factor around 1.
    #       Shapes: positions (L,) int -> (L,) float32
    # floor((p + 1) / floor_scale)
    steps = torch.floor((positions.float() + 1.0) / floor_scale)  # (L,)
    # 1 + attn_scale · log1p(steps)
    return torch.log1p(steps) * attn_scale + 1.0  # (L,)


# from course/09_todays_models/chapter.py#py-91b89a2a
def no_rope_layers(num_hidden_layers, interval):
    """Llama4TextConfig's default no_rope_layers: [int((i + 1) % interval != 0) for each layer i]; 1 = uses RoPE."""
    # Hint: the idea: layer i (from 0) is a NoPE layer when i + 1 is a multiple of the interval; every other layer
    #       uses RoPE and gets a 1.
    #       Shapes: a list of num_hidden_layers ints, each 0 or 1
    if interval <= 0:
        raise ValueError(f"interval must be positive, got interval={interval}")
    # 1 = this layer uses RoPE; 0 on layers interval - 1, 2·interval - 1, ...
    return [int((i + 1) % interval != 0) for i in range(num_hidden_layers)]


# from course/09_todays_models/chapter.py#py-bdb89f80
def chunked_causal_mask(seq_len, chunk_size, past=0):
    """Llama 4's chunked attention: query P + i may see key k iff k <= P + i and k // C == (P + i) // C.
    Returns a bool (seq_len, past + seq_len) mask, True = may attend."""
    # Hint: the idea: give each query its absolute position q = past + i and each key its position k, then keep
    #       the pairs that are causal (k <= q) and fall in the same chunk of chunk_size positions.
    #       Shapes: q (L, 1), k (1, P + L) -> mask (L, P + L) bool
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got chunk_size={chunk_size}")
    q = torch.arange(past, past + seq_len)[:, None]  # (L, 1): the queries' absolute positions
    k = torch.arange(past + seq_len)[None, :]  # (1, P + L)
    # causal, and in the same chunk: k // C == q // C
    return (k <= q) & (k // chunk_size == q // chunk_size)  # (L, P + L)


# from course/09_todays_models/chapter.py#py-51ec2eca
def layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor):
    """Gemma 3's per-layer RoPE: local_base^(-2i/d) on sliding-window layers, global_base^(-2i/d)/global_factor on
    global layers. Returns a list of (head_dim/2,) float32 tensors, one per entry of layer_types."""
    # Hint: the idea: two frequency ladders, one per layer type (a small base for the local layers, a large base
    #       divided by the linear factor for the global ones); each layer gets its type's ladder.
    #       Shapes: exponents (d/2,); each ladder (d/2,); a list of len(layer_types) of them
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim  # (d/2,): 2i/d
    # local layers: theta_i = local_base^(-2i/d)
    local = 1.0 / local_base ** exponents  # (d/2,)
    # global layers: theta_i = global_base^(-2i/d) / factor (linear scaling)
    global_ = 1.0 / global_base ** exponents / global_factor  # (d/2,)
    tables = dict(sliding_attention=local, full_attention=global_)
    unknown = [t for t in layer_types if t not in tables]
    if unknown:
        raise ValueError(f"layer type must be 'sliding_attention' or 'full_attention', got {unknown[0]!r}")
    return [tables[t] for t in layer_types]


# from course/09_todays_models/chapter.py#py-e19e373a
def sliding_window_mask(seq_len, window, past=0):
    """A causal sliding window of `window` tokens: query P + i may see key k iff P + i - window < k <= P + i.
    Returns a bool (seq_len, past + seq_len) mask, True = may attend."""
    # Hint: the idea: as the chunked mask, with absolute positions q = past + i; keep the keys that are causal and
    #       fewer than `window` positions behind the query.
    #       Shapes: q (L, 1), k (1, P + L) -> mask (L, P + L) bool
    if window <= 0:
        raise ValueError(f"window must be positive, got window={window}")
    q = torch.arange(past, past + seq_len)[:, None]  # (L, 1)
    k = torch.arange(past + seq_len)[None, :]  # (1, P + L)
    # q - window < k <= q
    return (k <= q) & (k > q - window)  # (L, P + L)


# from course/09_todays_models/chapter.py#py-8a5959ea
def attention_with_sinks(q, k, v, sinks, mask, scaling):
    """gpt-oss's eager attention: softmax over [scores, sink_h] per row, the sink's share dropped.
    q (B, H, L, D); k, v (B, H, S, D); sinks (H,); mask (L, S) bool or None -> (B, H, L, D)."""
    # Hint: the idea: the scores as usual (masked to -inf), one more column holding the head's sink logit for
    #       every query, a softmax over S + 1 columns, then drop the sink's column and weight the values.
    #       Shapes: scores (B, H, L, S); sink (B, H, L, 1); logits (B, H, L, S + 1); probs (B, H, L, S)
    # s = q·k · scaling, -inf where the mask is False
    scores = torch.matmul(q, k.transpose(-2, -1)) * scaling  # (B, H, L, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # the head's sink logit, the same for every query
    sink = sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)  # (B, H, L, 1)
    logits = torch.cat((scores, sink), dim=-1)  # (B, H, L, S + 1)
    logits = logits - logits.max(dim=-1, keepdim=True).values  # as gpt-oss: no overflow in bf16
    # softmax over keys and sink, then the sink's share dropped: rows sum to less than 1
    probs = torch.softmax(logits, dim=-1)[..., :-1]  # (B, H, L, S)
    return torch.matmul(probs.to(v.dtype), v)  # (B, H, L, D)
