"""Probes: small trusted routines that exercise one learner object and return plain data.

The same probe runs three places: on the learner's code in the grader's sandbox child, on the
learner's code inside their own kernel (self-checks), and on the reference in the grader's
process. The results are compared elsewhere (`evaluate.py`), never here, so nothing a
submission does to torch can change a verdict.

Chapters add probes in their folder, `course/NN_name/probes.py`, which the build ships beside this file as
`probes_chNN.py` (listed in `chapter_probes.py`), and the device probes (the meta device
standing in for a GPU) live in `probes_meta.py`, each with a registry of its own; what they share
(registry, `build`, `_pack`, ...) is in `probes_base.py`. The catalog at the end of this module lists
them explicitly (inside the package and in the sandbox, where these files sit flat in a folder of their
own). The grader's hidden probe modules are added with `catalog(*modules)`.

A probe takes the namespace that holds the exercise and JSON-able parameters, and returns a
dict of str -> Tensor | bool | int | float | str | None | list. Tensors come back on the CPU;
the device and dtype they had are reported beside them as `<key>:device` and `<key>:dtype`.

Inputs are described as data, e.g. {"t": "randn", "shape": [2, 8, 16], "seed": 0}, and built
here from a seeded generator, so the learner's run and the reference run see identical tensors.
"""

import functools
import sys

import torch

try:
    from .probes_base import (
        NotImplementedYet,
        _dtype,
        _get,
        _module,
        _pack,
        _skip_without,
        build,
        module_forward,
        registry,
        unfinished_function,
    )
except ImportError:  # flat in the sandbox
    from probes_base import (
        NotImplementedYet,
        _dtype,
        _get,
        _module,
        _pack,
        _skip_without,
        build,
        module_forward,
        registry,
        unfinished_function,
    )

PROBES, probe = registry()


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



probe(module_forward)  # written in probes_base.py: chapter 6's module_forward_dtype calls it too


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
    from . import chapter_probes, probes_meta
except ImportError:  # flat in the sandbox
    import chapter_probes
    import probes_meta

# every probe module beside this one (the sandbox copies each of these files): the device probes, and each
# chapter's (course/NN_name/probes.py, shipped as probes_chNN.py and listed in chapter_probes.py by the build)
CHAPTER_MODULES = (probes_meta, *chapter_probes.MODULES)


def catalog(*extra_modules):
    """{name: probe} of this module, the chapter modules and `extra_modules` (the grader's hidden ones)."""
    modules = (sys.modules[__name__], *CHAPTER_MODULES, *extra_modules)
    out = {}
    for module in modules:
        clash = set(out) & set(module.PROBES)
        if clash:
            raise ValueError(f"probe names defined twice: {sorted(clash)}")
        out.update(module.PROBES)
    # a probe marked @uses_candidates(TABLE) gets the union of every listed module's TABLE, merged here
    for name, fn in list(out.items()):
        if getattr(fn, "candidate_table", None):
            table = merged_candidates(fn.candidate_table, modules)
            out[name] = functools.update_wrapper(functools.partial(fn, table=table), fn)
    return out


def merged_candidates(table_name, modules):
    """{name: candidate function}: the tables called `table_name` in `modules`, merged (a name once only)."""
    out = {}
    for module in modules:
        table = getattr(module, table_name, {})
        clash = set(out) & set(table)
        if clash:
            raise ValueError(f"candidate names defined twice: {sorted(clash)}")
        out.update(table)
    return out


CATALOG = catalog()


def warm_up():
    """The meta device's first use (probes_meta.warm_up), paid by the sandbox's zygote once before forking and by a
    learner's kernel when it imports the self-check."""
    probes_meta.warm_up()
