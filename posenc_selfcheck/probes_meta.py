"""Device probes without a GPU: the `meta` device stands in for a second device.

A tensor built on a fixed device (`torch.arange(n)` on the CPU, a hard-coded "cuda") next to the
learner's meta tensors is exactly the bug that breaks a model on a GPU, and here it is caught on any
machine: `MetaDevice` raises as soon as one operation gets non-scalar tensors on two devices (an
`nn.Embedding` looked up with CPU indices included, which plain meta tensors would let pass).

Meta tensors have shapes but no values. So that code which reads values still runs every one of its
paths as on a real device (a bounds check `if position_ids.max() >= max_len`, a cache that grows
when a position reaches its length), `MetaDevice` keeps a shadow copy of every meta storage on the
CPU and runs each operation on the shadows too: reading a value from a meta tensor answers what the
same code would read on a GPU. (`values=False` skips the shadows, for code run at sizes that only
the meta device can afford; value reads then answer 0.)

Only device placement is judged here. An error that has nothing to do with devices (an operation the
meta device lacks, a learner's bug that other checks report) does not fail a device check; and
`torch.autocast(device_type=x.device.type, ...)`, which practitioners' RoPE code wraps around its
float32 computation and which refuses the meta device, is a no-op on meta while a probe runs.
"""

from __future__ import annotations

import contextlib

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

try:
    from . import dynamo_deferred
    from .messages import dumps, msg, verbatim
    from .probes_base import _get, _module, _raised_inside_torch, build, registry
except ImportError:  # flat in the sandbox
    import dynamo_deferred
    from messages import dumps, msg, verbatim
    from probes_base import _get, _module, _raised_inside_torch, build, registry

PROBES, probe = registry()


class DeviceMix(RuntimeError):
    """One operation got non-scalar tensors on two devices: `op` the operation, `devices` their types."""

    def __init__(self, op, devices):
        super().__init__(f"{op} mixes tensors on {devices}")
        self.op, self.devices = op, devices


def _is_meta(a):
    return isinstance(a, torch.Tensor) and a.device.type == "meta"


def _meta_device(value):
    return value is not None and not isinstance(value, torch.Tensor) and str(value).startswith("meta")


