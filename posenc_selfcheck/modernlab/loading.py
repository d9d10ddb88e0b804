"""Where chapter 9's experiment takes its functions from: your package posenc_mine as for chapter 7 (each exercise
self-checked there, the course's reference filling in inside the course's repository), or any module named with
--impl that defines chapter 9's six functions (the tests' own implementation, written from scratch)."""

from __future__ import annotations

import importlib
import types

from ..messages import msg, render
from ..mine import course_reference, exercise_chapters, load_exercises
from .arms import EXERCISES

EARLIER = ("apply_rope", "TinyDecoder")  # chapter 4's rotation, chapter 7's decoder


def load_impl(module=None, quiet=False):
    """A namespace with chapter 9's functions, `apply_rope` and `TinyDecoder`; None (and one line saying why) when
    chapter 9's functions are nowhere to be found."""
    known = exercise_chapters()
    if module is not None:
        source = importlib.import_module(module)
        ch9 = {name: getattr(source, name, None) for name in EXERCISES}
    elif all(name in known for name in EXERCISES):  # the chapter's exercises, from posenc_mine or the reference
        loaded = load_exercises(list(EXERCISES), quiet=quiet)
        ch9 = {name: getattr(loaded, name, None) for name in EXERCISES}
    else:
        source = course_reference()  # inside the course's repository, once chapter 9 is in its reference
        ch9 = {name: getattr(source, name, None) for name in EXERCISES}
    missing = [name for name, fn in ch9.items() if fn is None]
    if missing:
        print(render(msg("chapter 9's functions are not available ({names}): finish chapter 9 and run its export "
                         "cell, or pass --impl MODULE, a module that defines them", names=", ".join(missing))))
        return None
    earlier = load_exercises(list(EARLIER), quiet=quiet)
    missing = [name for name in EARLIER if getattr(earlier, name, None) is None]
    if missing:
        print(render(msg("chapter 9's experiment also needs {names} (chapters 4 and 7)", names=", ".join(missing))))
        return None
    return types.SimpleNamespace(**ch9, **{name: getattr(earlier, name) for name in EARLIER})
