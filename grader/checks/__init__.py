"""Checks for every chapter, declared as data in chNN.py files (a list named CHECKS in each)."""

from __future__ import annotations

import dataclasses
import importlib
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent


def chapter_modules():
    return sorted(p.stem for p in HERE.glob("ch[0-9][0-9].py"))


@lru_cache(maxsize=None)
def chapter_checks(chapter):
    """The checks of one chapter with stable ids: '<exercise>.<n>' numbered within the exercise."""
    module = importlib.import_module(f"grader.checks.{chapter}")
    counts, out = {}, []
    for check in module.CHECKS:
        n = counts.get(check.exercise, 0)
        counts[check.exercise] = n + 1
        out.append(dataclasses.replace(check, id=f"{check.exercise}.{n}"))
    return tuple(out)


def all_checks():
    return tuple(c for chapter in chapter_modules() for c in chapter_checks(chapter))


def exercises():
    """Contract names in chapter order."""
    seen = []
    for check in all_checks():
        if check.exercise not in seen:
            seen.append(check.exercise)
    return seen
