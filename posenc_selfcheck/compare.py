"""Compare a learner's tensor with an expected one and say, in words, how they differ."""

from __future__ import annotations

import torch

from .messages import msg

# Tolerances follow the rounding of the computation (course contract): float32 work agrees to
# about 1e-6 relative; half precision keeps about 3 decimal digits, bfloat16 about 2.
DEFAULT_TOL = {
    "float64": (1e-5, 1e-4),
    "float32": (1e-5, 1e-4),
    "float16": (2e-3, 2e-3),
    "bfloat16": (2e-2, 2e-2),
}


def tolerance(tol, dtype_name):
    """(atol, rtol) for one check: the dtype default, overridden by the check, plus a term that grows
    with the largest position (angles p * w lose about p * 6e-8 in float32)."""
    atol, rtol = DEFAULT_TOL.get(dtype_name, DEFAULT_TOL["float32"])
    tol = tol or {}
    atol = tol.get("atol", atol) + tol.get("per_position", 0.0) * tol.get("max_position", 0)
    return atol, tol.get("rtol", rtol)


def _where(index, shape):
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(index), shape))


def _wide(got, expected):
    """Both in float64, or in complex128 when either is complex (a cast to float64 would drop an imaginary part)."""
    wide = torch.complex128 if got.is_complex() or expected.is_complex() else torch.float64
    return got.to(wide), expected.to(wide)


def close(got, expected, atol, rtol):
    """True when every entry agrees within atol + rtol * |expected| (NaN never agrees)."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return False
    # got == expected bitwise (correct code computed the reference's way, most answers): within any tolerance. NaN is
    # never equal to itself, so an answer with NaN goes on below
    if got.dtype == expected.dtype and got.device == expected.device and torch.equal(got, expected):
        return True
    g, e = _wide(got, expected)
    if not torch.isfinite(g).all() and not torch.equal(torch.isfinite(g), torch.isfinite(e)):
        return False
    diff = (g - e).abs().nan_to_num(nan=float("inf"))
    finite = torch.isfinite(e)
    return bool((diff[finite] <= atol + rtol * e[finite].abs()).all()) and bool(
        torch.equal(g[~finite], e[~finite])
    )


def label(key):
    """What a learner reads for a result's key: "output" for the result itself, else the key (code)."""
    return msg("output") if key == "out" else key


def describe(got, expected, atol, rtol, what=None):
    """None when they agree; otherwise a message of one or two sentences a learner can act on. `what` names the
    tensor (a message or a key; the output by default)."""
    what = msg("output") if what is None else what
    if not isinstance(got, torch.Tensor):
        return msg("{what}: expected a tensor, got {type}", what=what, type=type(got).__name__)
    if got.shape != expected.shape:
        if sorted(got.shape) == sorted(expected.shape):
            return msg("{what}: expected shape {expected}, got {got} (same sizes in another order: a transpose or a "
                       "wrong view?)", what=what, expected=str(tuple(expected.shape)), got=str(tuple(got.shape)))
        return msg("{what}: expected shape {expected}, got {got}", what=what, expected=str(tuple(expected.shape)),
                   got=str(tuple(got.shape)))
    if close(got, expected, atol, rtol):
        return None
    g, e = _wide(got, expected)
    bad_nan = ~torch.isfinite(g) & torch.isfinite(e)
    if bad_nan.any():
        idx = _where(int(bad_nan.flatten().nonzero()[0]), g.shape)
        return msg("{what}: {count} entries are NaN or inf where the reference is finite; first at index {index} "
                   "(expected {expected:.6g}, got {got})", what=what, count=int(bad_nan.sum()), index=str(idx),
                   expected=expected[idx].item(), got=str(got[idx].item()))
    diff = (g - e).abs().nan_to_num(nan=float("inf"))
    limit = atol + rtol * e.abs()
    n_bad = int((diff > limit).sum())
    flat = int(diff.flatten().argmax())
    idx = _where(flat, g.shape)
    return msg("{what}: {bad} of {total} entries differ beyond tolerance (atol {atol:.1e}, rtol {rtol:.1e}); "
               "largest error {error:.3g} at index {index}: expected {expected:.6g}, got {got:.6g}",
               what=what, bad=n_bad, total=g.numel(), atol=atol, rtol=rtol, error=diff.flatten()[flat].item(),
               index=str(idx), expected=expected[idx].item(), got=got[idx].item())


def tensor_keys(result):
    return [k for k, v in result.items() if isinstance(v, torch.Tensor)]
