"""One known mistake: the exercise it gets wrong, what the learner reads, and the wrong implementation.

Its own module, so that the chapters' files (chNN.py) and the registry that lists them (__init__.py)
both import it and neither imports the other's importer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    exercise: str  # the contract name it replaces
    message: str  # what the learner reads: the mistake and the fix
    impl: object  # a function or class with the exercise's signature
