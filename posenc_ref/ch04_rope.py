"""Generated from course/04_rope/chapter.py by `python -m grader build`: edit the chapter."""

# from course/04_rope/chapter.py#py-e1cd6830
import torch
import torch.nn.functional as F
from torch import nn


# from course/04_rope/chapter.py#py-2cd9d7d5
def rope_inv_freq(head_dim, base=10000.0, device=None):
    """theta_i = 1 / base^(2i/d), i = 0 .. d/2 - 1, float32. Returns (head_dim/2,)."""
    # Hint: the idea: d/2 frequencies on a geometric ladder from 1 down towards 1/base.
    #       Shapes: (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    # theta_i = 1 / base^(2i/d)
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim  # (d/2,)
    return 1.0 / (base ** exponents)  # (d/2,)


# from course/04_rope/chapter.py#py-960eb836
def rope_cos_sin(position_ids, head_dim, base=10000.0):
    """cos/sin of the angles p * theta_i in the half layout cat(freqs, freqs). Each position_ids.shape + (head_dim,)."""
    # Hint: the idea: one angle p·theta_i per position and plane, written twice, once for each half of
    #       the head (half layout); then its cosine and sine.
    #       Shapes: position_ids (L,) or (B, L); angles (..., L, d/2); cos, sin (..., L, d)
    inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)  # (d/2,)
    # angle[..., p, i] = p * theta_i, in float32
    freqs = position_ids[..., None].float() * inv_freq  # (..., L, d/2)
    # coordinate i and i + d/2 share plane i's angle
    emb = torch.cat((freqs, freqs), dim=-1)  # (..., L, d)
    return emb.cos(), emb.sin()


# from course/04_rope/chapter.py#py-c720c7de
def rotate_half(x):
    """rotate_half(x) = cat(-x2, x1), where x1, x2 are the first and second halves of the last dimension."""
    # Hint: the idea: split the last axis into halves x1, x2 and return (-x2, x1).
    #       Shapes: (..., d) in and out; d must be even
    if x.shape[-1] % 2 != 0:
        raise ValueError(f"the last dimension must be even to split in halves, got size {x.shape[-1]}")
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]  # (..., d/2) each
    return torch.cat((-x2, x1), dim=-1)  # (..., d)


# from course/04_rope/chapter.py#py-f27692db
def apply_rope(x, cos, sin):
    """Half-layout RoPE: out = x * cos + rotate_half(x) * sin on the first R = cos.shape[-1] coordinates.

    x: (B, H, L, D); cos, sin: (L, R) or (B, L, R), R <= D even. Coordinates R .. D-1 pass through.
    """
    # Hint: the idea: rotate the first R = cos.shape[-1] coordinates of every head with the tables (the
    #       formula of section 4.4) and pass the other D - R through.
    #       Shapes: x (B, H, L, D); cos, sin (L, R) or (B, L, R), shared by the heads; output (B, H, L, D)
    rot = cos.shape[-1]
    if rot % 2 != 0 or rot > x.shape[-1]:
        raise ValueError(f"cos/sin width R={rot} must be even and at most head_dim={x.shape[-1]}")
    if cos.dim() not in (2, 3):
        raise ValueError(f"cos/sin must have shape (seq, R) or (batch, seq, R), got {tuple(cos.shape)}")
    # (L, R) tables line up with x's last two axes; (B, L, R) ones need a head axis: one table for every head
    cos, sin = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)  # (B, 1, L, R) or (L, R)
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    half = rot // 2
    x1, x2 = x[..., :half], x[..., half:rot]  # (B, H, L, R/2) each
    # out = x * cos + rotate_half(x) * sin, with rotate_half(x) * sin added half by half:
    #   first half += -x2 * sin,   second half += x1 * sin
    out = x * cos if rot == x.shape[-1] else torch.cat((x[..., :rot] * cos, x[..., rot:]), dim=-1)  # (B, H, L, D)
    out[..., :half].addcmul_(x2, sin[..., :half], value=-1)
    out[..., half:rot].addcmul_(x1, sin[..., half:])
    return out


# from course/04_rope/chapter.py#py-d74075ec
def apply_rope_interleaved(x, position_ids, base=10000.0):
    """Interleaved (Meta / GPT-J) RoPE: (x_2i + i x_2i+1) * e^(i p theta_i). x: (B, H, L, D) -> (B, H, L, D)."""
    # Hint: the idea: read each neighbouring pair (x_2i, x_2i+1) as one complex number, multiply it by
    #       e^(i·p·theta_i) in float32, and read the pairs back.
    #       Shapes: x (B, H, L, D); pairs (B, H, L, D/2) complex; angles (L, D/2) or (B, 1, L, D/2)
    head_dim = x.shape[-1]
    inv_freq = rope_inv_freq(head_dim, base, device=x.device)  # (d/2,)
    angles = position_ids[..., None].float() * inv_freq  # (L, d/2) or (B, L, d/2)
    if angles.dim() == 3:
        angles = angles[:, None]  # (B, 1, L, d/2): one table for every head
    # e^(i p theta_i)
    rotation = torch.polar(torch.ones_like(angles), angles)  # complex64
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2))  # (B, H, L, d/2) complex
    return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)  # (B, H, L, d)


