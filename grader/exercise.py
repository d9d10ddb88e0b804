"""An exercise declared as one record: its conventions row, its checks (public, with their twins), its main checks,
its hint ladder, its known mistakes and a pointer to its hidden probes, written together beside the chapter that
teaches it, as a PrairieLearn question keeps its statement, answer and tests in one folder.

A chapter's exercises.py declares `EXERCISES`, a tuple of these records, and derives from it, with `declared`, the
flat tables every consumer reads (grader/checks/__init__.py): CONVENTIONS, CHECKS, HINTS, MISTAKES.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from grader.spec import Check


class ExerciseError(ValueError):
    """A record declares something of another exercise, an id twice, or a mistake nobody declares."""


@dataclass(frozen=True)
class Exercise:
    name: str  # the contract name: the function or class the learner writes
    convention: str  # its row of docs/conventions.md: what it computes, in which layout and dtype
    checks: tuple  # its checks in the order they run and report, public ones first (each with its `twin=`)
    main: tuple = ()  # its main checks (spec.unseen_like): inputs drawn for each submission
    # its own ladder, for a failure no known mistake explains: the self-check shows one level more at each failing
    # attempt whose answers changed; the last is a key line of the solution
    hints: tuple = ()
    # {name: spec.Mistake}: what the learner reads, its ladder, and the key line as the mistake writes it (`wrong`,
    # `also`); its implementation is the solution with those statements rewritten, unless the chapter's
    # mistakes.py writes one by hand (grader/mistakes.py)
    mistakes: dict = field(default_factory=dict)
    # names in its chapter's hidden_probes.py that grade it (probes or candidates), which the release leaves out
    hidden: tuple = ()

    def __post_init__(self):
        # lists, as a declaration writes them, become tuples: the checks never change once the record is made
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "main", tuple(self.main))
        strays = [c.id for c in self.checks + self.main if c.exercise != self.name]
        strays += [name for name, m in self.mistakes.items() if m.exercise != self.name]
        if strays:
            raise ExerciseError(f"{self.name}: declares what belongs to another exercise: {strays}")
        if any(not c.main for c in self.main) or any(c.main for c in self.checks):
            raise ExerciseError(f"{self.name}: a main check (spec.unseen_like) belongs in main=, only there")
        twice = [i for i, n in Counter(c.id for c in self.checks + self.main).items() if n > 1]
        if twice:
            raise ExerciseError(f"{self.name}: two checks share the id {twice}")


def declared(exercises):
    """A chapter's flat tables from its records: (CONVENTIONS, CHECKS, HINTS, MISTAKES). CHECKS holds every
    exercise's checks in order, then every main check in order (reports and snapshots follow that order)."""
    names = Counter(e.name for e in exercises)
    mistakes = {}
    for e in exercises:
        clash = set(mistakes) & set(e.mistakes)
        if names[e.name] > 1 or clash:
            raise ExerciseError(f"{e.name}: declared twice: {sorted(clash) or e.name}")
        mistakes.update(e.mistakes)
    checks = [c for e in exercises for c in e.checks] + [c for e in exercises for c in e.main]
    # a check (or a twin it declares) may name a mistake of another exercise of its chapter (Shaw's two forms
    # share their messages)
    unknown = sorted({(c.key, m) for c in checks for t in (c, *_declared_twins(c)) for m in t.mistakes
                      if m not in mistakes})
    if unknown:
        raise ExerciseError(f"checks name mistakes that no exercise declares: {unknown}")
    conventions = {e.name: e.convention for e in exercises}
    hints = {e.name: e.hints for e in exercises if e.hints}
    return conventions, checks, hints, mistakes


def _declared_twins(check):
    """The Checks among a check's declared twins (grader/twins.py: the rest are params, MAIN or RESEEDED)."""
    return [t for t in (check.twin if isinstance(check.twin, tuple) else (check.twin,)) if isinstance(t, Check)]
