"""Chapter 4 probes: RoPE applied with tables built here, a property test fed candidate RoPEs, and
RoPEAttention loaded from a seeded state_dict (full forward, and decoding with its KV cache).

Candidates are the rope functions a learner's `check_relative_property(rope_fn, head_dim)` is asked
to judge. Those here ship with the course and feed the self-check: one of each kind of mistake a
property test makes (too strict; too lax: norms only, too few positions, no check that the position
is used at all, a loose tolerance). The grader keeps others of the same kinds (hidden probes) in a
`CANDIDATES` registry of its own, which `probes.catalog` merges in for the grader only. Each takes
x (..., seq, head_dim) and position_ids (seq,) or (batch, seq) and returns a tensor shaped like x.

The probe is one path for both: in the learner's kernel it runs their test on the functions of `table`; in the
grader's sandbox `table` holds opaque callables instead, named by tokens drawn for the request, whose values
the grader computes in its own process (grader/sandbox/runtime/candidate_calls.py, grader/candidates.py).
"""

from __future__ import annotations

import math

import torch
from torch import nn

try:
    from .probes_base import _dtype, _get, _pack, _skip_without, build, registry, uses_candidates
except ImportError:  # in the sandbox these files sit flat in one folder
    from probes_base import _dtype, _get, _pack, _skip_without, build, registry, uses_candidates

PROBES, probe = registry()

CANDIDATES, candidate = registry()  # the public candidates; the grader's hidden ones are in a registry of its own


# ----------------------------------------------------------------------------------------------
# candidate rope functions (public)
# ----------------------------------------------------------------------------------------------
def plane_angles(x, position_ids, theta):
    """angle[..., p, i] = position * theta_i in float32, shaped to broadcast against x (B, H, L, D)."""
    angles = position_ids.to(x.device)[..., None].float() * theta.to(x.device)  # (L, n) or (B, L, n)
    return angles[:, None] if angles.dim() == 3 else angles  # (B, 1, L, n): shared by the heads


def rotate_neighbours(x, angles):
    """Rotate the planes (x_2i, x_2i+1) by angles (..., n); coordinates past 2n pass through."""
    n = angles.shape[-1]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0:2 * n:2], x[..., 1:2 * n:2]
    rotated = torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)
    return torch.cat((rotated, x[..., 2 * n:]), dim=-1)


@candidate
def rope_other_frequencies(x, position_ids):
    """Correct: neighbouring planes with frequencies 2^-i instead of a power of a base."""
    theta = 0.5 ** torch.arange(x.shape[-1] // 2, dtype=torch.float32)
    return rotate_neighbours(x, plane_angles(x, position_ids, theta))


@candidate
def rope_reversed_shifted_partial(x, position_ids):
    """Correct: turns the other way (angle -(m + 3) theta), counts positions from 3, and leaves the last
    quarter of the head unrotated (frequencies over the rotated width R)."""
    rotary = (x.shape[-1] - x.shape[-1] // 4) // 2 * 2
    theta = 1.0 / 10000.0 ** (torch.arange(0, rotary, 2, dtype=torch.float32) / rotary)
    return rotate_neighbours(x, -plane_angles(x, position_ids + 3, theta))


@candidate
def rope_layout_mix(x, position_ids):
    """Broken: half-layout rotate_half with tables repeated for the interleaved layout."""
    d = x.shape[-1]
    angles = plane_angles(x, position_ids, 1.0 / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    cos = angles.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    sin = angles.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    return x * cos + torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1) * sin


def _ladder(x):
    return 1.0 / 10000.0 ** (torch.arange(0, x.shape[-1], 2, dtype=torch.float32) / x.shape[-1])


@candidate
def rope_angle_not_affine(x, position_ids):
    """Broken: the angle grows like (m + m^2/500) theta. Every vector keeps its length, yet scores
    depend on where the two tokens are, not only on their distance."""
    m = position_ids.float()
    return rotate_neighbours(x, plane_angles(x, m + m * m / 500, _ladder(x)))


@candidate
def rope_clipped_at_160(x, position_ids):
    """Broken: positions clipped at 160 (a table of 160 rows): relative below 160 only."""
    return rotate_neighbours(x, plane_angles(x, position_ids.clamp(max=160), _ladder(x)))


@candidate
def rope_same_rotation_everywhere(x, position_ids):
    """Broken, a no-op in disguise: every token is rotated as if it sat at position 11. Lengths are kept
    and every score is the same at every distance, because the position is never used."""
    return rotate_neighbours(x, plane_angles(x, torch.full_like(position_ids, 11), _ladder(x)))


@candidate
def rope_shrinks_by_0_9(x, position_ids):
    """Broken: cos and sin multiplied by 0.9: scores stay relative but every vector shrinks by 10%."""
    return 0.9 * rotate_neighbours(x, plane_angles(x, position_ids, _ladder(x)))


def _verdict(value):
    """A Python bool from the learner's answer, or None when it is not one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value)
    if type(value).__name__ == "bool_":  # numpy
        return bool(value)
    return None


def verdicts_of(test, table, candidates, head_dim):
    """A learner's property test run on each named candidate of `table` (functions, or in the sandbox the grader's
    callables): {name: True/False} or {name + ':error': why} (chapter 4's rope functions, chapter 8's 2-D ones)."""
    result = {}
    for name in candidates:
        try:
            value = test(table[name], head_dim)
        except NotImplementedError:
            raise
        except Exception as exc:  # the learner's test may fail on a candidate: report it, go on
            result[f"{name}:error"] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        verdict = _verdict(value)
        if verdict is None:
            result[f"{name}:error"] = f"returned {type(value).__name__} {str(value)[:60]}, not True or False"
        else:
            result[name] = verdict
    return result


@probe
@uses_candidates("CANDIDATES")
def relative_property(ns, exercise, candidates, head_dim, table=CANDIDATES):
    """The learner's property test on each candidate of `table` (probes.catalog merges the hidden ones in; the
    sandbox's child passes the grader's callables): {name: True/False} or {name + ':error': why}."""
    return verdicts_of(_get(ns, exercise), table, candidates, head_dim)


# ----------------------------------------------------------------------------------------------
# apply_rope with tables made of given angles
# ----------------------------------------------------------------------------------------------
@probe
def rope_apply(ns, exercise, x, angles, device=None, dtype=None):
    """fn(x, cos, sin) with half-layout tables cat(a, a) of float32 angles a (seq, R/2) or (batch, seq, R/2)."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    fn = _get(ns, exercise)
    x = build(x, device, _dtype(dtype))
    a = build(angles, device)  # float32
    emb = torch.cat((a, a), dim=-1)
    return _pack({}, "out", fn(x, emb.cos(), emb.sin()))


