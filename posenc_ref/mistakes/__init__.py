"""Known mistakes, written as wrong implementations (instructor-only).

The grader recognises a mistake when a learner's wrong answer equals the answer of one of these on
the same probe, and then names it. Self-check data stores their answers on the public inputs, so a
learner's kernel can name them too without this code. Each chapter's list lives in chNN.py.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Mistake:
    exercise: str  # the contract name it replaces
    message: str  # what the learner reads: the mistake and the fix
    impl: object  # a function or class with the exercise's signature


MISTAKES = {}
for _path in sorted(Path(__file__).parent.glob("ch[0-9][0-9].py")):
    MISTAKES.update(importlib.import_module(f"{__name__}.{_path.stem}").MISTAKES)
