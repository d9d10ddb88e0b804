"""Judge one probe result against what was expected: the verdict and the words that explain it.

A check is plain data (a dict), the same in the grader and in the learner's self-check:
    exercise, name, probe, params          what to run
    expect: "match" | "raises" | "fields" | "ok" | "property"
    tol, check_dtype                       for "match"
    raises, mentions                       for "raises": the exception and words its message must contain
    fields                                 for "fields": {key: value, {"range": [low, high]}, {"exact": value},
                                           or [low, high] (two numbers: a range)}
    property                               for "property": a name in properties.PROPERTIES
    hint                                   said when the check fails (a diagnosis of this check; the
                                           exercise's progressive hints live in hints.py)
    mistakes                               names of known mistakes to recognise in a wrong answer (the same
                                           result, or the same error raised on the same input)
"""

from __future__ import annotations

import torch

from .compare import close, describe, label, tensor_keys, tolerance
from .messages import Message, from_child, joined, msg, verbatim
from .properties import PROPERTIES
from .status import FAILED, MISSING, PASSED, SKIPPED


def _error_message(got):
    if got.get("error_type") in ("NotImplementedYet", "NotImplementedError"):
        said = got.get("error") if got.get("error_type") == "NotImplementedError" else ""
        if said:
            return MISSING, msg("not implemented yet ({said})", said=verbatim(said))
        return MISSING, msg("not implemented yet")
    if got.get("error_type") == "NoResult" and isinstance(got.get("said"), Message):  # the grader's words
        return FAILED, got["said"]
    return FAILED, msg("raised {error}", error=verbatim(got["error"]))


def _with_hint(message, hint):
    """The message, then the check's hint (a message) when there is one."""
    return msg("{problem}. Hint: {hint}", problem=message, hint=hint) if hint else message


def _match(check, got, expected):
    problems = []
    for key in tensor_keys(expected):
        exp = expected[key]
        dtype_name = expected.get(f"{key}:dtype", str(exp.dtype).replace("torch.", ""))
        atol, rtol = tolerance(check.get("tol"), dtype_name)
        if key not in got:
            problems.append(msg("{key}: missing from the result", key=key))
            continue
        if check.get("check_dtype", True) and f"{key}:dtype" in got and got[f"{key}:dtype"] != dtype_name:
            # an integer output (ids, indices) has the dtype the exercise states; a floating one follows its input's
            if dtype_name.startswith(("int", "uint")):
                problems.append(msg("{key}: expected dtype {expected}, got {got} (this integer output is {expected}: "
                                    "create it with dtype=torch.{expected}, or convert it with .to(torch.{expected}))",
                                    key=key, expected=dtype_name, got=verbatim(got[f"{key}:dtype"])))
            else:
                problems.append(msg("{key}: expected dtype {expected}, got {got} (outputs keep the input's floating "
                                    "dtype)", key=key, expected=dtype_name, got=verbatim(got[f"{key}:dtype"])))
            continue
        if f"{key}:device" in expected and got.get(f"{key}:device") != expected[f"{key}:device"]:
            problems.append(msg("{key}: expected it on {expected}, got {got} (outputs live on the input's device)",
                                key=key, expected=expected[f"{key}:device"], got=verbatim(got.get(f"{key}:device"))))
            continue
        message = describe(got[key], exp, atol, rtol, what=label(key))
        if message:
            problems.append(message)
    for key, value in expected.items():
        if not isinstance(value, torch.Tensor) and ":" not in key and key not in ("error", "error_type"):
            if got.get(key) != value:
                problems.append(msg("{key}: expected {expected}, got {got}", key=key, expected=repr(value),
                                    got=verbatim(repr(got.get(key)))))
    return problems


def _complex(got):
    """Why an answer is not judged at all, or None: it holds a complex tensor. No answer in this course is complex,
    and every comparison and property reads real numbers (cast to float64, a complex value loses its imaginary
    part, NaN included)."""
    for key, value in got.items():
        if isinstance(value, torch.Tensor) and value.is_complex():
            dtype = str(value.dtype).replace("torch.", "")
            return msg("{what} is a complex tensor ({dtype}): every answer in this course is real", what=label(key),
                       dtype=dtype)
    return None


def _not_finite(got):
    """Why an answer a property judges is not finite, or None. A property compares errors with a tolerance, where
    NaN > tol is False and inf - inf is NaN, and no answer it judges holds either. Read in float64, so that every
    floating dtype (float16, bfloat16, float8 too) is checked alike."""
    for key, value in got.items():
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            wide = value.detach().to("cpu", torch.float64)
            if wide.isnan().any():
                return msg("{what} holds NaN", what=label(key))
            if wide.isinf().any():
                return msg("{what} holds inf: a correct answer is finite everywhere", what=label(key))
    return None


def _dtypes(result, keys):
    """{key: dtype name} of an answer's tensors (what its `:dtype` says, else the tensor's own)."""
    return {k: result.get(f"{k}:dtype", str(result[k].dtype).replace("torch.", "")) for k in keys
            if isinstance(result.get(k), torch.Tensor)}


def blamed(check, got, expected, mistakes):
    """The first known mistake that explains what is wrong with the learner's answer, or None. A mistake's answer
    must equal the learner's (values, to the check's tolerance), and what sets it apart from the reference's
    must be wrong in the learner's answer too: its values (then the learner's values are not the reference's) or
    its dtype (then the learner's dtype is the mistake's: float32 tables promote a bfloat16 output). A mistake
    whose answer is the reference's on this input is never named: on one row, numbering the patches column by
    column is right, and an answer right in every value but its dtype is told its dtype."""
    for message, result in mistakes:
        if not same_answer(check, got, result):
            continue
        if expected is None:  # a property: the answer alone is judged
            return message
        keys = tensor_keys(expected)
        wrong_values = not same_answer(check, expected, result) and not same_answer(check, got, expected)
        wrong_dtype = _dtypes(got, keys) == _dtypes(result, keys) != _dtypes(expected, keys)
        if wrong_values or wrong_dtype:
            return message
    return None


