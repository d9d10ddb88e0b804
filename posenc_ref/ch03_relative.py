"""Generated from course/03_relative/chapter.py by `python -m grader build`: edit the chapter."""

# from course/03_relative/chapter.py#py-7c5fbc92
import math

import torch
from torch import nn


# from course/03_relative/chapter.py#py-f3999881
def relative_positions(q_len, k_len, device=None):
    """R[i, j] = j - (k_len - q_len + i): key position minus query position, queries aligned to the end.
    Returns a (q_len, k_len) int64 tensor."""
    # Hint: the idea: key position minus query position, the queries being the last q_len of the k_len
    #       positions.
    #       Shapes: query positions (Lq,), key positions (Lk,), the result (Lq, Lk) int64
    if q_len <= 0:
        raise ValueError(f"q_len must be positive, got q_len={q_len}")
    if k_len <= 0:
        raise ValueError(f"k_len must be positive, got k_len={k_len}")
    query_pos = torch.arange(k_len - q_len, k_len, device=device)  # (Lq,)
    key_pos = torch.arange(k_len, device=device)  # (Lk,)
    # R_ij = j - i
    return key_pos[None, :] - query_pos[:, None]  # (Lq, Lk)


# from course/03_relative/chapter.py#py-30dadcbd
def check_shaw_inputs(q, rel_k, rel_v, max_distance):
    """Raise ValueError unless rel_k and rel_v are (2K+1, head_dim) tables and K = max_distance >= 0."""
    if max_distance < 0:
        raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
    rows, head_dim = 2 * max_distance + 1, q.shape[-1]
    for name, table in (("rel_k", rel_k), ("rel_v", rel_v)):
        if tuple(table.shape) != (rows, head_dim):
            raise ValueError(f"{name} must have shape (2 * max_distance + 1, head_dim) = ({rows}, {head_dim}), "
                             f"got {name}.shape={tuple(table.shape)}")


# from course/03_relative/chapter.py#py-fac6cf40
def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018), written directly: materialises (B, H, Lq, Lk, d) for both relative terms.
    e_ij = q_i·(k_j + a^K_ij)/sqrt(d), z_i = sum_j alpha_ij (v_j + a^V_ij), a_ij = w[clip(j-i, -K, K) + K]."""
    # Hint: the idea: gather one table row per (query, key) pair from the clipped distance; add q·a^K to
    #       the logits and attn·a^V to the output.
    #       Shapes: index (Lq, Lk); a^K, a^V (Lq, Lk, d); scores, attn (B, H, Lq, Lk); output (B, H, Lq, d)
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


# from course/03_relative/chapter.py#py-556c3a43
def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    """Shaw et al. (2018) without materialising (B, H, Lq, Lk, d).

    q·a^K_ij = (q @ rel_k^T)[..., i, c_ij]  (gather from (B, H, Lq, 2K+1));
    sum_j alpha_ij a^V_ij = S @ rel_v with S[..., i, r] = sum over {j: c_ij = r} of alpha_ij  (scatter_add)."""
    # Hint: the idea: only 2K + 1 table rows exist. Score every query against the rows once and pick;
    #       sum the attention weights per row before multiplying by the value table.
    #       Shapes: q against the rows (B, H, Lq, 2K+1); index (B, H, Lq, Lk); weights per row
    #       (B, H, Lq, 2K+1). Never (B, H, Lq, Lk, d)
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


# from course/03_relative/chapter.py#py-c9c74c9d
class RelativePositionBias(nn.Module):
    """Learned bias per head and clipped distance: out[0, h, i, j] = bias[clip(j - i, -K, K) + K, h]."""

    def __init__(self, num_heads, max_distance):
        super().__init__()
        # Hint: the idea: one learned scalar per head and clipped distance: an embedding table with 2K + 1 rows
        #       and num_heads columns.
        #       Shapes: bias.weight (2K+1, H)
        if num_heads <= 0:
            raise ValueError(f"num_heads must be positive, got num_heads={num_heads}")
        if max_distance < 0:
            raise ValueError(f"max_distance must be >= 0, got max_distance={max_distance}")
        self.max_distance = max_distance
        self.bias = nn.Embedding(2 * max_distance + 1, num_heads)  # (2K+1, H)
        nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        # Hint: the idea: look up the row of every (query, key) pair's clipped distance, then put heads first.
        #       Shapes: index (Lq, Lk), looked-up rows (Lq, Lk, H), output (1, H, Lq, Lk)
        K = self.max_distance
        rel = relative_positions(q_len, k_len, device=self.bias.weight.device)  # (Lq, Lk)
        values = self.bias(rel.clamp(-K, K) + K)  # (Lq, Lk, H)
        return values.permute(2, 0, 1).unsqueeze(0)  # (1, H, Lq, Lk)


# from course/03_relative/chapter.py#py-b13ccacb
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's bucket of each relative position r = j - i: exact below num_buckets/2 (per direction),
    log-spaced up to max_distance, one bucket beyond. Returns int64, same shape as the input."""
    # Hint: the idea: reduce r = j - i to a non-negative distance n (and an offset for the direction), keep
    #       small n exact, and put larger n into log-spaced buckets up to max_distance.
    #       Shapes: the input's shape, int64 throughout
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


# from course/03_relative/chapter.py#py-6f5ef865
def alibi_slopes(num_heads, device=None):
    """Press et al. (2022): c = 2^floor(log2 n) heads get 2^(-8h/c), h = 1..c; the other n - c heads get
    the odd powers of 2^(-8/(2c)), i.e. slopes(2c)[0::2][:n - c]. float32, shape (num_heads,)."""
    # Hint: the idea: a geometric sequence for a power-of-two head count; for other counts, the slopes of
    #       the largest smaller power of two plus in-between slopes of the next one (section 3.6).
    #       Shapes: (num_heads,) float32
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


# from course/03_relative/chapter.py#py-c00012d7
def alibi_bias(num_heads, q_len, k_len, device=None):
    """b[0, h, i, j] = -m_h * |j - i|, queries aligned to the end. Shape (1, H, q_len, k_len), float32."""
    # Hint: the idea: each head's slope times the distance |j - i|, negated.
    #       Shapes: slopes (H,), distances (Lq, Lk), bias (1, H, Lq, Lk)
    slopes = alibi_slopes(num_heads, device=device)  # (H,)
    distance = relative_positions(q_len, k_len, device=device).abs()  # (Lq, Lk)
    # b_ij = -m_h |j - i|
    return -(slopes[:, None, None] * distance).unsqueeze(0)  # (1, H, Lq, Lk)
