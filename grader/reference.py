"""The reference's answers and the known mistakes' answers to each check's probe, computed in the
grader's own process (where no learner code ever runs) and cached for the life of the process."""

from __future__ import annotations

from functools import lru_cache

from posenc_selfcheck import probes

from . import hidden_probes
from .spec import Check


@lru_cache(maxsize=None)
def namespace():
    import posenc_ref

    return dict(vars(posenc_ref))


@lru_cache(maxsize=None)
def answer(check: Check):
    """The reference's answer to a check's probe."""
    return probes.run(namespace(), check.probe, check.params, check.exercise, hidden_probes.catalog())


@lru_cache(maxsize=None)
def mistakes(check: Check):
    """((message, answer), ...) of the known mistakes this check recognises."""
    from posenc_ref.mistakes import MISTAKES

    out = []
    for name in check.mistakes:
        mistake = MISTAKES[name]
        ns = {**namespace(), mistake.exercise: mistake.impl}
        out.append((mistake.message, probes.run(ns, check.probe, check.params, check.exercise,
                                                hidden_probes.catalog())))
    return tuple(out)


def clear():
    """Forget every cached answer (the build does this after regenerating the reference)."""
    for fn in (namespace, answer, mistakes):
        fn.cache_clear()
