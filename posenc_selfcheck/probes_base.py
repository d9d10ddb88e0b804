"""What every probe module shares: the registry, inputs described as data, and how a result is packed.

probes.py (chapters 0-2 and the catalog) and every probes_chNN.py import these from here, never from each
other's catalog, so no probe module imports the module that lists it. Like the probes, this file imports only
torch and the standard library: the sandbox copies it flat beside them.
"""

from __future__ import annotations

import math
import os

import torch
from torch import nn


def registry():
    """(table, decorator): a probe module's own registry; `@probe` adds a function under its name."""
    table = {}

    def register(fn):
        table[fn.__name__] = fn
        return fn

    return table, register



class NotImplementedYet(Exception):
    """The namespace has no object under the exercise's name."""


# ----------------------------------------------------------------------------------------------
# inputs described as data
# ----------------------------------------------------------------------------------------------
def _dtype(name):
    if name is None:
        return None
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dtype


def build(spec, device=None, dtype=None):
    """Turn an input description into a value; anything that is not a tensor spec passes through."""
    if isinstance(spec, list):
        return [build(s, device, dtype) for s in spec]
    if isinstance(spec, tuple):
        return tuple(build(s, device, dtype) for s in spec)
    if not isinstance(spec, dict):
        return spec
    if "t" not in spec:
        return {k: build(v, device, dtype) for k, v in spec.items()}
    kind = spec["t"]
    gen = torch.Generator().manual_seed(int(spec.get("seed", 0)))
    want = _dtype(spec.get("dtype")) or dtype or torch.float32
    if kind == "randn":
        out = torch.randn(spec["shape"], generator=gen, dtype=torch.float32) * spec.get("scale", 1.0)
        out = out.to(want)
    elif kind == "arange":
        out = torch.arange(spec.get("start", 0), spec["end"], dtype=torch.long)
        if "shape" in spec:
            out = out.reshape(spec["shape"])
    elif kind == "randint":
        out = torch.randint(spec["low"], spec["high"], spec["shape"], generator=gen)
    elif kind == "randperm":
        out = torch.randperm(spec["n"], generator=gen)
    elif kind == "causal_mask":
        # query i (aligned to the end) may see key j when j <= k_len - q_len + i
        q, k = spec["q"], spec["k"]
        allowed = torch.ones(q, k, dtype=torch.bool).tril(diagonal=k - q)  # (q, k)
        out = allowed if spec.get("kind", "bool") == "bool" else torch.zeros(q, k).masked_fill(~allowed, -math.inf)
    elif kind == "random_bool_mask":
        out = torch.rand(spec["shape"], generator=gen) < spec.get("p", 0.7)
        out[..., 0] = True  # every query keeps at least one key, so no row is all -inf
    else:
        raise ValueError(f"unknown tensor spec {kind!r}")
    if device is not None:
        out = out.to(device)
    return out


def _get(ns, name):
    obj = ns.get(name) if isinstance(ns, dict) else getattr(ns, name, None)
    if obj is None:
        raise NotImplementedYet(name)
    return obj


def _skip_without(device):
    if device and str(device).startswith("cuda") and not torch.cuda.is_available():
        return {"skipped": "no CUDA device on this machine"}
    return None


def _pack(result, key, value):
    """Store a returned value; tensors are detached, moved to the CPU and described."""
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor and not isinstance(value, nn.Parameter):
            raise TypeError(f"returned a {type(value).__name__}, a tensor subclass; return a plain torch.Tensor")
        result[f"{key}:device"] = value.device.type
        result[f"{key}:dtype"] = str(value.dtype).replace("torch.", "")
        value = value.detach()
        if value.device.type != "meta":
            value = value.to("cpu").contiguous().clone()
        else:
            result[f"{key}:shape"] = list(value.shape)
            return result
        result[key] = value
    elif isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        for i, v in enumerate(value):
            _pack(result, f"{key}{i}", v)
    elif value is None or isinstance(value, (bool, int, float, str)):
        result[key] = value
    else:
        raise TypeError(f"returned a {type(value).__name__}; expected a tensor")
    return result


def _module(ns, exercise, ctor_args, ctor_kwargs, device=None, dtype=None, seed_params=None):
    cls = _get(ns, exercise)
    module = cls(*build(ctor_args), **build(ctor_kwargs))
    if not isinstance(module, nn.Module):
        raise TypeError(f"{exercise}(...) built a {type(module).__name__}, not an nn.Module")
    if seed_params is not None:
        # Same values into every parameter, in name order, so learner and reference agree.
        gen = torch.Generator().manual_seed(seed_params)
        with torch.no_grad():
            for _, p in sorted(module.named_parameters()):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    module.eval()
    if device is not None or dtype is not None:
        module = module.to(device=device, dtype=_dtype(dtype))
    return module


def module_forward(ns, exercise, ctor_args=(), ctor_kwargs=None, forward_args=(), forward_kwargs=None,
                   device=None, dtype=None, seed_params=None, input_dtype=None):
    """Build the module (seeded parameters, eval mode), optionally `.to(device, dtype)`, run forward."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _module(ns, exercise, ctor_args, ctor_kwargs or {}, device, dtype, seed_params)
    in_dtype = _dtype(input_dtype or dtype)
    with torch.no_grad():
        out = module(*build(list(forward_args), device, in_dtype), **build(forward_kwargs or {}, device, in_dtype))
    return _pack({}, "out", out)



def _raised_inside_torch(exc):
    """True when the innermost frame of the traceback is torch's own code."""
    return unfinished_function(exc) is None


def unfinished_function(exc):
    """The exercise whose unfinished body raised `exc` (a NotImplementedError): the function, or the class
    of the method, of the innermost frame; None when torch itself raised it (an unsupported operation)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    code = tb.tb_frame.f_code
    if f"{os.sep}torch{os.sep}" in code.co_filename:
        return None
    qualname = getattr(code, "co_qualname", code.co_name)  # RoPEAttention.forward, f.<locals>.g
    return qualname.split("<locals>.")[-1].split(".")[0]  # -> RoPEAttention, g


def uses_candidates(table_name):
    """Mark a probe that runs a learner's property test on named candidate functions: `catalog` hands it the
    candidates registered as `table_name` in every module it lists (the public ones here, the grader's hidden
    ones in its own modules), merged there; no module adds to another's table. The sandbox's child hands it the
    grader's opaque callables instead (grader/sandbox/runtime/candidate_calls.py)."""

    def mark(fn):
        fn.candidate_table = table_name
        return fn

    return mark
