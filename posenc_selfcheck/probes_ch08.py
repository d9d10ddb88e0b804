# Generated from course/08_positions_in_2d/probes.py by `python -m grader build`: edit there.
"""Chapter 8 probes: functions called with integer tensors written out as data (token kinds, grids, position
ids), rope functions applied with given tables, and a 2-D property test fed candidate rope functions.

Candidates are the functions a learner's `check_axial_property(rope_fn, head_dim)` is asked to judge: each takes
x (..., N, head_dim) and position_ids (N, 2) of (row, column) and returns a tensor shaped like x. Those here ship
with the course and feed the self-check; the grader keeps others of the same kinds (hidden probes) in a
`CANDIDATES_2D` registry of its own, which `probes.catalog` merges in for the grader only. In the grader's sandbox
the probe is handed opaque callables instead, whose values the grader computes (as chapter 4's: probes_ch04.py).
"""

from __future__ import annotations

import torch

try:
    from .probes_base import _get, _pack, _skip_without, build, registry, uses_candidates
    from .probes_ch04 import verdicts_of
except ImportError:  # in the sandbox these files sit flat in one folder
    from probes_base import _get, _pack, _skip_without, build, registry, uses_candidates
    from probes_ch04 import verdicts_of

PROBES, probe = registry()

CANDIDATES_2D, candidate = registry()  # the public candidates; the grader's hidden ones: a registry of its own


def _tensors(spec, device=None):
    """{"long": [[...]]} -> an int64 tensor; anything else is built as usual (lists stay lists)."""
    if isinstance(spec, dict) and set(spec) == {"long"}:
        return torch.tensor(spec["long"], dtype=torch.long, device=device)
    if isinstance(spec, dict) and "t" not in spec:
        return {k: _tensors(v, device) for k, v in spec.items()}
    if isinstance(spec, list) and spec and isinstance(spec[0], dict):
        return [_tensors(s, device) for s in spec]
    return build(spec, device)


@probe
def call_ints(ns, exercise, args=(), kwargs=None, device=None):
    """fn(*args, **kwargs) with {"long": [...]} entries turned into int64 tensors on `device`."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    fn = _get(ns, exercise)
    out = fn(*[_tensors(a, device) for a in args], **{k: _tensors(v, device) for k, v in (kwargs or {}).items()})
    return _pack({}, "out", out)


@probe
def raises_ints(ns, exercise, args=(), kwargs=None):
    """fn(*args, **kwargs) as in call_ints, reporting which exception came out."""
    fn = _get(ns, exercise)
    try:
        fn(*[_tensors(a) for a in args], **{k: _tensors(v) for k, v in (kwargs or {}).items()})
    except NotImplementedError:
        raise
    except Exception as exc:  # the point of this probe is to see which one
        return {"raised": type(exc).__name__, "message": str(exc)[:500]}
    return {"raised": None, "message": ""}


# ----------------------------------------------------------------------------------------------
# candidate 2-D rope functions (public)
# ----------------------------------------------------------------------------------------------
def plane_angles_2d(x, position_ids, theta_rows, theta_cols):
    """angle[p, i] = r_p · theta_rows[i] + c_p · theta_cols[i] in float32 (N, n), on x's device."""
    ids = position_ids.to(x.device).float()  # (N, 2)
    return ids[:, :1] * theta_rows.to(x.device) + ids[:, 1:] * theta_cols.to(x.device)  # (N, n)


def rotate_pairs(x, angles):
    """Rotate the planes (x_2i, x_2i+1) by angles (N, n); coordinates past 2n pass through."""
    n = angles.shape[-1]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0:2 * n:2], x[..., 1:2 * n:2]
    rotated = torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)
    return torch.cat((rotated, x[..., 2 * n:]), dim=-1)


def ladder(n, base=100.0):
    return 1.0 / base ** (torch.arange(n, dtype=torch.float32) / max(n, 1))


