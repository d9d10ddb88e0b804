"""Read what a sandbox child sent back, as data only.

The session server wrote the child's result lines into files (sandbox/runtime/session_server.py). Here they are read
without following links, size-capped, parsed as JSON + safetensors (nothing is unpickled), and
checked: plain values, exact `torch.Tensor`s only, dtypes as reported, every string cleaned of
control characters (escape.clean) where it enters the grader. Anything else is a missing result,
and a missing result is a zero.
"""

from __future__ import annotations

import json

import torch
from safetensors.torch import load as load_tensors

from posenc_selfcheck import messages, store

from .escape import clean
from .files import read_regular
from .records import no_result
from .settings import ANSWER


class BadResult(ValueError):
    pass


def read_file(path, limit):
    """The result file's bytes: a regular file no larger than `limit`, or BadResult."""
    data = read_regular(path, limit)
    if data is None:
        raise BadResult("not a regular file of a sensible size")
    return data


def validated(result):
    """A probe result as the grader accepts it: str keys; None, bool, int, float, str (cleaned), lists
    of numbers, and exact torch.Tensors whose dtype matches what the result says about them."""
    if not isinstance(result, dict) or len(result) > ANSWER.keys:
        raise BadResult("not a dict of results")
    for key, value in list(result.items()):
        if not isinstance(key, str) or len(key) > ANSWER.key_chars:
            raise BadResult("a key is not a short string")
        if type(value) is torch.Tensor or value is None or isinstance(value, (bool, int, float)):
            continue
        if isinstance(value, str) and len(value) <= ANSWER.string_chars:
            result[key] = clean(value, ANSWER.string_chars)
            continue
        if isinstance(value, list) and len(value) <= ANSWER.list_items \
                and all(isinstance(v, (bool, int, float)) for v in value):
            continue
        raise BadResult(f"{clean(key, ANSWER.quoted_key_chars)} holds a {type(value).__name__}")
    for key, value in result.items():
        claimed = result.get(f"{key}:dtype")
        if type(value) is torch.Tensor and claimed is not None and claimed != str(value.dtype).replace("torch.", ""):
            raise BadResult(f"{key} is said to be {clean(claimed, ANSWER.quoted_dtype_chars)} but holds {value.dtype}")
    return result


def load_result(outdir, token, tensor_limit):
    plain = json.loads(read_file(outdir / f"{token}.json", ANSWER.json_bytes))
    tensors = load_tensors(read_file(outdir / f"{token}.safetensors", tensor_limit))
    if not isinstance(plain, dict) or not all(isinstance(v, dict) for v in plain.values()):
        raise BadResult("malformed")
    return validated(store.join(tensors, plain).get("r"))


def collect(outdir, requests, ended, tensor_limit):
    """({token: result}, [(where, what)], [index of each statement the alarm cut]) from one child's result
    folder."""
    results = {}
    for request in requests:
        try:
            result = load_result(outdir, request.token, tensor_limit)
        except FileNotFoundError:
            why = ended if ended != "ok" else messages.msg("the process left no result")
            result = no_result(messages.msg("no result: {why}", why=why))
        except Exception as exc:  # whatever a hostile child managed to send: a missing result
            why = messages.verbatim(clean(exc, ANSWER.quoted_error_chars))
            result = no_result(messages.msg("no result: what came back was not a plain result ({why})", why=why))
        results[request.token] = result
    log, timed_out = [], []
    try:
        entries = [e for e in json.loads(read_file(outdir / "_exec.json", ANSWER.json_bytes)) if isinstance(e, dict)]
        # a statement the alarm cut is said by the session's note on it (host/session.py); a statement that called
        # sys.exit, in the grader's words; any other, what the learner's code raised
        log = [(clean(e.get("where"), ANSWER.log_where_chars),
                messages.msg("called sys.exit({code}); skipped",
                             code=messages.verbatim(clean(e["exit"], ANSWER.log_error_chars)))
                if "exit" in e else clean(e.get("error"), ANSWER.log_error_chars))
               for e in entries if "timed_out" not in e][:ANSWER.log_entries]
        timed_out = [e["timed_out"] for e in entries if type(e.get("timed_out")) is int]
    except Exception:
        pass
    return results, log, timed_out
