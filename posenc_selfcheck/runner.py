"""Run an exercise's public checks in the learner's kernel and write the report they read.

The report lists every check (✓ / ✗); for the first failing check it adds that check's hint (later
failures often follow from the first, and their hints would point elsewhere). When the exercise
calls other exercises of the course that fail their own self-checks, it says so: fix those first.
Then it reveals the next hint level (`hints.py`) of the ladder that fits the diagnosis: the named mistake's
own ladder, or the exercise's when no known mistake is named; one more level for every new failing attempt
(an attempt is new when its answers changed since the last failure), the key line last.

Every line is a message (posenc_selfcheck/messages.py), rendered once, in the notebook's language, where the
report is printed or raised.

Checks run on one CPU thread: on a small input, threads only wait for each other, and on a busy
two-core machine that waiting costs ten to a hundred times the work.
"""

from __future__ import annotations

import contextlib
import time
import types
from functools import lru_cache
from pathlib import Path

import torch

from . import hints, probes
from .evaluate import FAILED, MISSING, PASSED, SKIPPED, evaluate
from .messages import joined, msg, nmsg, render_lines

DATA = Path(__file__).parent / "data"
MARKS = {PASSED: "✓", FAILED: "✗", SKIPPED: "-"}
NEXT = msg("(Each new attempt that still fails shows the next hint.)")
LAST = msg("(That was the last hint: the rest is yours.)")


class SelfCheckFailed(AssertionError):
    """An exercise gave a wrong answer; the message is the report.

    In Jupyter the report is shown as it is, without a traceback: IPython asks an exception for
    `_render_traceback_()` before formatting one, and the frames of this package would only hide
    the words that matter. The cell still ends in an error, so Run All stops at the first exercise
    that needs work."""

    def _render_traceback_(self):
        return str(self).splitlines()


@lru_cache(maxsize=None)
def _chapter_data(stem):
    from . import store

    return store.load(str(DATA / stem))


@lru_cache(maxsize=None)
def _index():
    """{exercise: chapter stem} of every exercise with stored checks."""
    out = {}
    for path in sorted(DATA.glob("ch*.json")):
        for exercise in _chapter_data(path.stem).get("_index", {}):
            out[exercise] = path.stem
    return out


def public_checks(exercise):
    """The stored public checks of one exercise: [(check, expected, [(mistake message, result)])], each mistake's
    message a message whose context is the mistake's name."""
    stem = _index().get(exercise)
    if stem is None:
        raise KeyError(f"no self-checks stored for {exercise!r}")
    data = _chapter_data(stem)
    out = []
    for check_id in data["_index"][exercise]:
        spec = data[f"{check_id}#spec"]
        mistakes = [(msg(message, context=name), data[f"{check_id}#mistake{i}"])
                    for i, (name, message) in enumerate(zip(spec.get("mistake_names", []),
                                                            spec.get("mistake_messages", [])))]
        out.append((spec, data[f"{check_id}#expected"], mistakes))
    return out


@contextlib.contextmanager
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def run_checks(exercise, obj):
    """[(spec, status, message)] for the public checks of `exercise`, stopping at "not implemented"
    (then the message is the name of the unfinished function: the exercise itself, or one it calls)."""
    ns = {exercise: obj}
    out = []
    with one_thread():
        for spec, expected, mistakes in public_checks(exercise):
            got = probes.run(ns, spec["probe"], spec["params"], exercise)
            first_failure = all(status != FAILED for _, status, _ in out)
            status, message = evaluate(spec, got, expected, mistakes, with_hint=first_failure)
            if status == MISSING:
                out.append((spec, status, got.get("unfinished", exercise)))
                break
            out.append((spec, status, message))
    return out


# ---- which other exercises does this one call? --------------------------------------------------
def _codes(obj):
    """Every code object of a function or of a class's methods, nested ones included."""
    roots = []
    if isinstance(obj, type):
        for value in vars(obj).values():
            value = getattr(value, "__func__", value)
            value = getattr(value, "fget", value)
            if hasattr(value, "__code__"):
                roots.append(value.__code__)
    elif hasattr(obj, "__code__"):
        roots.append(obj.__code__)
    out, todo = [], list(roots)
    while todo:
        code = todo.pop()
        out.append(code)
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return out


def _globals(obj):
    if isinstance(obj, type):
        for value in vars(obj).values():
            if hasattr(value, "__globals__"):
                return value.__globals__
        return {}
    return getattr(obj, "__globals__", {})


def exercises_used(exercise, obj):
    """{name: object} of the other exercises that `obj` calls, as defined where `obj` was defined, also through
    the helpers defined there (TinyDecoder's DecoderBlock holds a PositionalAttention)."""
    scope, exercises = _globals(obj), set(_index())
    names, todo, seen = set(), [obj], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for name in {n for code in _codes(current) for n in code.co_names}:
            value = scope.get(name)
            if name in exercises:
                names.add(name)
            elif callable(value) and getattr(value, "__module__", None) == getattr(obj, "__module__", 0):
                todo.append(value)  # a helper of the same notebook (or module): what it calls counts too
    return {name: scope[name] for name in sorted(names) if name != exercise and name in scope}


def _failing_dependencies(exercise, obj):
    out = []
    for name, other in exercises_used(exercise, obj).items():
        statuses = {status for _, status, _ in run_checks(name, other)}
        if statuses & {FAILED, MISSING}:
            out.append((name, MISSING in statuses))
    return out


# ---- progressive hints ------------------------------------------------------------------------
_attempts = {}  # exercise -> (the answers at the last failure, the ladder shown then, its level)