def same_answer(check, got, other):
    """True when `got` has the values of `other` (a known mistake's answer, or the reference's) within the check's
    tolerance, whatever their dtypes."""
    if "error" in other or "error" in got:
        return False
    keys = tensor_keys(other)
    if not keys:
        return False
    for key in keys:
        atol, rtol = tolerance(check.get("tol"), str(other[key].dtype).replace("torch.", ""))
        if not close(got.get(key), other[key], max(atol, 1e-5), max(rtol, 1e-4)):
            return False
    return True


def named(mistake, problem):
    """A known mistake's message, then the problem that shows it."""
    return msg("{mistake} ({problem})", mistake=mistake, problem=problem)


def check_hint(check):
    """A check's hint as a message (its context: the check's key), or None."""
    return msg(check["hint"], context=check.get("key", "")) if check.get("hint") else None


def evaluate(check, got, expected=None, mistakes=(), with_hint=True):
    """Return (status, feedback message). `mistakes` is a list of (message, result of that mistake).
    `with_hint=False` leaves the check's hint out (the self-check gives it for the first failure only)."""
    hint = check_hint(check) if with_hint else None
    if "skipped" in got:
        return SKIPPED, verbatim(got["skipped"])
    message = _complex(got)
    if message:  # refused before any comparison or property reads the answer
        return FAILED, _with_hint(message, hint)
    expect = check["expect"]
    if "error" in got:
        status, message = _error_message(got)
        if status == FAILED:  # a known mistake that raises this very error on this input is its cause
            for mistake_message, result in mistakes:
                if "error" in result and (result["error"], result.get("error_type")) == (got["error"],
                                                                                         got.get("error_type")):
                    return FAILED, named(mistake_message, message)
        return status, _with_hint(message, hint) if status == FAILED else message
    if expect == "match":
        problems = _match(check, got, expected)
        if not problems:
            return PASSED, ""
        mistake = blamed(check, got, expected, mistakes)
        if mistake:
            return FAILED, named(mistake, problems[0])
        return FAILED, _with_hint(joined(problems), hint)
    if expect == "raises":
        want = check.get("raises", "ValueError")
        if got.get("raised") is None:
            return FAILED, _with_hint(msg("expected {exception}, but nothing was raised", exception=want), hint)
        if got["raised"] != want:
            return FAILED, _with_hint(msg("expected {exception}, got {raised}: {said}", exception=want,
                                          raised=verbatim(got["raised"]), said=verbatim(got["message"])), hint)
        missing = [w for w in check.get("mentions", []) if w.lower() not in got["message"].lower()]
        if missing:
            return FAILED, msg("raised {exception} as expected, but its message {said} should name {missing} so the "
                               "caller knows what to fix", exception=want, said=verbatim(repr(got["message"])),
                               missing=joined(map(repr, missing), msg(" and ")))
        return PASSED, ""
    if expect == "fields":
        problems = []
        for key, want in check["fields"].items():
            value = got.get(key)
            if isinstance(want, dict) and set(want) == {"exact"}:
                want = want["exact"]
                if value != want:
                    problems.append(msg("{key}: expected {expected}, got {got}", key=key, expected=repr(want),
                                        got=verbatim(repr(value))))
                continue
            if isinstance(want, dict) and set(want) == {"range"}:
                want = list(want["range"])
            if isinstance(want, list) and len(want) == 2 and all(isinstance(w, (int, float)) for w in want):
                if not isinstance(value, (int, float)) or not want[0] <= value <= want[1]:
                    problems.append(msg("{key} should lie in [{low}, {high}], got {got}", key=key, low=str(want[0]),
                                        high=str(want[1]), got=verbatim(repr(value))))
            elif value != want:
                problems.append(msg("{key}: expected {expected}, got {got}", key=key, expected=repr(want),
                                    got=verbatim(repr(value))))
        if not problems:
            return PASSED, ""
        return FAILED, _with_hint(joined(problems), hint)
    if expect == "ok":
        if got.get("ok"):
            return PASSED, ""
        # the child's words: a message of a known id decoded strictly, anything else verbatim (messages.from_child)
        problem = from_child(got["problem"]) if got.get("problem") else msg("failed")
        # a known mistake that fails this check with the very same problem (a tensor built on the CPU, mixed with
        # the input's in the same operation) is its cause
        for mistake_message, result in mistakes:
            if got.get("problem") and result.get("ok") is False and result.get("problem") == got["problem"]:
                return FAILED, named(mistake_message, problem)
        return FAILED, _with_hint(problem, hint)
    if expect == "property":
        # a property compares errors with a tolerance, and NaN > tol is False: never let NaN or inf pass
        problem = _not_finite(got)
        if problem:
            return FAILED, problem
        ok, message = PROPERTIES[check["property"]](got, **check.get("property_params", {}))
        if ok:
            return PASSED, ""
        mistake = blamed(check, got, expected, mistakes)
        if mistake:
            return FAILED, named(mistake, message)
        return FAILED, _with_hint(message, hint)
    raise ValueError(f"unknown expectation {expect!r} in check {check.get('name')!r}")