# ----------------------------------------------------------------------------------------------
# RoPEAttention
# ----------------------------------------------------------------------------------------------
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


def _attention(ns, exercise, d_model, num_heads, base, seed, device, dtype):
    """The learner's module with the four projections loaded from a seeded state_dict."""
    cls = _get(ns, exercise)
    module = cls(d_model, num_heads) if base is None else cls(d_model, num_heads, base=base)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{exercise}(...) built a {type(module).__name__}, not an nn.Module")
    gen = torch.Generator().manual_seed(seed)
    # W ~ N(0, 1/d): activations and scores of order one, well conditioned even in half precision
    state = {f"{name}.weight": torch.randn(d_model, d_model, generator=gen) / math.sqrt(d_model)
             for name in PROJECTIONS}
    params = dict(module.named_parameters())
    missing = [key for key in state if key not in params]
    if missing:
        raise ValueError(f"the module has no parameter {missing[0]!r}: name the layers q_proj, k_proj, v_proj, o_proj")
    extra = sorted(key for key, p in params.items() if key not in state and p.requires_grad)
    if extra:
        raise ValueError(f"unexpected trainable parameters {extra[:3]}: the projections are "
                         "nn.Linear(d_model, d_model, bias=False) and RoPE itself learns nothing")
    module.load_state_dict(state, strict=False)
    module.eval()
    if device is not None or dtype is not None:
        module = module.to(device=device, dtype=_dtype(dtype))
    return module


def _forward(module, x, position_ids=None, causal=None, kv_cache=None):
    kwargs = {key: value for key, value in (("position_ids", position_ids), ("causal", causal), ("kv_cache", kv_cache))
              if value is not None}
    result = module(x, **kwargs)
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and isinstance(result[1], (tuple, list))
            and len(result[1]) == 2):
        raise TypeError(f"forward returned a {type(result).__name__}; it must return (out, (k, v))")
    return result[0], tuple(result[1])


def _positions(spec, device):
    if spec is None:
        return None
    return (torch.tensor(spec) if isinstance(spec, list) else build(spec)).to(device or "cpu")


@probe
def rope_attention(ns, exercise, d_model, num_heads, x, base=None, position_ids=None, causal=None,
                   device=None, dtype=None, seed=0):
    """One forward pass: the output and the returned cache (rotated keys, values)."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _attention(ns, exercise, d_model, num_heads, base, seed, device, dtype)
    with torch.no_grad():
        out, (k, v) = _forward(module, build(x, device, _dtype(dtype)),
                               _positions(position_ids, device), causal)
    result = _pack({}, "out", out)
    _pack(result, "k", k)
    return _pack(result, "v", v)


@probe
def rope_attention_decode(ns, exercise, d_model, num_heads, x, prefix, chunk=1, base=None, explicit_positions=False,
                          device=None, dtype=None, seed=0):
    """The full causal forward pass, then the same sequence fed as a prefix and chunks with the cache."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _attention(ns, exercise, d_model, num_heads, base, seed, device, dtype)
    x = build(x, device, _dtype(dtype))
    seq = x.shape[1]
    with torch.no_grad():
        full, _ = _forward(module, x)
        outs, cache, start = [], None, 0
        while start < seq:
            end = min(seq, start + (prefix if start == 0 else chunk))
            positions = torch.arange(start, end, device=x.device) if explicit_positions else None
            out, cache = _forward(module, x[:, start:end], positions, kv_cache=cache)
            outs.append(out)
            start = end
    result = _pack({}, "full", full)
    _pack(result, "out", torch.cat(outs, dim=1))
    _pack(result, "k", cache[0])
    return _pack(result, "v", cache[1])
