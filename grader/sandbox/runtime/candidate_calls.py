"""A property test's candidates inside the sandbox child: opaque callables whose values the grader computes, in
its own process (grader/candidates.py). Imported flat by child.py, and as `grader.sandbox.runtime.candidate_calls` by
the grader, which checks every call it receives with the same `check_arguments`.

A learner's `check_relative_property(rope_fn, head_dim)` (chapter 8: `check_axial_property`) is graded by
running it on candidate functions, correct and broken. Their code never enters this process: the probe
(probes_ch04.relative_property, probes_ch08.axial_property) is handed `table(tokens)` instead of the
candidates, and each entry is a `RopeFn`: an object with no attribute, no code, closure, defaults or name of
its own, every one alike but for its identity. Calling it checks the arguments, sends them on the result pipe
as one line `_call\\t<base64 of token\\n safetensors>` (the token: the one the grader drew for that candidate in
this request, which says nothing), and waits for the grader's Answer on the request pipe: the value, or why there
is none. Nothing of a candidate comes back but its value, after a time the grader pads so that it says
nothing either.

Calls travel on the child's two pipes, one at a time, within the request that handed out the callables: no
system call the child does not already make (read and write on its pipes), and the grader refuses a call
whose token is not one of the request in hand.
"""

import base64

import torch
from safetensors.torch import load, save

try:  # inside the grader's package, or copied flat beside child.py in the fork server's folder
    from .. import wire
    from ..constants import CANDIDATES
except ImportError:
    import wire
    from constants import CANDIDATES

# what one call may carry: CANDIDATES' bounds (the grader enforces them; the child refuses earlier, with the same
# words), and these dtypes
X_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
ID_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, *X_DTYPES)


def check_arguments(x, position_ids):
    """Why (x, position_ids) cannot be sent to a candidate, or None: plain dense tensors of real dtypes on the
    CPU, x (..., seq, head_dim) and position_ids with at most 3 dimensions, within CANDIDATES' bounds."""
    for name, value, dtypes in (("x", x, X_DTYPES), ("position_ids", position_ids, ID_DTYPES)):
        if type(value) is not torch.Tensor:
            return f"{name} is a {type(value).__name__}: a candidate takes plain torch.Tensor arguments"
        if value.layout != torch.strided or value.device.type == "meta":
            return (f"{name} is a {value.layout} tensor on {value.device.type}: a candidate takes dense tensors of "
                    "values")
        if value.dtype not in dtypes:
            return f"{name} has dtype {value.dtype}: a candidate takes {', '.join(str(d) for d in dtypes)}"
    if not 2 <= x.dim() <= CANDIDATES.x_ndim or position_ids.dim() > 3:
        return (f"x has {x.dim()} dimensions and position_ids {position_ids.dim()}: a candidate takes x (..., seq, "
                f"head_dim) with 2 to {CANDIDATES.x_ndim} dimensions and position_ids with at most 3")
    if (x.numel() > CANDIDATES.x_numel or x.shape[-1] > CANDIDATES.head_dim
            or position_ids.numel() * x.shape[-1] > CANDIDATES.angles):
        return (f"x {tuple(x.shape)} with position_ids {tuple(position_ids.shape)} is too large: a candidate takes "
                f"at most {CANDIDATES.x_numel} elements of x, head_dim at most {CANDIDATES.head_dim} and "
                f"position_ids.numel() x head_dim at most {CANDIDATES.angles}")
    return None


def pack(tensors):
    """Tensors as the bytes of a call or an answer (safetensors: nothing is unpickled on either side)."""
    return save({k: v.detach().to("cpu").contiguous() for k, v in tensors.items()})


class RopeFn:
    """A candidate function of the grader's: rope_fn(x, position_ids) -> a tensor shaped like x, computed outside
    this process."""

    __slots__ = ()

    def __call__(self, x, position_ids):
        token = _TOKENS.get(self)
        if token is None or _LINK is None:
            raise RuntimeError("this candidate belongs to another check: call it while your test is being run on it")
        if isinstance(x, torch.nn.Parameter):
            x = x.detach()
        if isinstance(position_ids, torch.nn.Parameter):
            position_ids = position_ids.detach()
        device = x.device if isinstance(x, torch.Tensor) else None
        if isinstance(x, torch.Tensor) and isinstance(position_ids, torch.Tensor) \
                and "meta" not in (x.device.type, position_ids.device.type):  # the grader computes on the CPU
            x, position_ids = x.detach().to("cpu"), position_ids.detach().to("cpu")
        why = check_arguments(x, position_ids)
        if why is not None:
            raise ValueError(why)
        data = token.encode("ascii") + b"\n" + pack({"x": x, "position_ids": position_ids})
        if len(data) > CANDIDATES.call_bytes:
            raise ValueError(f"the arguments take {len(data)} bytes: a call may carry at most "
                             f"{CANDIDATES.call_bytes}")
        answer = _LINK(data)
        if answer is None:
            raise RuntimeError("the grader did not answer this call")
        if answer.error is not None or not isinstance(answer.data, str):
            raise ValueError(str(answer.error)[:500])
        out = load(base64.b64decode(answer.data)).get("out")
        if type(out) is not torch.Tensor:
            raise RuntimeError("the grader's answer held no value")
        return out.to(device)


_TOKENS = {}  # {RopeFn: token} of the request in hand (only)
_LINK = None  # sends a call's bytes, returns the grader's wire.Answer (connect)


def connect(send, receive):
    """Calls go out with `send(name, payload)` (the result pipe) and their answers come from `receive()` (the
    request pipe's next Answer, or None at its end)."""
    global _LINK

    def link(data):
        send("_call", data)
        return receive()

    _LINK = link


def table(tokens):
    """{token: RopeFn} for one request's candidates; the callables of earlier requests answer no more."""
    _TOKENS.clear()
    out = {}
    for token in tokens if isinstance(tokens, list) else []:
        if isinstance(token, str) and token not in out:
            out[token] = RopeFn()
            _TOKENS[out[token]] = token
    return out


def answer_of(line):
    """The Answer in one line of the request pipe, or None."""
    return wire.Answer.from_wire(wire.unframe(line))
