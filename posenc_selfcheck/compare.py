"""Compare a learner's tensor with an expected one and say, in words, how they differ."""

from __future__ import annotations

import torch

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


def close(got, expected, atol, rtol):
    """True when every entry agrees within atol + rtol * |expected| (NaN never agrees)."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return False
    g, e = got.double(), expected.double()
    if not torch.isfinite(g).all() and not torch.equal(torch.isfinite(g), torch.isfinite(e)):
        return False
    diff = (g - e).abs().nan_to_num(nan=float("inf"))
    finite = torch.isfinite(e)
    return bool((diff[finite] <= atol + rtol * e[finite].abs()).all()) and bool(
        torch.equal(g[~finite], e[~finite])
    )


def describe(got, expected, atol, rtol, what="output"):
    """None when they agree; otherwise one or two sentences a learner can act on."""
    if not isinstance(got, torch.Tensor):
        return f"{what}: expected a tensor, got {type(got).__name__}"
    if got.shape != expected.shape:
        hint = ""
        if sorted(got.shape) == sorted(expected.shape):
            hint = " (same sizes in another order: a transpose or a wrong view?)"
        return f"{what}: expected shape {tuple(expected.shape)}, got {tuple(got.shape)}{hint}"
    if close(got, expected, atol, rtol):
        return None
    g, e = got.double(), expected.double()
    bad_nan = ~torch.isfinite(g) & torch.isfinite(e)
    if bad_nan.any():
        idx = _where(int(bad_nan.flatten().nonzero()[0]), g.shape)
        return (f"{what}: {int(bad_nan.sum())} entries are NaN or inf where the reference is finite; "
                f"first at index {idx} (expected {e[idx].item():.6g}, got {g[idx].item()})")
    diff = (g - e).abs().nan_to_num(nan=float("inf"))
    limit = atol + rtol * e.abs()
    n_bad = int((diff > limit).sum())
    flat = int(diff.flatten().argmax())
    idx = _where(flat, g.shape)
    return (f"{what}: {n_bad} of {g.numel()} entries differ beyond tolerance (atol {atol:.1e}, rtol {rtol:.1e}); "
            f"largest error {diff.flatten()[flat].item():.3g} at index {idx}: "
            f"expected {e[idx].item():.6g}, got {g[idx].item():.6g}")


def tensor_keys(result):
    return [k for k, v in result.items() if isinstance(v, torch.Tensor)]
