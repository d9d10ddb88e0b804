# Generated from course/03_relative/probes.py by `python -m grader build`: edit there.
"""Chapter 3 probes: the gradients that reach the relative tables (they must be trainable)."""

from __future__ import annotations

import torch

try:
    from .probes_base import _get, _pack, build, registry
except ImportError:  # flat in the sandbox
    from probes_base import _get, _pack, build, registry

PROBES, probe = registry()


@probe
def call_with_grads(ns, exercise, args=(), kwargs=None, wrt=(), names=(), seed=0):
    """Gradients of sum(out * w), w fixed random weights, with respect to the arguments at positions `wrt`
    (`names` says what to call them in messages)."""
    fn = _get(ns, exercise)
    args = build(list(args))
    for i in wrt:
        args[i] = args[i].clone().requires_grad_(True)
    out = fn(*args, **build(kwargs or {}))
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"returned a {type(out).__name__}; expected a tensor")
    weights = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed)).to(out.dtype)
    (out * weights).sum().backward()
    result = _pack({}, "out", out)
    for i in wrt:
        grad = args[i].grad
        if grad is None:
            name = names[i] if i < len(names) else f"argument {i}"
            raise RuntimeError(f"no gradient reached {name}: the output does not depend on it")
        _pack(result, f"grad{i}", grad)
    return result
