"""Chapter 2 probes: the meta-device check, tolerant of data-dependent validation.

`meta_forward` (probes.py) runs a module on the meta device, where a tensor has a shape but no values.
Code that validates its input by reading values, `if position_ids.max() >= self.max_len: raise ...`,
is correct on a GPU but cannot run there: `.item()` and `bool()` raise on meta tensors. This probe
answers those reads with zero (False for a bool) so that validation passes through, and otherwise
judges exactly as `meta_forward` does: one device per op, output on meta.
"""

from __future__ import annotations

import torch

try:
    from .probes import _module, _OneDevicePerOp, build, probe
except ImportError:  # flat in the sandbox
    from probes import _module, _OneDevicePerOp, build, probe


class _MetaValuesAreZero(_OneDevicePerOp):
    """_OneDevicePerOp, plus: reading a value out of a meta tensor gives 0 (False, 0.0) instead of raising."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func._schema.name == "aten::_local_scalar_dense" and args and isinstance(args[0], torch.Tensor) \
                and args[0].device.type == "meta":
            tensor = args[0]
            if tensor.dtype == torch.bool:
                return False
            return 0.0 if tensor.is_floating_point() or tensor.is_complex() else 0
        return super().__torch_dispatch__(func, types, args, kwargs)


@probe
def meta_forward_tolerant(ns, exercise, ctor_args=(), ctor_kwargs=None, forward_args=(),
                                     forward_kwargs=None):
    """Move the module to meta and run it there; values read back from meta tensors are 0."""
    module = _module(ns, exercise, ctor_args, ctor_kwargs or {})
    module = module.to("meta")
    try:
        with _MetaValuesAreZero():
            out = module(*build(list(forward_args), "meta"), **build(forward_kwargs or {}, "meta"))
    except NotImplementedError:
        raise
    except Exception as exc:
        return {"ok": False, "problem": f"{type(exc).__name__}: {exc}"[:400]}
    out = out[0] if isinstance(out, (tuple, list)) else out
    device = out.device.type if isinstance(out, torch.Tensor) else type(out).__name__
    return {"ok": device == "meta", "problem": "" if device == "meta" else f"output on {device}, not meta"}
