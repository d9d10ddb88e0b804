"""Twins: every scored check's same case, on inputs no learner has seen.

A public check's inputs and the reference's answers to them ship with the course (the self-check data), and a
hidden check's inputs are the same for every student, year after year. So a scored check earns its points only
when its twins are answered as the reference answers them too (grading.with_twins): the same probe, the same case
(edge sizes, dtype, mask kind, cache step, odd and even widths), on inputs drawn for each student from the
grader's secret (grader/unseen.py). One passing check opens nothing else: each check has twins of its own.

What a check's twins are:
- declared with `twin=` beside the check: a params dict with draws, a dict {"params": ..., and other fields of
  the check, such as "mentions": ("d_model", same("d"))}, or a tuple of them, of Checks (a twin on another
  probe), of `RESEEDED` (the derived twin below) and of `MAIN` (the exercise's main check, where the case's own
  answer hardly depends on the work, such as a table resized to its own size, which is the input itself);
- otherwise derived: the check's params with every seed drawn (`reseeded`: each tensor's values, each module's
  initial weights, each probe's random choice);
- a check whose answer does not depend on the input's values (an error raised, a module's fields, a run on the meta
  device: `VALUE_FREE`) could be answered by a constant, and a property can be met by a function that does no work
  (the identity is permutation-equivariant: `WORK_FREE`); its twins also hold its exercise's main check, drawn anew
  under the twin's own key, so that they ask for real work. There, and in a forward twin declared for such a check
  (a mask's dtype, seen through the output), a known mistake's answer counts as well as the reference's
  (`proves_work`): it too is work on inputs no learner has seen. A mistake the check itself fails never counts:
  it is what the check tests (grading.caught_by); nor does one whose answer is its input (`Mistake.no_work`: an
  interleave without its transpose), which a function that does nothing gives too.

A case with one possible answer whatever is drawn (ALiBi's single head, head_dim 2's single frequency) cannot rest on
an unseen input: it gives feedback and earns no points (points=0: not scored, no twin).

`build --check` proves (authoring.problems) that every scored check has twins, that each twin draws, and that the
twins together can give at least `TwinRules.min_space` (grader/settings.py) inputs.
"""

from __future__ import annotations

import dataclasses

from .settings import TWINS
from .spec import MAIN, RESEEDED, Check, has_draws

SEED_KEYS = ("seed", "seed_params")  # a tensor spec's generator, a module's initial weights, a probe's random choice
VALUE_FREE = ("raises", "fields", "ok")  # expectations whose answer does not depend on the input's values
# expectations a function that does no work can meet: the value-free ones, and properties (the identity is
# permutation-equivariant); their twins also ask for the exercise's main check
WORK_FREE = VALUE_FREE + ("property",)


def reseeded(value):
    """`value` (params) with every integer seed replaced by a draw: one draw per seed value, so that tensors the
    check builds from one seed (its params and its property's) stay equal to each other in the twin."""
    if isinstance(value, dict):
        return {k: {"draw": "seed", "name": f"seed{v}"} if k in SEED_KEYS and isinstance(v, int)
                and not isinstance(v, bool) else reseeded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [reseeded(v) for v in value]
    return value


def scored(check):
    """A check whose points count: every check but main checks (drawn already: their own twins) and twins."""
    return not check.main and not check.twin_of and check.points > 0


def _entries(check, main):
    """The declared or derived twin entries of `check`: params dicts and Checks."""
    declared = check.twin
    drawn = {"params": reseeded(check.params), "property_params": reseeded(check.property_params)}
    if declared is None:
        entries = [drawn] if has_draws(drawn) else []
    elif isinstance(declared, dict):
        entries = [declared]
    else:
        entries = [drawn if e == RESEEDED else e for e in declared]
    # "main": the exercise's main check, drawn anew, where the case's own answer hardly depends on the work (a
    # one-row table is sin 0, cos 0 whatever the frequencies; M_0 is the identity whatever the base)
    entries = [main if e == MAIN else e for e in entries if not (e == MAIN and main is None)]
    if check.expect in WORK_FREE and main is not None and not any(isinstance(e, Check) for e in entries):
        entries.append(main)
    return entries


def twins_of(check, checks):
    """The twins (Checks, points 0, drawn per student) of one scored check of `checks` (its chapter's). A twin
    declared as a Check with an id of its own is shared by the checks that declare it (a property test's whole
    hidden catalogue, judged once per head width): its outcome is the same for each of them, so it runs once."""
    if not scored(check):
        return ()
    main = next((c for c in checks if c.main and c.exercise == check.exercise and c.cuda == check.cuda), None)
    out = []
    for n, entry in enumerate(_entries(check, main)):
        shared = isinstance(entry, Check) and entry.id and not entry.main
        # a value-free check's twin on another probe (the main check, a declared forward) asks for work, not for
        # the values: a known mistake's answer is work, unless it is one the check itself tests
        proves_work = check.expect in WORK_FREE and isinstance(entry, Check) and not shared
        if isinstance(entry, Check):
            base = entry
        elif "params" in entry:  # {"params": ..., "mentions": ...}: other fields of the check drawn too
            base = dataclasses.replace(check, **entry)
        else:
            base = dataclasses.replace(check, params=entry)
        twin_id = f"{TWINS.separator}{entry.id}" if shared else f"{check.id}{TWINS.separator}{n}"
        out.append(dataclasses.replace(base, id=twin_id, twin_of=check.key, twin=None, main=False, public=False,
                                       points=0.0, proves_work=proves_work))
    return tuple(out)


def with_twins(checks):
    """(`checks` followed by every scored check's twins, each twin once; {check key: its twins' keys})."""
    checks = list(checks)
    out, keys, seen = list(checks), {}, set()
    for check in checks:
        twins = twins_of(check, checks)
        keys[check.key] = tuple(t.key for t in twins)
        out += [t for t in twins if t.key not in seen]
        seen.update(t.key for t in twins)
    return out, keys
