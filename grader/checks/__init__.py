"""Every chapter's exercises, declared as data in its chNN.py file: the exercises' checks (`CHECKS`), their
conventions rows (`CONVENTIONS`), their hint ladders (`HINTS`) and their known mistakes (`MISTAKES`: message,
ladder, and the statements the mistake writes wrong). Nothing here imports torch or the reference.

The registry below is explicit: a chapter's declarations count once its module is listed here.
Every check carries an `id` written in its chapter file (readable, unique within its exercise);
`Check.key` ('<exercise>.<id>') is what gradebooks, feedback, self-check data and Gradescope use,
and `ids.lock.json` beside this file records what each key asks, so that a key never disappears or
changes meaning silently (tests/test_check_ids.py; `python -m grader build` adds new keys to it).
"""

from __future__ import annotations

from functools import lru_cache

from grader.spec import ID

from . import ch00, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08

CHAPTERS = {
    "ch00": ch00.CHECKS,
    "ch01": ch01.CHECKS,
    "ch02": ch02.CHECKS,
    "ch03": ch03.CHECKS,
    "ch04": ch04.CHECKS,
    "ch05": ch05.CHECKS,
    "ch06": ch06.CHECKS,
    "ch07": ch07.CHECKS,
    "ch08": ch08.CHECKS,
}

# docs/conventions.md's table of each chapter: {exercise: what it computes} (grader/conventions.py writes it)
CONVENTIONS = {
    "ch00": ch00.CONVENTIONS,
    "ch01": ch01.CONVENTIONS,
    "ch02": ch02.CONVENTIONS,
    "ch03": ch03.CONVENTIONS,
    "ch04": ch04.CONVENTIONS,
    "ch05": ch05.CONVENTIONS,
    "ch06": ch06.CONVENTIONS,
    "ch07": ch07.CONVENTIONS,
    "ch08": ch08.CONVENTIONS,
}


# the exercises' ladders of hints: {exercise: levels} (the build writes them to posenc_selfcheck/data/hints.json)
HINTS = {
    "ch00": ch00.HINTS,
    "ch01": ch01.HINTS,
    "ch02": ch02.HINTS,
    "ch03": ch03.HINTS,
    "ch04": ch04.HINTS,
    "ch05": ch05.HINTS,
    "ch06": ch06.HINTS,
    "ch07": ch07.HINTS,
    "ch08": ch08.HINTS,
}

# the known mistakes: {name: spec.Mistake} (their implementations: grader/mistakes.py)
MISTAKES = {
    "ch00": ch00.MISTAKES,
    "ch01": ch01.MISTAKES,
    "ch02": ch02.MISTAKES,
    "ch03": ch03.MISTAKES,
    "ch04": ch04.MISTAKES,
    "ch05": ch05.MISTAKES,
    "ch06": ch06.MISTAKES,
    "ch07": ch07.MISTAKES,
    "ch08": ch08.MISTAKES,
}


class CheckRegistryError(ValueError):
    """A chapter declares a check without a valid id, or two checks with the same key."""


def chapter_modules():
    return list(CHAPTERS)


@lru_cache(maxsize=None)
def chapter_checks(chapter):
    """The checks of one chapter, each with a valid id and a key no other check has."""
    checks = tuple(CHAPTERS[chapter])
    for check in checks:
        if not ID.match(check.id):
            raise CheckRegistryError(f"{chapter}: check {check.name!r} of {check.exercise} has no valid id "
                                     f"({check.id!r}); write id=\"lowercase_words\" in grader/checks/{chapter}.py")
    return checks


@lru_cache(maxsize=None)
def all_checks():
    checks = tuple(c for chapter in CHAPTERS for c in chapter_checks(chapter))
    seen = {}
    for check in checks:
        if check.key in seen:
            raise CheckRegistryError(f"two checks share the key {check.key}: {seen[check.key]!r} and {check.name!r}")
        seen[check.key] = check.name
    return checks


def by_key():
    return {c.key: c for c in all_checks()}


def exercises():
    """Contract names in chapter order."""
    seen = []
    for check in all_checks():
        if check.exercise not in seen:
            seen.append(check.exercise)
    return seen


def chapter_of():
    """{exercise: chapter}."""
    return {c.exercise: chapter for chapter in CHAPTERS for c in chapter_checks(chapter)}


def _merged(tables, what):
    out = {}
    for chapter, table in tables.items():
        clash = set(out) & set(table)
        if clash:
            raise CheckRegistryError(f"{what} declared twice ({chapter} and an earlier chapter): {sorted(clash)}")
        out.update(table)
    return out


@lru_cache(maxsize=None)
def hints():
    """{exercise: its ladder}, every chapter's."""
    return _merged(HINTS, "hint ladders")


@lru_cache(maxsize=None)
def mistakes():
    """{name: spec.Mistake}, every chapter's known mistakes."""
    return _merged(MISTAKES, "mistakes")
