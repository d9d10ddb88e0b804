"""`demo`: a demo cell whose exercise is not finished prints one line, and Run All goes on.

    @demo
    def plot_table(seq_len=100, d_model=128):
        pe = sinusoidal_table(seq_len, d_model)
        ...

    plot_table()

While `sinusoidal_table` still raises the stub's NotImplementedError, `plot_table()` prints
"plot_table: skipped until sinusoidal_table is finished." and returns None (closing any figure it had
opened). Every other error is the learner's to see, with its traceback.
"""

from __future__ import annotations

import functools
import sys

from .messages import msg, render
from .probes import unfinished_function


def _open_figures():
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt else set()


def skipped(demo_name, exercise):
    """The line a demo prints while an exercise it calls is unfinished."""
    return msg("{demo}: skipped until {exercise} is finished.", demo=demo_name, exercise=exercise)


def demo(fn):
    """Run `fn` as a demo: when an unfinished exercise stops it, say which in one line and go on."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        before = _open_figures()
        try:
            return fn(*args, **kwargs)
        except NotImplementedError as exc:
            exercise = unfinished_function(exc)
            if exercise is None:
                raise
            plt = sys.modules.get("matplotlib.pyplot")
            for number in _open_figures() - before:
                plt.close(number)
            print(render(skipped(fn.__name__, exercise)))
            return None

    return run
