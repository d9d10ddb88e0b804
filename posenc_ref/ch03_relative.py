"""Generated from chapters/03_relative.py by `python -m grader build`. Do not edit: edit the chapter."""

import math

import torch
from torch import nn


def relative_positions(q_len, k_len, device=None):
    """R[i, j] = j - (k_len - q_len + i): key position minus query position, queries aligned to the end.
    Returns a (q_len, k_len) int64 tensor."""
    # Hint: query positions are k_len - q_len, ..., k_len - 1; key positions 0, ..., k_len - 1.
    #       Build both with torch.arange(..., device=device) and subtract with broadcasting.
    if q_len <= 0:
        raise ValueError(f"q_len must be positive, got q_len={q_len}")
    if k_len <= 0:
        raise ValueError(f"k_len must be positive, got k_len={k_len}")
    query_pos = torch.arange(k_len - q_len, k_len, device=device)  # (Lq,)
    key_pos = torch.arange(k_len, device=device)  # (Lk,)
    # R_ij = j - i
    return key_pos[None, :] - query_pos[:, None]  # (Lq, Lk)


def check_shaw_inputs(q, rel_k, rel_v, max_distance):
    """Raise ValueError unless rel_k and rel_v are (2K+1, head_dim) tables and K = max_distance >= 0."""
    if max_distance < 0:
        raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
    rows, head_dim = 2 * max_distance + 1, q.shape[-1]
    for name, table in (("rel_k", rel_k), ("rel_v", rel_v)):
        if tuple(table.shape) != (rows, head_dim):
            raise ValueError(f"{name} must have shape (2 * max_distance + 1, head_dim) = ({rows}, {head_dim}), "
                             f"got {name}.shape={tuple(table.shape)}")


def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018), written directly: materialises (B, H, Lq, Lk, d) for both relative terms.
    e_ij = q_i·(k_j + a^K_ij)/sqrt(d), z_i = sum_j alpha_ij (v_j + a^V_ij), a_ij = w[clip(j-i, -K, K) + K]."""
    # Hint: idx = clip(relative_positions(Lq, Lk, device=q.device), -K, K) + K, then a_k = rel_k[idx]
    #       (Lq, Lk, d). Relative logits: (q.unsqueeze(-2) * a_k).sum(-1); relative output:
    #       (attn.unsqueeze(-1) * a_v).sum(-2). Mask with -inf before the softmax when causal.
    check_shaw_inputs(q, rel_k, rel_v, max_distance)
    rel = relative_positions(q.shape[-2], k.shape[-2], device=q.device)  # (Lq, Lk)
    idx = rel.clamp(-max_distance, max_distance) + max_distance  # (Lq, Lk) rows of the tables
    a_k, a_v = rel_k[idx], rel_v[idx]  # (Lq, Lk, d) each
    # e_ij = (q_i·k_j + q_i·a^K_ij) / sqrt(d)
    scores = q @ k.transpose(-2, -1) + (q.unsqueeze(-2) * a_k).sum(-1)  # (B, H, Lq, Lk) via (B, H, Lq, Lk, d)
    scores = scores / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(rel > 0, float("-inf"))  # no key after the query
    attn = scores.softmax(dim=-1)  # (B, H, Lq, Lk)
    # z_i = sum_j alpha_ij v_j + sum_j alpha_ij a^V_ij
    return attn @ v + (attn.unsqueeze(-1) * a_v).sum(-2)  # (B, H, Lq, d) via (B, H, Lq, Lk, d)


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018) without materialising (B, H, Lq, Lk, d).

    q·a^K_ij = (q @ rel_k^T)[..., i, c_ij]  (gather from (B, H, Lq, 2K+1));
    sum_j alpha_ij a^V_ij = S @ rel_v with S[..., i, r] = sum over {j: c_ij = r} of alpha_ij  (scatter_add)."""
    # Hint: the same idx as before, expanded to (B, H, Lq, Lk). Keys: (q @ rel_k.T).gather(-1, idx).
    #       Values: attn.new_zeros(B, H, Lq, 2K+1).scatter_add_(-1, idx, attn), then @ rel_v.
    check_shaw_inputs(q, rel_k, rel_v, max_distance)
    batch, heads, q_len, head_dim = q.shape
    k_len = k.shape[-2]
    rel = relative_positions(q_len, k_len, device=q.device)  # (Lq, Lk)
    idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, k_len)  # view
    # q_i·a^K_ij = (q_i·w^K_r) at r = c_ij
    rel_logits = (q @ rel_k.transpose(0, 1)).gather(-1, idx)  # (B, H, Lq, 2K+1) -> (B, H, Lq, Lk)
    scores = (q @ k.transpose(-2, -1) + rel_logits) / math.sqrt(head_dim)  # both terms / sqrt(d)
    if causal:
        scores = scores.masked_fill(rel > 0, float("-inf"))  # no key after the query
    attn = scores.softmax(dim=-1)  # (B, H, Lq, Lk)
    # S[..., i, r] = sum of alpha_ij over the keys j that read row r
    per_row = attn.new_zeros(batch, heads, q_len, 2 * max_distance + 1).scatter_add_(-1, idx, attn)
    return attn @ v + per_row @ rel_v  # (B, H, Lq, d)