def axial(n_planes, rows_first=True, base=100.0):
    """(theta_rows, theta_cols) for n planes: the first half of the planes turns with one axis, the rest with the
    other, each half with its own ladder."""
    half = n_planes // 2
    first = torch.cat([ladder(half, base), torch.zeros(n_planes - half)])
    second = torch.cat([torch.zeros(half), ladder(n_planes - half, base)])
    return (first, second) if rows_first else (second, first)


@candidate
def axial_alternating_planes(x, position_ids):
    """Correct: neighbouring planes, rows on even planes and columns on odd ones, frequencies 2^-(i//2)."""
    n = x.shape[-1] // 2
    freq = 0.5 ** (torch.arange(n, dtype=torch.float32) // 2)
    is_row = (torch.arange(n) % 2 == 0).float()
    return rotate_pairs(x, plane_angles_2d(x, position_ids, freq * is_row, freq * (1 - is_row)))


@candidate
def axial_rows_only(x, position_ids):
    """Broken: every plane turns with the row: patches of one row are never told apart."""
    n = x.shape[-1] // 2
    return rotate_pairs(x, plane_angles_2d(x, position_ids, ladder(n), torch.zeros(n)))


@candidate
def axial_mixed_reversed_partial(x, position_ids):
    """Correct: 'mixed' angles -(θx r + θy c) with both axes in every plane, ids shifted by (2, 5), and the last
    quarter of the head unrotated."""
    n = (x.shape[-1] - x.shape[-1] // 4) // 2
    theta_r, theta_c = ladder(n), 0.7 * ladder(n, 30.0)
    return rotate_pairs(x, -plane_angles_2d(x, position_ids + torch.tensor([2, 5]), theta_r, theta_c))


@candidate
def axial_angle_product(x, position_ids):
    """Broken: the angle grows like (r·c)/8 · θ on top of the axial angles: norms kept, scores not relative."""
    n = x.shape[-1] // 2
    rows, cols = axial(n)
    product = (position_ids[:, 0] * position_ids[:, 1]).to(x.device).float()[:, None] / 8 * ladder(n).to(x.device)
    return rotate_pairs(x, plane_angles_2d(x, position_ids, rows, cols) + product)


@candidate
def axial_rows_then_columns_halves(x, position_ids):
    """Broken: half-layout rotate_half with tables cat(rθ, rθ, cθ, cθ): coordinate j and j + d/2 turn by
    different angles, so the blocks are not rotations."""
    d = x.shape[-1]
    q = d // 4
    theta = ladder(q).to(x.device)
    ids = position_ids.to(x.device).float()
    r, c = ids[:, :1] * theta, ids[:, 1:] * theta  # (N, d/4) each
    emb = torch.cat((r, r, c, c), dim=-1)  # (N, d)
    rotated = torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)
    return x * emb.cos().to(x.dtype) + rotated * emb.sin().to(x.dtype)


@candidate
def axial_grows_by_1_05(x, position_ids):
    """Broken: a correct axial rotation times 1.05 (scores stay relative, every length grows by 5%)."""
    n = x.shape[-1] // 2
    return 1.05 * rotate_pairs(x, plane_angles_2d(x, position_ids, *axial(n)))


@candidate
def axial_fixed_cell(x, position_ids):
    """Broken, a no-op in disguise: every patch rotated as if it sat at (3, 4)."""
    n = x.shape[-1] // 2
    fixed = torch.tensor([[3, 4]]).expand(position_ids.shape[0], 2)
    return rotate_pairs(x, plane_angles_2d(x, fixed, *axial(n)))


@probe
@uses_candidates("CANDIDATES_2D")
def axial_property(ns, exercise, candidates, head_dim, table=CANDIDATES_2D):
    """The learner's 2-D property test on each candidate of `table` (probes.catalog merges the hidden ones in; the
    sandbox's child passes the grader's callables): {name: True/False} or {name + ':error': why}."""
    return verdicts_of(_get(ns, exercise), table, candidates, head_dim)