class MetaDevice(TorchDispatchMode):
    """Judge device placement on the meta device: raise DeviceMix when an op mixes devices; keep CPU
    shadows of meta storages (when `values`) so that value reads answer real values; remember the
    largest buffer any operation creates (bytes and shape)."""

    CROSS_DEVICE = {"aten::copy_", "aten::_to_copy", "aten::lift_fresh", "aten::lift_fresh_copy"}
    # advanced indexing takes its index tensors on the CPU whatever the indexed tensor's device (torch: "indices
    # should be either on cpu or on the same device as the indexed tensor"): x[..., perm] with a CPU perm runs on a
    # GPU, a CPU table indexed by GPU positions does not
    INDEXING = {"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"}

    def __init__(self, values=True):
        super().__init__()
        self.values = values
        self.mirror = {}  # meta storage id -> (the meta storage, kept alive; its CPU shadow)
        self.largest = (0, None)

    # -- shadows ---------------------------------------------------------------------------------
    def _shadow(self, t, create=False):
        """The CPU tensor that holds t's values (same shape, strides and offset), or None."""
        storage = t.untyped_storage()
        key = storage._cdata
        if key not in self.mirror:
            if not create:
                return None
            self.mirror[key] = (storage, torch.UntypedStorage(storage.nbytes()))
        cpu = self.mirror[key][1]
        return torch.empty(0, dtype=t.dtype).set_(cpu, t.storage_offset(), t.shape, t.stride())

    def _on_shadows(self, func, args, kwargs):
        """func on the CPU shadows of its meta arguments; None when a meta argument has no shadow."""
        missing = []

        def swap(a):
            if _is_meta(a):
                shadow = self._shadow(a)
                if shadow is None:
                    missing.append(a)
                return shadow
            return torch.device("cpu") if _meta_device(a) and not isinstance(a, str) else a

        args, kwargs = tree_map(swap, (args, kwargs))
        if missing:
            return None, False
        if _meta_device(kwargs.get("device")):
            kwargs["device"] = torch.device("cpu")
        return func(*args, **kwargs), True

    def _remember(self, out, shadow_out):
        for o, s in zip(tree_leaves(out), tree_leaves(shadow_out)):
            if _is_meta(o) and isinstance(s, torch.Tensor) and s.shape == o.shape:
                self._shadow(o, create=True).copy_(s)

    # -- the dispatch ----------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name
        leaves = tree_leaves((args, kwargs))
        if name == "aten::_local_scalar_dense" and _is_meta(args[0]):
            shadow = self._shadow(args[0]) if self.values else None
            if shadow is not None:
                return shadow.item()
            dtype = args[0].dtype
            return False if dtype == torch.bool else 0.0 if (dtype.is_floating_point or dtype.is_complex) else 0
        judged = leaves
        if name in self.INDEXING and len(args) > 1:  # CPU indices count for nothing
            judged = tree_leaves((args[0], args[2:], kwargs)) + [i for i in tree_leaves(args[1])
                                                                 if not (isinstance(i, torch.Tensor) and
                                                                         i.device.type == "cpu")]
        devices = {a.device.type for a in judged if isinstance(a, torch.Tensor) and a.dim() > 0}
        if len(devices) > 1 and name not in self.CROSS_DEVICE:
            raise DeviceMix(name, sorted(devices))
        involved = any(_is_meta(a) for a in leaves) or _meta_device(kwargs.get("device"))
        if not (involved and self.values):
            out = func(*args, **kwargs)
            self._record(out)
            return out
        shadow_out, ok = self._on_shadows(func, args, kwargs)  # a real error (an index out of range) raises here
        try:
            out = func(*args, **kwargs)
        except (NotImplementedError, RuntimeError):
            if not ok:
                raise
            # the meta device cannot run it (a shape that depends on values, a copy back to the CPU):
            # the shadows answer; outputs meant for a meta tensor get a meta twin
            to_cpu = kwargs.get("device") is not None and not _meta_device(kwargs.get("device"))
            out = shadow_out if to_cpu else tree_map(
                lambda s: torch.empty_strided(s.shape, s.stride(), dtype=s.dtype, device="meta")
                if isinstance(s, torch.Tensor) else s, shadow_out)
        if ok:
            self._remember(out, shadow_out)
        self._record(out)
        return out

    def _record(self, out):
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type == "meta":
                nbytes = t.untyped_storage().nbytes()
                if nbytes > self.largest[0]:
                    self.largest = (nbytes, tuple(t.shape))


@contextlib.contextmanager
def _autocast_accepts_meta():
    """torch.autocast(device_type="meta", ...) becomes a no-op context (on meta nothing is computed)."""
    cls = torch.amp.autocast_mode.autocast
    saved = cls.__init__, cls.__enter__, cls.__exit__

    def init(self, device_type, *args, **kwargs):
        if device_type == "meta":
            self.device, self._enabled, self.fast_dtype = "meta", False, kwargs.get("dtype") or torch.float32
            return
        saved[0](self, device_type, *args, **kwargs)

    def enter(self):
        return self if self.device == "meta" else saved[1](self)

    def exit(self, *exc):
        return False if self.device == "meta" else saved[2](self, *exc)

    cls.__init__, cls.__enter__, cls.__exit__ = init, enter, exit
    try:
        yield
    finally:
        cls.__init__, cls.__enter__, cls.__exit__ = saved


def _device_problem(exc):
    """The message for a device error (as it crosses from the child: messages.dumps), or None when the error is not
    about devices."""
    if isinstance(exc, DeviceMix):
        return dumps(msg("DeviceMix: {operation} mixes tensors on {devices}", operation=exc.op,
                         devices=str(exc.devices)))
    text = f"{type(exc).__name__}: {exc}"
    if "cuda" in text.lower() or "device" in text.lower():
        return dumps(verbatim(text[:400]))  # what torch or the learner's code said
    return None


_WARM = []  # [True] once this process has used the meta device (forked children inherit it)


