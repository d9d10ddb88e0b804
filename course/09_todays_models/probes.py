"""Chapter 9 probes: exercises that return a number (a softmax scale) or a list of ints (a layer pattern), and MLA's
position part called with real rotary tables."""

from __future__ import annotations

import numbers

import torch

try:
    from .probes_base import _dtype, _get, _pack, _skip_without, build, registry
except ImportError:  # flat in the sandbox
    from probes_base import _dtype, _get, _pack, _skip_without, build, registry

PROBES, probe = registry()


@probe
def number(ns, exercise, args=(), kwargs=None):
    """fn(*args, **kwargs) -> one real number, returned as a 0-d float64 tensor so that it is compared with a
    tolerance (the same formula written in another order differs in the last bit)."""
    fn = _get(ns, exercise)
    out = fn(*build(list(args)), **build(kwargs or {}))
    if isinstance(out, torch.Tensor):
        if out.numel() != 1:
            raise TypeError(f"expected one number, got a tensor of shape {tuple(out.shape)}")
        out = out.item()
    if isinstance(out, bool) or not isinstance(out, numbers.Real):
        raise TypeError(f"expected a float, got {type(out).__name__}")
    return {"out": torch.tensor(float(out), dtype=torch.float64)}


@probe
def int_list(ns, exercise, args=(), kwargs=None):
    """fn(*args, **kwargs) -> a list of ints, returned as an int64 tensor (compared exactly)."""
    fn = _get(ns, exercise)
    out = fn(*build(list(args)), **build(kwargs or {}))
    if isinstance(out, torch.Tensor):
        out = out.tolist()
    if not isinstance(out, (list, tuple)) or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                                  for v in out):
        raise TypeError(f"expected a list of ints, got {type(out).__name__}")
    return {"out": torch.tensor([int(v) for v in out], dtype=torch.int64)}


@probe
def mla_rotary(ns, exercise, q, k_nope, k_rot, positions, base=10000.0, past_k_rot=None, device=None, dtype=None):
    """fn(q, k_nope, k_rot, cos, sin, past_k_rot) with real half-layout tables, cos = cos(cat(p·θ, p·θ)),
    θ_i = base^(-2i/R) for the new positions (what DeepseekV3RotaryEmbedding gives the attention): the inputs on
    `device` in `dtype`, the tables computed in float32 there and cast to the inputs' dtype, as
    DeepseekV3RotaryEmbedding returns them (`cos.to(dtype=x.dtype)`)."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    fn = _get(ns, exercise)
    dtype = _dtype(dtype)
    k_rot = build(k_rot, device, dtype)
    rope = k_rot.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, rope, 2, dtype=torch.float32, device=k_rot.device) / rope)  # (R/2,)
    angles = build(positions, device).float()[:, None] * inv_freq  # (L, R/2)
    emb = torch.cat((angles, angles), dim=-1)  # (L, R)
    cos, sin = emb.cos().to(k_rot.dtype), emb.sin().to(k_rot.dtype)  # (L, R) each
    out = fn(build(q, device, dtype), build(k_nope, device, dtype), k_rot, cos, sin, build(past_k_rot, device, dtype))
    return _pack({}, "out", out)
