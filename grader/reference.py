"""The reference's answers and the known mistakes' answers to each check's probe, computed in the
grader's own process (where no learner code ever runs) and cached for the life of the process."""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import lru_cache

from posenc_selfcheck import probes
from posenc_selfcheck.messages import msg

from . import hidden_probes
from .settings import BOUNDS
from .spec import Check


@lru_cache(maxsize=None)
def namespace():
    import posenc_ref

    return dict(vars(posenc_ref))


def answer(check: Check):
    """The reference's answer to a check's probe (a main check's or a twin's: for the inputs drawn for one student)."""
    return _answer(check) if not check.drawn else _drawn(("answer", check.key, _params(check)), _run, check)


def mistakes(check: Check):
    """((message, answer), ...) of the known mistakes this check recognises."""
    # keyed by the mistakes asked about too: the same check with another list must not get this one's answers
    key = ("mistakes", check.key, _params(check), tuple(check.mistakes))
    return _mistakes(check) if not check.drawn else _drawn(key, _run_mistakes, check)


# main checks and twins are resolved per student (grader/unseen.py): a bounded cache, keyed by what they ask
_DRAWN = OrderedDict()


def _params(check):
    return json.dumps(check.params, sort_keys=True)


def _drawn(key, compute, check):
    if key in _DRAWN:
        _DRAWN.move_to_end(key)
        return _DRAWN[key]
    _DRAWN[key] = value = compute(check)
    while len(_DRAWN) > BOUNDS.drawn_cache:
        _DRAWN.popitem(last=False)
    return value


def _run(check):
    """The reference's answer: a probe with a `reference` of its own (one that would fork a capped child for learner
    code: hidden_probes' memory_capped_call) computes it with that, in this process."""
    catalog = hidden_probes.catalog()
    own = getattr(catalog.get(check.probe), "reference", None)
    return probes.run(namespace(), check.probe, check.params, check.exercise,
                      catalog if own is None else {check.probe: own})


@lru_cache(maxsize=None)
def _answer(check: Check):
    return _run(check)


@lru_cache(maxsize=None)
def _mistakes(check: Check):
    return _run_mistakes(check)


def _run_mistakes(check):
    from .mistakes import MISTAKES

    out = []
    for name in check.mistakes:
        mistake = MISTAKES[name]
        ns = {**namespace(), mistake.exercise: mistake.impl}
        # its message, in the context of its name (posenc_selfcheck/messages.py)
        out.append((msg(mistake.message, context=name), probes.run(ns, check.probe, check.params, check.exercise,
                                                hidden_probes.catalog())))
    return tuple(out)


def clear():
    """Forget every cached answer (the build does this after regenerating the reference)."""
    for fn in (namespace, _answer, _mistakes):
        fn.cache_clear()
    _DRAWN.clear()
