"""Chapter 3, as a learner might finish it: correct, but written independently of the reference
(its own input checks, the direct Shaw form in float64 with einsum, the efficient form with
advanced indexing for the key term and a flat index_add for the value term, T5 buckets with the
distance clamped before the float32 logarithm, ALiBi slopes as exp2 of float64 exponents)."""

import math

import torch
from torch import nn


def _require_int(name, value, smallest):
    if isinstance(value, bool) or int(value) != value or value < smallest:
        raise ValueError(f"{name} must be an integer >= {smallest} (got {name}={value})")
    return int(value)


def relative_positions(q_len, k_len, device=None):
    q_len = _require_int("q_len", q_len, 1)
    k_len = _require_int("k_len", k_len, 1)
    offset = k_len - q_len  # position of query 0 when the queries are the last q_len tokens
    keys = torch.arange(k_len, device=device, dtype=torch.long)
    queries = torch.arange(offset, offset + q_len, device=device, dtype=torch.long)
    return keys.unsqueeze(0) - queries.unsqueeze(1)  # (q_len, k_len): j - i


# ---- Shaw et al. (2018) ----------------------------------------------------------------------------
def _validate_shaw(q, k, v, rel_k, rel_v, max_distance):
    if isinstance(max_distance, bool) or int(max_distance) != max_distance or max_distance < 0:
        raise ValueError(f"max_distance must be a non-negative integer (got max_distance={max_distance})")
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"q, k, v must be (batch, heads, seq, head_dim); got shapes "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    d = q.shape[-1]
    if k.shape[-1] != d or v.shape[-1] != d:
        raise ValueError(f"q, k and v must share head_dim={d}; got k: {k.shape[-1]}, v: {v.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k has {k.shape[-2]} keys but v has {v.shape[-2]}")
    rows = 2 * int(max_distance) + 1
    if tuple(rel_k.shape) != (rows, d):
        raise ValueError(f"rel_k must be (2 * max_distance + 1, head_dim) = ({rows}, {d}), "
                         f"got rel_k.shape={tuple(rel_k.shape)}")
    if tuple(rel_v.shape) != (rows, d):
        raise ValueError(f"rel_v must be (2 * max_distance + 1, head_dim) = ({rows}, {d}), "
                         f"got rel_v.shape={tuple(rel_v.shape)}")
    return int(max_distance)


def _table_rows(q_len, k_len, max_distance, device):
    """(Lq, Lk) row index c_ij = clip(j - i, -K, K) + K, and the (Lq, Lk) bool 'key is in the future'."""
    rel = relative_positions(q_len, k_len, device=device)
    return rel.clamp(-max_distance, max_distance) + max_distance, rel > 0


def shaw_attention_direct(q, k, v, rel_k, rel_v, max_distance, causal=False):
    K = _validate_shaw(q, k, v, rel_k, rel_v, max_distance)
    q_len, k_len, d = q.shape[-2], k.shape[-2], q.shape[-1]
    rows, future = _table_rows(q_len, k_len, K, q.device)
    wide = torch.float64
    q64, k64, v64 = q.to(wide), k.to(wide), v.to(wide)
    a_k = rel_k.to(wide)[rows]  # (Lq, Lk, d)
    a_v = rel_v.to(wide)[rows]  # (Lq, Lk, d)
    # e_ij = q_i . (k_j + a^K_ij) / sqrt(d), written as a broadcast over (B, H, Lq, Lk, d)
    keys_plus = k64.unsqueeze(-3) + a_k  # (B, H, Lq, Lk, d)
    logits = (q64.unsqueeze(-2) * keys_plus).sum(-1) / math.sqrt(d)  # (B, H, Lq, Lk)
    if causal:
        logits = logits.masked_fill(future, -math.inf)
    alpha = torch.softmax(logits, dim=-1)
    values_plus = v64.unsqueeze(-3) + a_v  # (B, H, Lq, Lk, d)
    out = (alpha.unsqueeze(-1) * values_plus).sum(-2)  # (B, H, Lq, d)
    return out.to(q.dtype)