def answers(results):
    """What the code answered, as the report says it: an edit that changes no answer (x.T.T for x) changes
    nothing here, and so shows no new hint level."""
    return hash(tuple((spec.get("key"), status, message) for spec, status, message in results))


def says(message, mistake):
    """Whether a check's feedback opens with a known mistake's message."""
    return hasattr(message, "leads_with") and message.leads_with(mistake)


def mistake_messages(spec):
    """The messages of a check's known mistakes (each in the context of its name)."""
    return [msg(said, context=name) for name, said in zip(spec.get("mistake_names", ()),
                                                          spec.get("mistake_messages", ()))]


def diagnosis(results):
    """The name of the known mistake that the first failing check naming one names, else None."""
    for spec, status, message in results:
        if status == FAILED:
            for mistake in mistake_messages(spec):
                if says(message, mistake):
                    return mistake.context
    return None


def ladder(exercise, mistake=None):
    """(key, levels): the named mistake's own ladder when it has one, else the exercise's; each level a message
    whose context is the ladder's key."""
    key, levels = (mistake, hints.MISTAKE_HINTS[mistake]["levels"]) if mistake in hints.MISTAKE_HINTS \
        else (exercise, hints.HINTS.get(exercise, ()))
    return key, tuple(msg(level, context=key) for level in levels)


def next_hint(exercise, results):
    """(level, levels, message) to show after a failure: level 1 of the ladder of the diagnosis (a new diagnosis
    starts its own ladder), one level more for every failing attempt whose answers changed."""
    key, levels = ladder(exercise, diagnosis(results))
    if not levels:
        return 0, 0, ""
    seen = answers(results)
    last_seen, last_key, level = _attempts.get(exercise, (None, None, 0))
    if key != last_key:
        level = 1
    elif seen != last_seen:
        level = min(level + 1, len(levels))
    _attempts[exercise] = (seen, key, level)
    return level, len(levels), levels[level - 1]


def forget_attempts(exercise=None):
    """Start the hint levels again (for one exercise, or for all)."""
    if exercise is None:
        _attempts.clear()
    else:
        _attempts.pop(exercise, None)


def _teaches(spec):
    """True for a check of the computation itself (not of input validation, not of device placement)."""
    return spec["expect"] != "raises" and spec["probe"] not in ("meta_forward", "meta_call")


# ---- the check a learner calls ----------------------------------------------------------------
def _indented(message):
    """A report line under the exercise's first line."""
    return joined(("  ", message), "")


def report(exercise, obj, results, took):
    """The self-check's answer, as messages: (lines to print, or None) when nothing failed, else (None, the lines
    of the report that SelfCheckFailed raises)."""
    missing = [message for _, status, message in results if status == MISSING]
    if missing:
        if missing[0] in (exercise, ""):
            return [msg("{exercise}: not implemented yet — finish the exercise above, then run this cell again.",
                        exercise=exercise)], None
        return [msg("{exercise}: waiting for {other}, which is not finished yet — finish it, then run this cell "
                    "again.", exercise=exercise, other=missing[0])], None
    n = len(results)
    failed = [r for r in results if r[1] == FAILED]
    if not failed:
        return [nmsg("{exercise}: the one check passed ({ms:.0f} ms)",
                     "{exercise}: all {n} checks passed ({ms:.0f} ms)", n=n, exercise=exercise, ms=took * 1000)], None
    lines = [msg("{exercise}: {failed} of {n} checks failed", exercise=exercise, failed=len(failed), n=n)]
    named, shown = set(), set()
    for spec, status, message in results:
        name = msg(spec["name"], context=spec.get("key", ""))
        if any(says(message, m) for m in named):
            message = msg("the same mistake as above")
        elif status == FAILED and message in shown:  # one long message, said once
            message = msg("the same as above")
        elif status == FAILED:
            named |= {m for m in mistake_messages(spec) if says(message, m)}
            shown.add(message)
        if status in (FAILED, SKIPPED):
            lines.append(_indented(msg("{mark} {check}: {feedback}", mark=MARKS[status], check=name, feedback=message)))
        else:
            lines.append(_indented(msg("{mark} {check}", mark=MARKS[status], check=name)))
    for name, missing in _failing_dependencies(exercise, obj):
        if missing:
            lines.append(_indented(msg("{exercise} calls your {other}, which is not finished yet: fix {other} first "
                                       "(its self-check cell says why).", exercise=exercise, other=name)))
        else:
            lines.append(_indented(msg("{exercise} calls your {other}, which does not pass its own self-check yet: fix "
                                       "{other} first (its self-check cell says why).", exercise=exercise, other=name)))
    # the hint levels teach the computation: a missing ValueError or a tensor on the wrong device is said
    # precisely enough by its own check, unless a known mistake is named there (its own ladder shows the line)
    level, levels, text = next_hint(exercise, results) if any(_teaches(r[0]) or diagnosis([r]) for r in failed) \
        else (0, 0, "")
    if level:
        lines.append(_indented(msg("Hint {level} of {levels}: {hint}", level=level, levels=levels, hint=text)))
        lines.append(_indented(NEXT if level < levels else LAST))
    return None, lines


def check(exercise, obj, quiet=False):
    """Run the public checks of `exercise` on `obj`: print a one-line success (nothing when `quiet`),
    print "not implemented yet" for an unfinished exercise, or raise SelfCheckFailed with the report
    and the next hint. The report is rendered here, once, in the notebook's language."""
    start = time.perf_counter()
    results = run_checks(exercise, obj)
    took = time.perf_counter() - start
    said, failure = report(exercise, obj, results, took)
    if failure:
        raise SelfCheckFailed(render_lines(failure))
    if not quiet or any(status == MISSING for _, status, _ in results):
        print(render_lines(said))
