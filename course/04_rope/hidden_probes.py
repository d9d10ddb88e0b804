"""Chapter 4, grader only: the catalogue of rope functions a learner's `check_relative_property` must
judge. Correct ones (other layouts, bases, directions, partial rotary, shifted positions) must be
accepted; broken ones (a layout mix, sign errors that break the rotation, absolute-position leaks,
length changes, and no-ops whose rotation never changes with the position) rejected. They register
into a `CANDIDATES` registry of their own (never into the public one): `probes.catalog` merges it in
for the grader's probe.

They never enter the sandbox (grader/hidden_probes/__init__.py, CANDIDATES): the grader computes them in its own
process, and the learner's test calls them through opaque callables (grader/candidates.py).
"""

from __future__ import annotations

import torch

from posenc_selfcheck.probes_base import registry
from posenc_selfcheck.probes_ch04 import plane_angles, rotate_neighbours

PROBES = {}  # no probes of its own: candidates for probes_ch04's relative_property
CANDIDATES, candidate = registry()  # the hidden candidates, merged with the public ones by probes.catalog


def _theta(d, base=10000.0, step=2.0):
    """theta_i = base^(-step * i / d): step 2 is RoPE's ladder, step 1 the 'i/d' variant."""
    return 1.0 / base ** (torch.arange(d // 2, dtype=torch.float32) * step / d)


def _half_layout(x, angles, turn=lambda x1, x2: (-x2, x1), scale=1.0, sin_angles=None):
    """x * cos + turn(x) * sin in the half layout on the first 2n coordinates (n = angles.shape[-1])."""
    n = angles.shape[-1]
    sin_angles = angles if sin_angles is None else sin_angles
    cos = (torch.cat((angles, angles), dim=-1).cos() * scale).to(x.dtype)
    sin = (torch.cat((sin_angles, sin_angles), dim=-1).sin() * scale).to(x.dtype)
    x1, x2 = x[..., :n], x[..., n:2 * n]
    rotated = torch.cat((x1, x2), dim=-1) * cos + torch.cat(turn(x1, x2), dim=-1) * sin
    return torch.cat((rotated, x[..., 2 * n:]), dim=-1)


# ---- correct: must be accepted ----------------------------------------------------------------
@candidate
def rope_half_10000(x, position_ids):
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1])))


@candidate
def rope_interleaved_10000(x, position_ids):
    return rotate_neighbours(x, plane_angles(x, position_ids, _theta(x.shape[-1])))


@candidate
def rope_half_500000(x, position_ids):
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1], 500000.0)))


@candidate
def rope_half_reversed(x, position_ids):
    """rotate_half with its sign flipped, cat(x2, -x1): every plane turns by -m theta."""
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1])), turn=lambda x1, x2: (x2, -x1))


@candidate
def rope_interleaved_1e6_float64(x, position_ids):
    """Code Llama's base, angles and rotation in float64."""
    theta = _theta(x.shape[-1], 1e6).double()
    angles = position_ids.to(x.device)[..., None].double() * theta.to(x.device)
    angles = angles[:, None] if angles.dim() == 3 else angles
    return rotate_neighbours(x.double(), angles).to(x.dtype)


@candidate
def rope_half_i_over_d(x, position_ids):
    """The exponent i/d instead of 2i/d: another ladder (base^(1/2)), still a rotation per plane."""
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1], step=1.0)))


@candidate
def rope_partial_quarter(x, position_ids):
    """GPT-NeoX: only the first quarter of the head is rotated (half layout inside it)."""
    rotary = x.shape[-1] // 4 // 2 * 2
    return _half_layout(x, plane_angles(x, position_ids, _theta(rotary)))


@candidate
def rope_shifted_positions(x, position_ids):
    """Every position shifted by the same 7: distances are unchanged."""
    return _half_layout(x, plane_angles(x, position_ids + 7, _theta(x.shape[-1])))


# ---- broken: must be rejected -----------------------------------------------------------------
@candidate
def rope_interleaved_half_tables(x, position_ids):
    """The other layout mix: neighbouring pairs rotated, but with cat(freqs, freqs) tables."""
    d = x.shape[-1]
    angles = plane_angles(x, position_ids, _theta(d))
    emb = torch.cat((angles, angles), dim=-1)  # half-layout tables
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    turned = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)  # GPT-J's rotate_every_two
    return x * cos + turned * sin


@candidate
def rope_rotate_half_no_minus(x, position_ids):
    """rotate_half = cat(x2, x1): the blocks [[cos, sin], [sin, cos]] are not rotations."""
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1])), turn=lambda x1, x2: (x2, x1))


@candidate
def rope_rotate_half_both_minus(x, position_ids):
    """rotate_half = cat(-x2, -x1): again a symmetric block, not a rotation."""
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1])), turn=lambda x1, x2: (-x2, -x1))


@candidate
def rope_quadratic_angle(x, position_ids):
    """Angle (m + m^2 / 200) theta: still a rotation (norms kept) but not linear in the position."""
    m = position_ids.float()
    return _half_layout(x, plane_angles(x, m + m * m / 200, _theta(x.shape[-1])))


@candidate
def rope_clipped_positions(x, position_ids):
    """Positions clipped at 64, as if read from a table of 64 rows: relative only up to there."""
    return _half_layout(x, plane_angles(x, position_ids.clamp(max=64), _theta(x.shape[-1])))


@candidate
def rope_scaled(x, position_ids):
    """cos and sin multiplied by 1.1: scores stay relative but every vector grows by 10%."""
    return _half_layout(x, plane_angles(x, position_ids, _theta(x.shape[-1])), scale=1.1)


@candidate
def rope_sin_angle_off(x, position_ids):
    """sin taken at 1.1 times the angle of cos: the blocks are not rotations."""
    angles = plane_angles(x, position_ids, _theta(x.shape[-1]))
    return _half_layout(x, angles, sin_angles=1.1 * angles)


# ---- no-ops: must be rejected (the rotation never changes with the position) -------------------
@candidate
def rope_identity(x, position_ids):
    """Returns x unchanged: every norm kept, every score the same at every distance."""
    return x.clone()


@candidate
def rope_constant_rotation(x, position_ids):
    """Positions ignored: every token rotated as if it sat at position 5."""
    return _half_layout(x, plane_angles(x, torch.full_like(position_ids, 5), _theta(x.shape[-1])))


@candidate
def rope_last_row_for_all(x, position_ids):
    """A broadcasting slip: the tables of the last position rotate every token."""
    angles = plane_angles(x, position_ids, _theta(x.shape[-1]))
    return _half_layout(x, angles[..., -1:, :].expand(angles.shape))
