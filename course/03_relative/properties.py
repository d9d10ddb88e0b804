"""Chapter 3 properties: what a relative bias or relative attention must satisfy, from mathematics alone."""

from __future__ import annotations

import torch

from .messages import msg
from .probes_base import build, registry

PROPERTIES, prop = registry()


def _distances(q_len, k_len):
    """j - (k_len - q_len + i), computed here independently of any learner or reference code."""
    return torch.arange(k_len)[None, :] - torch.arange(k_len - q_len, k_len)[:, None]  # (Lq, Lk)


def _shape_problem(out, want):
    if not isinstance(out, torch.Tensor):
        return msg("expected a tensor, got {type}", type=type(out).__name__)
    if tuple(out.shape) != tuple(want):
        return msg("expected shape {expected}, got {got}", expected=str(tuple(want)), got=str(tuple(out.shape)))
    return None


@prop
def depends_only_on_distance(got, num_heads, q_len, k_len, max_distance=None, atol=1e-6):
    """out[0, h, i, j] is a function of j - i alone (equal along every diagonal) and, with clipping at
    max_distance = K, the same for every distance beyond ±K."""
    out = got.get("out")
    problem = _shape_problem(out, (1, num_heads, q_len, k_len))
    if problem:
        return False, problem
    out = out[0].double()  # (H, Lq, Lk)
    rel = _distances(q_len, k_len)
    for r in rel.unique().tolist():
        values = out[:, rel == r]  # (H, n) entries at distance r
        spread = (values.max(1).values - values.min(1).values).max().item()
        if not spread <= atol:  # NaN fails too
            return False, msg("entries at the same distance j − i = {distance} differ by up to {spread:.3g}: the "
                              "bias should depend on j − i only", distance=r, spread=spread)
    if max_distance is not None:
        for side in (1, -1):
            beyond = side * rel >= max_distance
            if beyond.sum() > 1:
                values = out[:, beyond]
                spread = (values.max(1).values - values.min(1).values).max().item()
                if not spread <= atol:  # NaN fails too
                    return False, msg("distances {relation} {limit} should all be clipped to {limit} and share one "
                                      "bias; they differ by {spread:.3g}", relation="≥" if side > 0 else "≤",
                                      limit=side * max_distance, spread=spread)
    return True, ""


@prop
def linear_distance_penalty(got, num_heads, q_len, k_len, rtol=1e-5):
    """ALiBi's shape: out[0, h, i, j] = -m_h |j - i| with one positive slope m_h per head."""
    out = got.get("out")
    problem = _shape_problem(out, (1, num_heads, q_len, k_len))
    if problem:
        return False, problem
    out = out[0].double()  # (H, Lq, Lk)
    dist = _distances(q_len, k_len).abs().double()  # (Lq, Lk)
    if (out[:, dist == 0].abs() > 1e-7).any():
        return False, msg("the bias should be 0 where j = i (no penalty for the query's own position)")
    far = dist > 0
    slopes = -out[:, far] / dist[far]  # (H, n): every entry's implied slope
    m = slopes[:, :1]  # (H, 1)
    if (m <= 0).any():
        return False, msg("every head's bias should be negative away from the diagonal: -m·|j − i| with m > 0")
    err = ((slopes - m).abs() / m).max().item()
    if err > rtol:
        return False, msg("the bias is not proportional to |j − i| within a head (relative spread {spread:.3g}): "
                          "it should be -m_h·|j − i|", spread=err)
    return True, ""


@prop
def plain_attention_without_tables(got, q, k, v, causal=False, atol=1e-5):
    """With all-zero relative tables, Shaw's attention is softmax(q kᵀ / sqrt(d) + mask) v (here in float64)."""
    q, k, v = (build(spec).double() for spec in (q, k, v))
    out = got.get("out")
    problem = _shape_problem(out, q.shape)
    if problem:
        return False, problem
    # s_ij = sum_c q_ic k_jc / sqrt(d), written with einsum
    scores = torch.einsum("bhic,bhjc->bhij", q, k) * q.shape[-1] ** -0.5  # (B, H, Lq, Lk)
    if causal:
        scores = scores.masked_fill(_distances(q.shape[-2], k.shape[-2]) > 0, float("-inf"))
    expected = scores.softmax(-1) @ v
    err = (out.double() - expected).abs().max().item()
    if not err <= atol:  # NaN fails too
        return False, msg("with rel_k = rel_v = 0 the result should be plain scaled dot-product attention; it "
                          "differs by up to {error:.3g}", error=err)
    return True, ""
