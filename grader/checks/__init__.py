"""Every chapter's exercises, declared as data in its course/NN_name/exercises.py, one record each
(grader/exercise.py), and read here as the tables derived from them: the exercises' checks (`CHECKS`), their
conventions rows (`CONVENTIONS`), their hint ladders (`HINTS`) and their known mistakes (`MISTAKES`: message, ladder,
and the statements the mistake writes wrong). Nothing here imports torch or the reference.

A chapter's declarations count once its folder is in course/ (grader/course.py lists them).
Every check carries an `id` written in its exercises.py (readable, unique within its exercise);
`Check.key` ('<exercise>.<id>') is what gradebooks, feedback, self-check data and Gradescope use,
and `ids.lock.json` in this folder records what each key asks, so that a key never disappears or
changes meaning silently (tests/test_check_ids.py; `python -m grader build` adds new keys to it).
"""

from __future__ import annotations

from functools import lru_cache

from grader import course
from grader.spec import ID

# each chapter's declaration, course/NN_name/exercises.py, imported as grader.checks.chNN
_DECLARATIONS = {c.key: course.load(c, "exercises") for c in course.chapters()}

CHAPTERS = {chapter: module.CHECKS for chapter, module in _DECLARATIONS.items()}

# docs/conventions.md's table of each chapter: {exercise: what it computes} (grader/conventions.py writes it)
CONVENTIONS = {chapter: module.CONVENTIONS for chapter, module in _DECLARATIONS.items()}

# the exercises' ladders of hints: {exercise: levels} (the build writes them to posenc_selfcheck/data/hints.json)
HINTS = {chapter: module.HINTS for chapter, module in _DECLARATIONS.items()}

# the known mistakes: {name: spec.Mistake} (their implementations: grader/mistakes.py)
MISTAKES = {chapter: module.MISTAKES for chapter, module in _DECLARATIONS.items()}


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
                                     f"({check.id!r}); write id=\"lowercase_words\" in its "
                                     "exercises.py")
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
    """{exercise: chapter} (a copy of the one made once: the build asks thousands of times)."""
    return dict(_chapter_of())


@lru_cache(maxsize=None)
def _chapter_of():
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
