"""The candidate server: the functions a learner's property test is run on are computed here, in the trusted
grading process, never in the learner's.

Chapter 4's `check_relative_property` and chapter 8's `check_axial_property` are graded by mutation
(grader/checks/mutation.py): the learner's test runs in the sandbox on candidate RoPEs, correct and broken. The
child gets opaque callables instead of the candidates (sandbox/runtime/candidate_calls.py); each call sends the
arguments here, through the session (sandbox/host/session.py), and the value goes back:

    calls = Calls()                                     # one child's run
    params = calls.params(token, probe, params)         # the candidates' names replaced by tokens for this request
    run = session.run(statements, requests, read, seconds, calls)   # answers each call: calls.answer(request, data)
    result = calls.restore(token, result)               # the verdicts keyed by the candidates' names again

What the learner's code can learn of a candidate is its value on arguments of its choosing, nothing else:

- its **name** never leaves this process: a request carries a token drawn for that request and that candidate,
  in an order drawn for the run (grading._in_run_order); a callable from another request is refused;
- its **code** stays here (the sandbox's runtime folder holds no hidden candidate: hidden_probes.MODULE_NAMES);
- its **time**: an answer computed by a candidate comes back `pad(x, position_ids)` after the call reached
  this process (or a multiple of it, when the machine was slower), a time set by the arguments' size alone.
  The first call of a property test with a new kind of arguments runs every candidate of the probe on them
  once, so no candidate pays a first use of its own; the pad (`settings.CandidateCalls`) is 3 to 5 times the
  slowest candidate's time (measured on the course's machine, two cores under load: 3.6 ms for 65536 elements
  of x, 32 ms for 2^20, the float64 ones);
- its **errors**: one sentence, the same for every candidate.

Each call is checked as every answer crossing the boundary is: its bytes bounded (`CANDIDATES.call_bytes`,
refused by the session unread past that), read as safetensors (nothing is unpickled: plain tensors only), the
arguments within `candidate_calls.check_arguments`; a check's calls are bounded (`CANDIDATES.per_candidate` for each
of its candidates), and their time counts against the exercise's wall clock. A malformed, oversized or
surplus call is refused with a sentence: the learner's test gets a ValueError, and only that check suffers.
"""

from __future__ import annotations

import base64
import math
import secrets
import time
from functools import lru_cache

from .sandbox import wire
from .sandbox.runtime.candidate_calls import check_arguments, pack
from .settings import CANDIDATES

NOT_NOW = "no candidate function can be called now: call rope_fn while your test is being run on it"
TOO_MANY = "a check's candidates were called too often: at most {n} calls per candidate"
NOT_RECEIVED = "the call's arguments were not received: they are larger than {n} bytes"
MALFORMED = "the call's arguments could not be read: x and position_ids are plain tensors"
FAILED = ("this candidate could not be applied to x {x} and position_ids {ids}: pass the shapes the exercise "
          "describes")
TOO_LARGE = "this candidate's value would be larger than {n} elements: pass smaller arguments"


@lru_cache(maxsize=None)
def tables():
    """{probe: {name: candidate function}}: every probe that runs a property test on candidates, with the public
    and hidden candidates merged (hidden_probes.catalog)."""
    from . import hidden_probes

    return {name: fn.keywords["table"] for name, fn in hidden_probes.catalog().items()
            if getattr(fn, "candidate_table", None)}


def pad(x, position_ids):
    """Seconds an answer takes, whichever candidate computed it: set by the arguments' size alone."""
    # pad_seconds + pad_element_seconds · (elements of x and position_ids)
    return CANDIDATES.pad_seconds + CANDIDATES.pad_element_seconds * (x.numel() + position_ids.numel())


def _wait_until(begun, seconds):
    """Sleep until `seconds` after `begun` (time.monotonic), or the next multiple of it when that has passed."""
    elapsed = time.monotonic() - begun
    target = seconds * max(1, math.ceil(elapsed / seconds))
    time.sleep(max(0.0, target - (time.monotonic() - begun)))


_WARM = set()  # (probe, dtypes) for which every candidate has run once in this process