def warm_up():
    """The meta device's first use in this process: torch loads its meta kernels (about half a second; they would
    import torch._dynamo too: deferred, see dynamo_deferred.py). Once per process; `on_meta` calls it first."""
    if _WARM:
        return
    dynamo_deferred.defer()
    torch.empty(1, device="meta") + 1
    dynamo_deferred.defer()  # the functions marked by the modules that first use imported
    _WARM.append(True)


def on_meta(run, values=True):
    """run(mode) under MetaDevice with autocast accepting meta: ({"ok", "problem"[, "note"]}, mode)."""
    warm_up()
    mode = MetaDevice(values=values)
    try:
        with _autocast_accepts_meta(), mode:
            out = run()
    except NotImplementedError as exc:
        if not _raised_inside_torch(exc):
            raise  # an unfinished exercise
        return {"ok": True, "problem": "", "note": dumps(msg("the meta device cannot run an operation: {error}",
                                                             error=verbatim(str(exc)[:200])))}, mode
    except Exception as exc:
        problem = _device_problem(exc)
        if problem:
            return {"ok": False, "problem": problem}, mode
        # not a device error: other checks judge it; device placement was fine up to there
        error = verbatim(f"{type(exc).__name__}: {str(exc)[:200]}")
        return {"ok": True, "problem": "", "note": dumps(msg("stopped early on the meta device: {error}",
                                                             error=error))}, mode
    out = out[0] if isinstance(out, (tuple, list)) else out
    device = out.device.type if isinstance(out, torch.Tensor) else type(out).__name__
    return {"ok": device == "meta",
            "problem": "" if device == "meta" else dumps(msg("output on {device}, not meta", device=device))}, mode


@probe
def meta_forward(ns, exercise, ctor_args=(), ctor_kwargs=None, forward_args=(), forward_kwargs=None):
    """Move the module to the `meta` device and run it on meta inputs: code that builds a tensor on
    a fixed device (the CPU) fails here exactly as it would on a GPU."""
    module = _module(ns, exercise, ctor_args, ctor_kwargs or {})

    def run():
        moved = module.to("meta")  # inside the mode: the buffers keep their values as shadows
        return moved(*build(list(forward_args), "meta"), **build(forward_kwargs or {}, "meta"))

    return on_meta(run)[0]


@probe
def meta_call(ns, exercise, args=(), kwargs=None):
    """Call a function with its tensor inputs on the `meta` device."""
    fn = _get(ns, exercise)
    return on_meta(lambda: fn(*build(list(args), "meta"), **build(kwargs or {}, "meta")))[0]


@probe
def meta_largest_buffer(ns, exercise, args=(), kwargs=None, *, allowance_mib, known_sizes=(), where=""):
    """The largest buffer one call creates, measured on the meta device at a size no machine here could
    run (no values are computed): {"ok", "problem", "largest_bytes", "largest_shape"}. A buffer over
    `allowance_mib` (the check's own, grader/checks/ch03.py) fails, named after the tensor of that size in
    `known_sizes` ([shape, itemsize, what])."""
    fn = _get(ns, exercise)
    verdict, mode = on_meta(lambda: fn(*build(list(args), "meta"), **build(kwargs or {}, "meta")), values=False)
    nbytes, shape = mode.largest
    result = {"ok": True, "problem": "", "largest_bytes": int(nbytes), "largest_shape": list(shape or ())}
    if "note" in verdict or not verdict["ok"]:  # not measurable here: the device checks say why
        return {**result, "note": verdict.get("note") or verdict["problem"]}
    if nbytes > allowance_mib << 20:
        what = next((w for s, size, w in known_sizes if tuple(s) == tuple(shape or ()) and
                     size * _numel(s) == nbytes), None)
        result["ok"] = False
        # `where` the sizes (code: "at B=1, H=8, ..."); a known size's `what` declared words (grader/checks/ch03.py,
        # in the catalog as the candidates' descriptions are)
        problem = msg("{where} one buffer is {gb:.1f} GB, more than the whole {gib:g} GiB the grader allows: a "
                      "{shape} tensor", where=where, gb=nbytes / 1e9, gib=allowance_mib / 1024, shape=str(tuple(shape)))
        if what:
            problem = msg("{problem}, {what}", problem=problem, what=msg(what))
        result["problem"] = dumps(problem)
    return result


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n
