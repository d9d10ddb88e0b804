# Generated from course/06_performance/probes.py by `python -m grader build`: edit there.
"""Chapter 6 probes: a module whose forward takes a dtype, and what a module keeps in its state_dict."""

from __future__ import annotations

try:
    from .probes_base import _dtype, _module, module_forward, registry
except ImportError:  # flat in the sandbox
    from probes_base import _dtype, _module, module_forward, registry

PROBES, probe = registry()


@probe
def module_forward_dtype(ns, exercise, out_dtype, **params):
    """module_forward with forward(..., dtype=torch.<out_dtype>): a dtype cannot be written as JSON data."""
    params["forward_kwargs"] = {**(params.get("forward_kwargs") or {}), "dtype": _dtype(out_dtype)}
    return module_forward(ns, exercise, **params)


@probe
def module_state(ns, exercise, ctor_args=(), ctor_kwargs=None):
    """Trainable parameters, buffers, and how many entries state_dict() holds (non-persistent buffers: none)."""
    module = _module(ns, exercise, ctor_args, ctor_kwargs or {})
    return {
        "n_trainable": sum(p.numel() for p in module.parameters() if p.requires_grad),
        "n_params": sum(p.numel() for p in module.parameters()),
        "n_buffers": len(list(module.buffers())),
        "n_state_dict": len(module.state_dict()),
    }