class RelativePositionBias(nn.Module):
    """Learned bias per head and clipped distance: out[0, h, i, j] = bias[clip(j - i, -K, K) + K, h]."""

    def __init__(self, num_heads, max_distance):
        super().__init__()
        # Hint: validate, keep max_distance, create self.bias = nn.Embedding(2 * max_distance + 1, num_heads)
        #       and initialise its weight with nn.init.trunc_normal_(..., std=0.02).
        if num_heads <= 0:
            raise ValueError(f"num_heads must be positive, got num_heads={num_heads}")
        if max_distance < 0:
            raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)  # (2K+1, H)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        # Hint: relative_positions on self.bias.weight.device, clip and shift by K, look up (Lq, Lk, H),
        #       then permute to (H, Lq, Lk) and add the leading batch dimension.
        K = self.max_distance
        rel = relative_positions(q_len, k_len, device=self.bias.weight.device)  # (Lq, Lk)
        values = self.bias(rel.clamp(-K, K) + K)  # (Lq, Lk, H)
        return values.permute(2, 0, 1).unsqueeze(0)  # (1, H, Lq, Lk)


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's bucket of each relative position r = j - i: exact below num_buckets/2 (per direction),
    log-spaced up to max_distance, one bucket beyond. Returns int64, same shape as the input."""
    # Hint: first the direction: bidirectional -> half the buckets, offset for r > 0, n = |r|;
    #       causal -> n = max(-r, 0). Then n < max_exact keeps n; otherwise the float32 log formula,
    #       truncated with .long() and capped at num_buckets - 1.
    r = relative_position
    if bidirectional:
        num_buckets //= 2
        offset = (r > 0).long() * num_buckets  # keys after the query use the upper half
        n = r.abs()
    else:
        offset = torch.zeros_like(r, dtype=torch.long)
        n = (-r).clamp(min=0)  # max(i - j, 0): future keys fall into bucket 0
    max_exact = num_buckets // 2
    # max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (N - max_exact)), n >= max_exact
    log_ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = (max_exact + (log_ratio * (num_buckets - max_exact)).long()).clamp(max=num_buckets - 1)
    return offset + torch.where(n < max_exact, n, large)


def alibi_slopes(num_heads, device=None):
    """Press et al. (2022): c = 2^floor(log2 n) heads get 2^(-8h/c), h = 1..c; the other n - c heads get
    the odd powers of 2^(-8/(2c)), i.e. slopes(2c)[0::2][:n - c]. float32, shape (num_heads,)."""
    # Hint: write geometric(c, powers) = start ** powers with start = 2^(-8/c) as a float32 tensor;
    #       c = 2 ** (num_heads.bit_length() - 1). Concatenate the extra heads when c < num_heads.
    if num_heads <= 0:
        raise ValueError(f"num_heads must be positive, got num_heads={num_heads}")

    def geometric(c, powers):
        # m = start^p, start = 2^(-8/c), computed in float32 as BLOOM does
        start = torch.tensor(2.0 ** (-8.0 / c), dtype=torch.float32, device=device)
        return start ** powers

    c = 1 << (num_heads.bit_length() - 1)  # largest power of two <= num_heads
    slopes = geometric(c, torch.arange(1, c + 1, device=device))  # (c,)
    if c < num_heads:
        # every other slope of the 2c-head sequence: powers 1, 3, 5, ...
        extra = geometric(2 * c, torch.arange(1, 2 * (num_heads - c), 2, device=device))  # (n - c,)
        slopes = torch.cat([slopes, extra])
    return slopes  # (n,)


def alibi_bias(num_heads, q_len, k_len, device=None):
    """b[0, h, i, j] = -m_h * |j - i|, queries aligned to the end. Shape (1, H, q_len, k_len), float32."""
    # Hint: slopes (H,) and |relative_positions| (Lq, Lk), both on `device`; multiply with broadcasting.
    slopes = alibi_slopes(num_heads, device=device)  # (H,)
    distance = relative_positions(q_len, k_len, device=device).abs()  # (Lq, Lk)
    # b_ij = -m_h |j - i|
    return -(slopes[:, None, None] * distance).unsqueeze(0)  # (1, H, Lq, Lk)