def shaw_attention(q, k, v, rel_k, rel_v, max_distance, causal=False):
    K = _validate_shaw(q, k, v, rel_k, rel_v, max_distance)
    q_len, k_len, d = q.shape[-2], k.shape[-2], q.shape[-1]
    n_rows = 2 * K + 1
    dev = q.device
    rows, future = _table_rows(q_len, k_len, K, dev)  # (Lq, Lk)
    # float32 for half types, otherwise the input's own precision
    work = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    qw, kw, vw = q.to(work), k.to(work), v.to(work)
    tk, tv = rel_k.to(work), rel_v.to(work)
    scale = 1.0 / math.sqrt(d)

    # key term: q_i . w^K_r for the 2K+1 rows r only, then pick r = c_ij by advanced indexing
    per_row = torch.matmul(qw, tk.transpose(0, 1))  # (B, H, Lq, 2K+1)
    query_index = torch.arange(q_len, device=dev).unsqueeze(1)  # (Lq, 1), broadcast against rows (Lq, Lk)
    rel_logits = per_row[..., query_index, rows]  # (B, H, Lq, Lk)
    logits = (torch.matmul(qw, kw.transpose(-1, -2)) + rel_logits) * scale
    if causal:
        logits = logits.masked_fill(future, -math.inf)
    alpha = torch.softmax(logits, dim=-1)  # (B, H, Lq, Lk)

    content = torch.matmul(alpha, vw)  # (B, H, Lq, d)
    # value term: S[b, h, i, r] = sum of alpha_ij over the keys j with c_ij = r, as one flat index_add
    flat_slot = (torch.arange(q_len, device=dev).unsqueeze(1) * n_rows + rows).reshape(-1)  # (Lq*Lk,)
    lead = alpha.shape[:-2]
    S = torch.zeros(*lead, q_len * n_rows, device=dev, dtype=work)
    S = S.index_add(-1, flat_slot, alpha.reshape(*lead, q_len * k_len))
    S = S.reshape(*lead, q_len, n_rows)  # (B, H, Lq, 2K+1)
    positional = torch.matmul(S, tv)  # (B, H, Lq, d)
    return (content + positional).to(q.dtype)


# ---- learned bias per head ------------------------------------------------------------------------
class RelativePositionBias(nn.Module):
    def __init__(self, num_heads, max_distance):
        super().__init__()
        if isinstance(num_heads, bool) or int(num_heads) != num_heads or num_heads <= 0:
            raise ValueError(f"num_heads must be a positive integer (got num_heads={num_heads})")
        if isinstance(max_distance, bool) or int(max_distance) != max_distance or max_distance < 0:
            raise ValueError(f"max_distance must be a non-negative integer (got max_distance={max_distance})")
        self.num_heads = int(num_heads)
        self.max_distance = int(max_distance)
        self.bias = nn.Embedding(2 * self.max_distance + 1, self.num_heads)
        with torch.no_grad():
            nn.init.trunc_normal_(self.bias.weight, std=0.02)

    def forward(self, q_len, k_len):
        table = self.bias.weight  # (2K+1, H)
        K = self.max_distance
        rel = relative_positions(q_len, k_len, device=table.device)
        rows = torch.clamp(rel, min=-K, max=K) + K  # (Lq, Lk)
        per_pair = self.bias(rows)  # (Lq, Lk, H)
        return per_pair.permute(2, 0, 1).unsqueeze(0)  # (1, H, Lq, Lk)


# ---- T5 buckets -----------------------------------------------------------------------------------
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    rel = relative_position.long()
    if bidirectional:
        per_side = num_buckets // 2
        n = rel.abs()
        offset = torch.where(rel > 0, torch.full_like(rel, per_side), torch.zeros_like(rel))
    else:
        per_side = num_buckets
        n = torch.clamp(-rel, min=0)  # keys after the query all land in bucket 0
        offset = torch.zeros_like(rel)
    exact = per_side // 2
    # log-spaced part; the distance is clamped to at least `exact` so the log never sees 0
    # (those entries are replaced by the exact branch anyway). float32 and truncation, as T5 does.
    far = torch.clamp(n, min=exact).to(torch.float32)
    scaled = torch.log(far / exact) / math.log(max_distance / exact) * (per_side - exact)
    log_bucket = torch.clamp(exact + scaled.to(torch.long), max=per_side - 1)
    return offset + torch.where(n < exact, n, log_bucket)


# ---- ALiBi ----------------------------------------------------------------------------------------
def alibi_slopes(num_heads, device=None):
    if isinstance(num_heads, bool) or int(num_heads) != num_heads or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive integer (got num_heads={num_heads})")
    n = int(num_heads)
    c = 1 << (n.bit_length() - 1)  # largest power of two <= n
    # the c-head sequence: 2^(-8h/c), h = 1..c
    exponents = [-8.0 * h / c for h in range(1, c + 1)]
    # the 2c-head sequence is 2^(-4h/c); its entries 0, 2, 4, ... are h = 1, 3, 5, ...: the odd multiples
    for extra in range(n - c):
        exponents.append(-4.0 * (2 * extra + 1) / c)
    exps = torch.tensor(exponents, dtype=torch.float64, device=device)
    return torch.exp2(exps).to(torch.float32)


def alibi_bias(num_heads, q_len, k_len, device=None):
    slopes = alibi_slopes(num_heads, device=device)  # (H,)
    distance = relative_positions(q_len, k_len, device=device).abs().to(torch.float32)  # (Lq, Lk)
    return -(slopes.view(1, -1, 1, 1) * distance.unsqueeze(0).unsqueeze(0))  # (1, H, Lq, Lk)
