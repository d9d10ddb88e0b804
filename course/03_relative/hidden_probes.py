"""Chapter 3 probes kept out of the student release: Shaw's attention at scale under a memory cap.
(Its self-check counterpart measures the largest buffer on the meta device: probes_meta.py.)

`memory_capped_call` runs the exercise in a forked child whose address space may grow only by a
fixed allowance beyond what is mapped at the fork. It works the same in the sandbox (learner code,
where the child is a grandchild of the fork server) and in the grader's process (the reference, which
fits with room to spare). The child sends back a plain header and raw bytes through a pipe; nothing is
unpickled. When the child runs out of memory, the result is an error that says how large the
allocation was and which tensor of that size the learner most likely built.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import select
import signal
import time

import torch

try:
    from posenc_selfcheck.probes_base import _get, _pack, build, registry
except ImportError:  # flat in the sandbox
    from probes_base import _get, _pack, build, registry

PROBES, probe = registry()

_ALLOC = re.compile(r"allocate (\d+) bytes")


def _vm_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _sample(out, sample_step):
    """What memory_capped_call's answer holds of an output: every `sample_step`-th row (dimension -2), on the CPU."""
    return out.detach()[..., ::sample_step, :].to("cpu").contiguous()


def _child(fn, args, kwargs, allowance_bytes, cpu_seconds, sample_step, write_fd, vm):
    """Runs in the forked child: cap memory and CPU, call fn, write header + bytes, never return. `vm`: the
    address space mapped at fork, measured by the parent (Landlock may let only the parent read its /proc)."""
    available = None  # bytes of address space the call may add; less than asked when the sandbox's limit is lower
    try:
        torch.set_num_threads(1)  # one thread: safe after fork, and the same work everywhere
        granted = {}
        for which, limit in ((resource.RLIMIT_AS, vm + allowance_bytes), (resource.RLIMIT_CPU, cpu_seconds)):
            _, hard = resource.getrlimit(which)  # only ever lower a limit the process already has
            granted[which] = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(which, (granted[which], granted[which]))
        available = granted[resource.RLIMIT_AS] - vm
        with torch.no_grad():
            out = fn(*args, **kwargs)
        if type(out) is not torch.Tensor:
            header, payload = {"status": "error", "type": "TypeError",
                               "message": f"returned a {type(out).__name__}; expected a tensor"}, b""
        else:
            sample = _sample(out, sample_step)
            header = {"status": "ok", "shape": list(sample.shape), "dtype": str(sample.dtype).replace("torch.", ""),
                      "device": out.device.type}
            payload = sample.reshape(-1).view(torch.uint8).numpy().tobytes()
    except BaseException as exc:  # learner code may raise anything
        header, payload = {"status": "error", "type": type(exc).__name__, "message": str(exc)[:500]}, b""
    header["available"] = available
    try:
        data = json.dumps(header).encode() + b"\n" + payload
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
    finally:
        os._exit(0)


def _read_all(fd, deadline):
    """Everything the child writes, or None when the deadline passes first."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _explain(message, known_sizes):
    """'it tried to allocate 8.6 GB at once, exactly a (1, 8, 2048, 2048, 64) float32 tensor (...)'."""
    found = _ALLOC.search(message)
    if not found:
        return "it ran out of memory"
    nbytes = int(found.group(1))
    text = f"it tried to allocate {nbytes / 1e9:.1f} GB at once"
    for shape, itemsize, what in known_sizes:
        if math.prod(shape) * itemsize == nbytes:
            return f"{text}: exactly the size of a {tuple(shape)} tensor, {what}"
    return text


@probe
def memory_capped_call(ns, exercise, args=(), kwargs=None, *, allowance_mib, timeout_s, sample_step=64,
                       known_sizes=(), where="", reference_note=""):
    """fn(*args, **kwargs) in a forked child with RLIMIT_AS = mapped now + allowance; returns every
    `sample_step`-th row (dimension -2) of the output, or an error that explains a memory failure. The allowance
    and the time are the check's own (exercises.py beside this file declares them)."""
    fn = _get(ns, exercise)
    args, kwargs = build(list(args)), build(kwargs or {})
    read_fd, write_fd = os.pipe()
    vm = _vm_bytes()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(fn, args, kwargs, allowance_mib << 20, int(timeout_s) + 5, sample_step, write_fd, vm)
    os.close(write_fd)
    data = None
    try:
        data = _read_all(read_fd, time.monotonic() + timeout_s)
    finally:
        os.close(read_fd)
        if data is None:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    where = where or "with inputs " + ", ".join(f"{tuple(a.shape)}" for a in args if isinstance(a, torch.Tensor))
    note = f" {reference_note}" if reference_note else ""
    if data is None:
        return {"error": f"TimeoutError: still running after {timeout_s} s {where}.{note}",
                "error_type": "TimeoutError"}
    if not data:
        why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        return {"error": f"the process running it ended without a result ({why}) {where}",
                "error_type": "NoResult"}
    line, _, payload = data.partition(b"\n")
    header = json.loads(line)
    if header["status"] != "ok":
        message = header["message"]
        if header["type"] == "MemoryError" or "can't allocate memory" in message or "Cannot allocate" in message:
            available = header.get("available") or 0
            if available < (allowance_mib << 20) - (64 << 20):
                limit = (f"the sandbox's own memory limit, which left only {available / 2**20:.0f} MiB of the "
                         f"{allowance_mib} MiB this check allows (a grader setting: tell your instructor)")
            else:
                limit = f"the memory limit ({allowance_mib / 1024:g} GiB beyond the inputs)"
            return {"error": f"MemoryError: over {limit} {where}: {_explain(message, known_sizes)}.{note}",
                    "error_type": "MemoryError"}
        return {"error": f"{header['type']}: {message}", "error_type": header["type"]}
    dtype = getattr(torch, header["dtype"])
    sample = torch.frombuffer(bytearray(payload), dtype=torch.uint8).view(dtype).reshape(header["shape"])
    result = _pack({}, "out", sample)
    result["out:device"] = header["device"]
    return result


def memory_capped_reference(ns, exercise, args=(), kwargs=None, *, sample_step=64, **_cap):
    """memory_capped_call's answer for the reference: the same call and the same sampled rows, in the grader's own
    process, with neither fork nor cap (its code is the course's; it needs about 0.5 GB and one second at L=2048, far
    within the grading process's own memory limit, remote._limit_memory). It runs in a thread beside the hidden
    children (grading._Meanwhile), where a fork could not. A known mistake's answer still goes through
    memory_capped_call: its allocation must meet the cap."""
    fn = _get(ns, exercise)
    args, kwargs = build(list(args)), build(kwargs or {})
    with torch.no_grad():
        out = fn(*args, **kwargs)
    result = _pack({}, "out", _sample(out, sample_step))  # as memory_capped_call's child sends it back
    result["out:device"] = out.device.type
    return result


memory_capped_call.reference = memory_capped_reference  # what grader/reference.py runs for the reference's answer
