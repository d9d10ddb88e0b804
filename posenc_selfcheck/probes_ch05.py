# Generated from course/05_long_context/probes.py by `python -m grader build`: edit there.
"""Chapter 5 probes: an exercise that returns (inv_freq, attention_factor)."""

from __future__ import annotations

import numbers

import torch

try:
    from .probes_base import _get, _pack, build, registry
except ImportError:  # flat in the sandbox
    from probes_base import _get, _pack, build, registry

PROBES, probe = registry()


@probe
def inv_freq_and_factor(ns, exercise, args=(), kwargs=None):
    """fn(*args, **kwargs) -> (inv_freq, attention_factor). The factor comes back as a 0-d float64 tensor so
    that it is compared with a tolerance (0.1*ln(s)+1 written in another order differs in the last bit)."""
    fn = _get(ns, exercise)
    out = fn(*build(list(args)), **build(kwargs or {}))
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"returned {type(out).__name__}; expected a pair (inv_freq, attention_factor)")
    inv_freq, factor = out
    result = _pack({}, "inv_freq", inv_freq)
    if isinstance(factor, torch.Tensor):
        if factor.numel() != 1:
            raise TypeError(f"attention_factor should be one number, got a tensor of shape {tuple(factor.shape)}")
        factor = factor.item()
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
        raise TypeError(f"attention_factor should be a float, got {type(factor).__name__}")
    result["attention_factor"] = torch.tensor(float(factor), dtype=torch.float64)
    return result
