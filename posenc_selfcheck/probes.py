"""Probes: small trusted routines that exercise one learner object and return plain data.

The same probe runs three places: on the learner's code in the grader's sandbox child, on the
learner's code inside their own kernel (self-checks), and on the reference in the grader's
process. The results are compared elsewhere (`evaluate.py`), never here, so nothing a
submission does to torch can change a verdict.

Chapters add probes in `probes_chNN.py` beside this file, and the device probes (the meta device
standing in for a GPU) live in `probes_meta.py`, each with a registry of its own; the catalog at the
end of this module lists them explicitly (inside the package and in the sandbox,
where these files sit flat in a folder of their own). The grader's hidden probe modules are added
with `catalog(*modules)`.

A probe takes the namespace that holds the exercise and JSON-able parameters, and returns a
dict of str -> Tensor | bool | int | float | str | None | list. Tensors come back on the CPU;
the device and dtype they had are reported beside them as `<key>:device` and `<key>:dtype`.

Inputs are described as data, e.g. {"t": "randn", "shape": [2, 8, 16], "seed": 0}, and built
here from a seeded generator, so the learner's run and the reference run see identical tensors.
"""

from __future__ import annotations

import math
import os
import sys

import torch
from torch import nn


def registry():
    """(table, decorator): a probe module's own registry; `@probe` adds a function under its name."""
    table = {}

    def register(fn):
        table[fn.__name__] = fn
        return fn

    return table, register


PROBES, probe = registry()


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


# ----------------------------------------------------------------------------------------------
# probes
# ----------------------------------------------------------------------------------------------
@probe
def call(ns, exercise, args=(), kwargs=None, device=None, dtype=None):
    """fn(*args, **kwargs) with tensor inputs built on `device` in `dtype`."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    fn = _get(ns, exercise)
    out = fn(*build(list(args), device, _dtype(dtype)), **build(kwargs or {}, device, _dtype(dtype)))
    return _pack({}, "out", out)


@probe
def raises(ns, exercise, args=(), kwargs=None, ctor_args=None, ctor_kwargs=None, forward_args=None,
           forward_kwargs=None):
    """Call a function (or build a module and call it) and report which exception came out."""
    obj = _get(ns, exercise)
    try:
        if ctor_args is None and ctor_kwargs is None:
            obj(*build(list(args)), **build(kwargs or {}))
        else:
            module = obj(*build(ctor_args or []), **build(ctor_kwargs or {}))
            if forward_args is not None or forward_kwargs is not None:
                module(*build(forward_args or []), **build(forward_kwargs or {}))
    except NotImplementedError:
        raise
    except Exception as exc:  # the point of this probe is to see which one
        return {"raised": type(exc).__name__, "message": str(exc)[:500]}
    return {"raised": None, "message": ""}


@probe
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


@probe
def module_info(ns, exercise, ctor_args=(), ctor_kwargs=None, attr=None):
    """Parameters, buffers and one attribute of a freshly built module."""
    module = _module(ns, exercise, ctor_args, ctor_kwargs or {})
    params = list(module.parameters())
    info = {
        "n_trainable": sum(p.numel() for p in params if p.requires_grad),
        "n_params": sum(p.numel() for p in params),
        "n_buffers": len(list(module.buffers())),
        "is_module": True,
    }
    if attr is not None:
        sub = getattr(module, attr, None)
        info["attr_type"] = type(sub).__name__ if sub is not None else None
        weight = getattr(sub, "weight", None)
        if isinstance(weight, torch.Tensor):
            w = weight.detach().float()
            info["attr_shape"] = list(w.shape)
            info["attr_requires_grad"] = bool(weight.requires_grad)
            info["attr_std"] = float(w.std())
            info["attr_mean"] = float(w.mean())
            info["attr_absmax"] = float(w.abs().max())
    return info


@probe
def permute_tokens(ns, exercise, batch=2, seq=6, dim=8, seed=0):
    """Self-attention of x and of x with its tokens permuted; the property is checked elsewhere."""
    fn = _get(ns, exercise)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 1, seq, dim, generator=gen)  # (B, 1, L, D): one head
    perm = torch.randperm(seq, generator=gen)  # (L,)
    out = fn(x, x, x)  # (B, 1, L, D)
    out_perm = fn(x[:, :, perm], x[:, :, perm], x[:, :, perm])  # (B, 1, L, D)
    result = _pack({}, "out", out)
    _pack(result, "out_perm", out_perm)
    result["perm"] = perm
    return result


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


def run(ns, probe_name, params, exercise, table=None):
    """Run one probe of `table` (default: the public catalog) on `exercise`; failures come back as
    data, never as an exception."""
    try:
        return (CATALOG if table is None else table)[probe_name](ns, exercise, **params)
    except NotImplementedYet as exc:
        return {"error": f"{exc} is not defined", "error_type": "NotImplementedYet"}
    except NotImplementedError as exc:
        where = unfinished_function(exc)
        if where is None:  # a real error (an op torch does not support), not a stub
            return {"error": f"NotImplementedError: {exc}"[:1000], "error_type": "TorchNotImplementedError"}
        return {"error": str(exc) or "raised NotImplementedError", "error_type": "NotImplementedError",
                "unfinished": where}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:1000], "error_type": type(exc).__name__}


# ----------------------------------------------------------------------------------------------
# the catalog: this module's probes and every chapter's, listed explicitly
# ----------------------------------------------------------------------------------------------
try:  # (at the end: the chapter modules use the helpers above)
    from . import probes_ch03, probes_ch04, probes_ch05, probes_ch06, probes_ch07, probes_ch08, probes_meta
except ImportError:  # flat in the sandbox
    import probes_ch03
    import probes_ch04
    import probes_ch05
    import probes_ch06
    import probes_ch07
    import probes_ch08
    import probes_meta

# every probe module beside this one (the sandbox copies each of these files)
CHAPTER_MODULES = (probes_meta, probes_ch03, probes_ch04, probes_ch05, probes_ch06, probes_ch07, probes_ch08)


def catalog(*extra_modules):
    """{name: probe} of this module, the chapter modules and `extra_modules` (the grader's hidden ones)."""
    out = {}
    for module in (sys.modules[__name__], *CHAPTER_MODULES, *extra_modules):
        clash = set(out) & set(module.PROBES)
        if clash:
            raise ValueError(f"probe names defined twice: {sorted(clash)}")
        out.update(module.PROBES)
    return out


CATALOG = catalog()


def warm_up():
    """torch loads its meta-device kernels (and torch._dynamo with them) on first use, about a second.
    The sandbox's zygote pays it once before forking; a learner's kernel pays it when it imports the
    self-check; the grader's own process never needs the meta device and never pays it."""
    torch.empty(1, device="meta") + 1