# from course/04_rope/chapter.py#py-1dd951fb
def interleaved_to_half_perm(head_dim):
    """perm = [0, 2, ..., d-2, 1, 3, ..., d-1]: x[..., perm] moves plane (2i, 2i+1) to (i, i + d/2)."""
    # Hint: the idea: x[..., perm] must put x_2i at position i and x_2i+1 at position i + d/2.
    #       Shapes: perm (head_dim,) int64
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))  # (d,)


# from course/04_rope/chapter.py#py-d5e1d952
def check_relative_property(rope_fn, head_dim, n_positions=256, n_vectors=4, rtol=1e-3):
    """True when rope_fn(x, position_ids) keeps norms, makes <f(q, m), f(k, n)> a function of m - n, and
    actually changes with the position (a no-op keeps norms and relative scores, and encodes nothing).

    The same random q (and k) is placed at positions 0 .. P-1, so one call gives f(q, m) for every m.
    Then every score S[m, n] = <f(q, m), f(k, n)> must equal the score at the same distance measured
    from position 0: S[m - n, 0] when m >= n, S[0, n - m] otherwise. Errors are measured relative to
    |q| |k|, the largest a score can be.
    """
    # Hint: the idea: put the same random q (and k) at every position 0 .. P-1, call rope_fn once, and
    #       test the three properties of the text on the results.
    #       Shapes: q expanded to (V, 1, P, d); f(q) (V, 1, P, d); scores S (V, P, P)
    rng = torch.Generator().manual_seed(0)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)  # (V, 1, 1, d)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)
    positions = torch.arange(n_positions)  # (P,)
    fq = rope_fn(q.expand(-1, 1, n_positions, -1).contiguous(), positions)  # (V, 1, P, d): f(q, m) for every m
    fk = rope_fn(k.expand(-1, 1, n_positions, -1).contiguous(), positions)
    if not (isinstance(fq, torch.Tensor) and fq.shape == (n_vectors, 1, n_positions, head_dim)
            and fk.shape == fq.shape and torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    fq, fk = fq[:, 0].double(), fk[:, 0].double()  # (V, P, d)
    # 1. |f(x, m)| = |x|
    for x, fx in ((q, fq), (k, fk)):
        norm = x[:, 0].double().norm(dim=-1)  # (V, 1)
        if ((fx.norm(dim=-1) - norm).abs() > rtol * norm).any():
            return False
        # 3. f(x, m) moves away from f(x, 0) for some m: the position is used at all
        moved = (fx - fx[:, :1]).norm(dim=-1).amax(dim=-1, keepdim=True)  # (V, 1)
        if (moved <= rtol * norm).any():
            return False
    # 2. S[m, n] = S[m - n, 0] (m >= n) or S[0, n - m] (m < n)
    scores = fq @ fk.transpose(-1, -2)  # (V, P, P)
    delta = positions[None, :] - positions[:, None]  # (P, P): n - m
    same_distance = torch.where(delta >= 0, scores[:, 0, delta.clamp(min=0)], scores[:, (-delta).clamp(min=0), 0])
    scale = q[:, 0, 0].double().norm(dim=-1) * k[:, 0, 0].double().norm(dim=-1)  # (V,)
    return bool(((scores - same_distance).abs() <= rtol * scale[:, None, None]).all())


# from course/04_rope/chapter.py#py-ad8bfd83
class RoPEAttention(nn.Module):
    """Multi-head attention with rotary embeddings on q and k (half layout), SDPA and a KV cache.

    scores[m, n] = <R_m W_Q x_m, R_n W_K x_n> / sqrt(d_head) depends on m - n only (Su et al., 2021);
    values are not rotated. The cache keeps keys already rotated at their own positions.
    """

    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        # Hint: the idea: check the sizes, remember them, create the four projections of a Llama attention
        #       layer.
        #       Shapes: each weight (d_model, d_model); head_dim = d_model / num_heads, even
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        if (d_model // num_heads) % 2 != 0:
            raise ValueError(f"head_dim = d_model / num_heads must be even, got head_dim={d_model // num_heads}")
        self.d_model, self.num_heads, self.head_dim, self.base = d_model, num_heads, d_model // num_heads, base
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        # Hint: the idea: project, split the heads, rotate q and k at their positions, extend the cache,
        #       attend, merge the heads, project back.
        #       Shapes: x (B, L, d); q, k, v (B, H, L, d_head); cache (B, H, past, d_head); keys with the cache
        #       (B, H, K, d_head), K = past + L; output (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        batch, seq, _ = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[2]
        if position_ids is None:
            # the new tokens follow the cached ones
            position_ids = torch.arange(past, past + seq, device=x.device)  # (L,)

        def heads(t):  # (B, L, d) -> (B, H, L, d_head)
            return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)  # (L, d_head) or (B, L, d_head)
        # rotate after the projections, queries and keys only
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # (B, H, L, d_head)
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=2)  # (B, H, K, d_head), K = past + L
            v = torch.cat((kv_cache[1], v), dim=2)
        k_len = k.shape[2]
        if not causal or seq == 1:
            out = F.scaled_dot_product_attention(q, k, v)
        elif seq == k_len:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # query i sits at position k_len - seq + i (is_causal would align it to the start)
            allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)  # (L, K)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        out = out.transpose(1, 2).reshape(batch, seq, self.d_model)  # (B, L, d)
        return self.o_proj(out), (k, v)