def _value(fn, x, position_ids):
    """A candidate's value as an Answer (every error the same sentence, whatever the candidate)."""
    import torch

    try:
        with torch.no_grad():
            out = fn(x, position_ids)
    except Exception:  # our code, on the learner's arguments: which error it was would tell the candidate apart
        return wire.Answer(error=FAILED.format(x=tuple(x.shape), ids=tuple(position_ids.shape)))
    if type(out) is not torch.Tensor or out.dtype not in (torch.float16, torch.bfloat16, torch.float32,
                                                          torch.float64):
        return wire.Answer(error=FAILED.format(x=tuple(x.shape), ids=tuple(position_ids.shape)))
    if out.numel() > CANDIDATES.x_numel:
        return wire.Answer(error=TOO_LARGE.format(n=CANDIDATES.x_numel))
    return wire.Answer(data=base64.b64encode(pack({"out": out})).decode("ascii"))


class Calls:
    """One child's run: {request token: (probe, {candidate token: name}, calls left)}."""

    call_bytes = CANDIDATES.call_bytes

    def __init__(self):
        self.requests = {}

    @property
    def calls(self):
        """The calls the session stores for this run in all (past them it tells the grader without storing)."""
        return sum(CANDIDATES.per_candidate * len(names) for _, names, _ in self.requests.values())

    def params(self, request, probe, params):
        """`params` of one request, its candidates' names replaced by tokens drawn for this request (a probe that
        runs no property test: as they are)."""
        names = params.get("candidates")
        if probe not in tables() or not isinstance(names, list):
            return params
        tokens = {name: "c" + secrets.token_hex(8) for name in names}
        self.requests[request] = (probe, {t: n for n, t in tokens.items()}, [CANDIDATES.per_candidate * len(tokens)])
        return {**params, "candidates": [tokens[n] for n in names]}

    def restore(self, request, result):
        """A result with each candidate token in its keys ('<token>' or '<token>:<what>') given back its name."""
        entry = self.requests.get(request)
        if entry is None:
            return result
        names, out = entry[1], {}
        for key, value in result.items():
            head, sep, tail = key.partition(":")
            out[names.get(head, head) + sep + tail] = value
        return out

    def answer(self, request, data):
        """The Answer to one call made while `request` (a wire.Probe) runs; `data`: the call's bytes, or None when
        the session did not store them."""
        begun = time.monotonic()
        entry = self.requests.get(request.token)
        if entry is None:
            return wire.Answer(error=NOT_NOW)
        probe, names, left = entry
        if left[0] <= 0:
            return wire.Answer(error=TOO_MANY.format(n=CANDIDATES.per_candidate))
        left[0] -= 1
        if data is None or len(data) > CANDIDATES.call_bytes:
            return wire.Answer(error=NOT_RECEIVED.format(n=CANDIDATES.call_bytes))
        arguments = _arguments(data)
        if arguments is None:
            return wire.Answer(error=MALFORMED)
        token, x, position_ids = arguments
        if token not in names:
            return wire.Answer(error=NOT_NOW)
        why = check_arguments(x, position_ids)
        if why is not None:
            return wire.Answer(error=why)
        table = tables()[probe]
        kind = (probe, x.dtype, position_ids.dtype)
        if kind not in _WARM:  # every candidate once on these arguments: none pays a first use of its own
            for fn in table.values():
                _value(fn, x, position_ids)
            _WARM.add(kind)
            begun = time.monotonic()
        answer = _value(table[names[token]], x, position_ids)
        _wait_until(begun, pad(x, position_ids))
        return answer


def _arguments(data):
    """(token, x, position_ids) from a call's bytes (`<token>\\n<safetensors>`), or None."""
    from safetensors.torch import load

    token, newline, body = data.partition(b"\n")
    if not newline or len(token) > CANDIDATES.token_chars:
        return None
    try:
        tensors = load(body)
        token = token.decode("ascii")
    except Exception:  # whatever the child sent: not a call
        return None
    if set(tensors) != {"x", "position_ids"}:
        return None
    return token, tensors["x"], tensors["position_ids"]
