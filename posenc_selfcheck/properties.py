"""Mathematical properties a correct answer must have, checked from the answer alone.

Each takes a probe result (and parameters) and returns (ok, message). They use no reference
implementation: the expected behaviour follows from the mathematics, computed here in float64.
"""

from __future__ import annotations

import torch

from .chapter_properties import MODULES as CHAPTER_MODULES
from .messages import msg
from .probes_base import registry

PROPERTIES, prop = registry()  # this module's; the chapters' are added at the end


def _sinusoid64(positions, d_model, base):
    """PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d)), in float64."""
    # w_i = base^(-2i/d)
    w = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    angles = positions.double()[:, None] * w[None, :]  # (P, d/2)
    pe = torch.empty(len(positions), d_model, dtype=torch.float64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe  # (P, d)


@prop
def permutation_equivariant(got, atol=1e-5):
    """attention(P x) = P attention(x): permuting the tokens permutes the outputs, nothing more."""
    out, out_perm, perm = got["out"], got["out_perm"], got["perm"]
    expected = out[:, :, perm]
    if out_perm.shape != expected.shape:
        return False, msg("output shapes differ: {got} vs {expected}", got=str(tuple(out_perm.shape)),
                          expected=str(tuple(expected.shape)))
    err = (out_perm - expected).abs().max().item()
    if not err <= atol:  # NaN fails too
        return False, msg("permuting the input tokens changed the outputs by up to {error:.3g} beyond a permutation: "
                          "attention without positions should only reorder them", error=err)
    return True, ""


@prop
def shifts_sinusoids(got, k, d_model, base=10000.0, positions=(0, 1, 7, 100, 1000), atol=1e-4):
    """M_k PE[p] = PE[p + k] for every p, with PE computed independently in float64."""
    m = got["out"]
    if m.shape != (d_model, d_model):
        return False, msg("expected a ({d}, {d}) matrix, got shape {got}", d=d_model, got=str(tuple(m.shape)))
    p = torch.tensor(positions)
    pe, pe_shifted = _sinusoid64(p, d_model, base), _sinusoid64(p + k, d_model, base)  # (P, d)
    mapped = pe @ m.double().T  # row p is M_k PE[p]
    err = (mapped - pe_shifted).abs()
    worst = int(err.max(dim=1).values.argmax())
    if not err.max().item() <= atol:  # NaN fails too
        return False, msg("M_k PE[p] should equal PE[p + k]; at p = {p} (k = {k}) they differ by {error:.3g}",
                          p=positions[worst], k=k, error=err.max().item())
    return True, ""


@prop
def orthogonal(got, atol=1e-5):
    """M Mᵀ = I: a product of rotations keeps lengths."""
    m = got["out"].double()
    err = (m @ m.T - torch.eye(m.shape[0], dtype=torch.float64)).abs().max().item()
    if not err <= atol:  # NaN fails too
        return False, msg("M Mᵀ differs from the identity by {error:.3g}: the map is not a rotation", error=err)
    return True, ""


# every chapter's properties (course/NN_name/properties.py, shipped as properties_chNN.py and listed in
# chapter_properties.py by the build; each has its own registry; none imports this module)
for _module in CHAPTER_MODULES:
    if set(PROPERTIES) & set(_module.PROPERTIES):
        raise ValueError(f"property names defined twice: {sorted(set(PROPERTIES) & set(_module.PROPERTIES))}")
    PROPERTIES.update(_module.PROPERTIES)
