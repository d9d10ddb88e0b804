"""Chapter 8, grader only: the catalogue of 2-D rope functions a learner's `check_axial_property` must judge.
Correct ones (Qwen2-VL's layout, columns first, interleaved pairs, another base, the other direction, partial
rotary, shifted ids, 'mixed' angles, float64) must be accepted; broken ones (a rotation by one axis only, a layout
mix, sign errors, angles that are not affine in (row, column), length changes, no-ops) rejected. They register
into a `CANDIDATES_2D` registry of their own (never into the public one): `probes.catalog` merges it in for the
grader's probe.

They never enter the sandbox (grader/hidden_probes/__init__.py, CANDIDATES): the grader computes them in its own
process, and the learner's test calls them through opaque callables (grader/candidates.py).
"""

from __future__ import annotations

import torch

from posenc_selfcheck.probes_base import registry
from posenc_selfcheck.probes_ch08 import axial, plane_angles_2d, rotate_pairs

PROBES = {}  # no probes of its own: candidates for probes_ch08's axial_property
CANDIDATES_2D, candidate = registry()  # the hidden candidates, merged with the public ones by probes.catalog


def _qwen_tables(x, position_ids, base=10000.0, rows_first=True):
    """Qwen2-VL's vision tables: angles [r θ | c θ] (θ over half the head), cat(angles, angles)."""
    d = x.shape[-1]
    half = d // 2
    theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=x.device) / half)
    ids = position_ids.to(x.device).float()
    first, second = (ids[:, :1], ids[:, 1:]) if rows_first else (ids[:, 1:], ids[:, :1])
    angles = torch.cat((first * theta, second * theta), dim=-1)  # (N, d/2)
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def _half(x, cos, sin, turn=lambda x1, x2: (-x2, x1), scale=1.0):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return (x * cos + torch.cat(turn(x1, x2), dim=-1) * sin) * scale


# ---- correct: must be accepted ----------------------------------------------------------------
@candidate
def axial_qwen2_vl(x, position_ids):
    """Qwen2-VL's vision tower: half layout, rows on the first d/4 planes, base 10000."""
    return _half(x, *_qwen_tables(x, position_ids))


@candidate
def axial_columns_on_first_planes(x, position_ids):
    return _half(x, *_qwen_tables(x, position_ids, rows_first=False))


@candidate
def axial_interleaved_pairs(x, position_ids):
    """Neighbouring pairs, the first half of the planes with the row, the second with the column."""
    return rotate_pairs(x, plane_angles_2d(x, position_ids, *axial(x.shape[-1] // 2, base=10000.0)))


@candidate
def axial_reversed(x, position_ids):
    """rotate_half with its sign flipped: every plane turns by -angle."""
    return _half(x, *_qwen_tables(x, position_ids), turn=lambda x1, x2: (x2, -x1))


@candidate
def axial_partial_half(x, position_ids):
    """Only the first half of the head is rotated (Qwen's layout inside it)."""
    d = x.shape[-1]
    rotary = d // 2 // 4 * 4
    return torch.cat((_half(x[..., :rotary], *_qwen_tables(x[..., :rotary], position_ids)), x[..., rotary:]), dim=-1)


@candidate
def axial_shifted_ids(x, position_ids):
    """Every id shifted by (7, 3): displacements unchanged."""
    return _half(x, *_qwen_tables(x, position_ids + torch.tensor([7, 3])))


@candidate
def axial_mixed_frequencies(x, position_ids):
    """RoPE-Mixed (Heo et al., 2024): every plane turns by θx_i r + θy_i c with its own pair of frequencies."""
    n = x.shape[-1] // 2
    gen = torch.Generator().manual_seed(5)
    theta_r, theta_c = torch.rand(n, generator=gen) - 0.5, torch.rand(n, generator=gen) - 0.5
    return rotate_pairs(x, plane_angles_2d(x, position_ids, theta_r, theta_c))


@candidate
def axial_float64_base_1000(x, position_ids):
    """Angles and rotation in float64, base 1000."""
    cos, sin = _qwen_tables(x.double(), position_ids, base=1000.0)
    return _half(x.double(), cos, sin).to(x.dtype)


# ---- broken: must be rejected -----------------------------------------------------------------
@candidate
def axial_columns_only(x, position_ids):
    """Every plane turns with the column: patches of one column are never told apart."""
    ids = torch.stack((position_ids[:, 1], position_ids[:, 1]), dim=-1)
    return _half(x, *_qwen_tables(x, ids))


@candidate
def axial_first_id_only(x, position_ids):
    """The column ids dropped: (r, 0) for every patch, Qwen's layout otherwise."""
    ids = torch.stack((position_ids[:, 0], torch.zeros_like(position_ids[:, 0])), dim=-1)
    return _half(x, *_qwen_tables(x, ids))


@candidate
def axial_identity(x, position_ids):
    return x.clone()


@candidate
def axial_last_cell_for_all(x, position_ids):
    """A broadcasting slip: the tables of the last patch rotate every patch."""
    cos, sin = _qwen_tables(x, position_ids)
    return _half(x, cos[-1:].expand_as(cos), sin[-1:].expand_as(sin))


@candidate
def axial_rotate_half_no_minus(x, position_ids):
    """rotate_half = cat(x2, x1): the blocks are not rotations."""
    return _half(x, *_qwen_tables(x, position_ids), turn=lambda x1, x2: (x2, x1))


@candidate
def axial_interleaved_tables_half_rotation(x, position_ids):
    """The other layout mix: Qwen's angles repeated for neighbouring pairs, but rotate_half applied."""
    d = x.shape[-1]
    half = d // 2
    theta = 1.0 / 10000.0 ** (torch.arange(0, half, 2, dtype=torch.float32, device=x.device) / half)
    ids = position_ids.to(x.device).float()
    angles = torch.cat((ids[:, :1] * theta, ids[:, 1:] * theta), dim=-1).repeat_interleave(2, dim=-1)  # (N, d)
    return _half(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype))


@candidate
def axial_rows_clipped_at_8(x, position_ids):
    """Rows clipped at 8 (a table of 8 rows): relative only in the first 9 rows."""
    ids = torch.stack((position_ids[:, 0].clamp(max=8), position_ids[:, 1]), dim=-1)
    return _half(x, *_qwen_tables(x, ids))


@candidate
def axial_quadratic_row(x, position_ids):
    """Row angle (r + r²/40) θ: a rotation (norms kept) not affine in the row."""
    r = position_ids[:, 0].float()
    n = x.shape[-1] // 2
    rows, cols = axial(n)
    ids = torch.stack((r + r * r / 40, position_ids[:, 1].float()), dim=-1)
    return rotate_pairs(x, plane_angles_2d(x, ids, rows, cols))


@candidate
def axial_shrinks_by_0_9(x, position_ids):
    return 0.9 * _half(x, *_qwen_tables(x, position_ids))


@candidate
def axial_sin_angle_off(x, position_ids):
    """sin taken at 1.1 times the angle of cos: the blocks are not rotations."""
    n = x.shape[-1] // 2
    angles = plane_angles_2d(x, position_ids, *axial(n))
    cos, sin = angles.cos().to(x.dtype), (1.1 * angles).sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)

