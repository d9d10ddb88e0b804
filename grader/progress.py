"""Progress on stderr for anything that takes more than a couple of seconds.

One line that redraws itself on a terminal; elsewhere (a log, CI) a line per step, at most every
`every` seconds. The estimate of what is left comes from a moving average of the recent steps. Its words are
messages in the caller's language (`say`: grader/language.py's phrasebook; `what` comes rendered).
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque


def clock(seconds, up=False):
    """h:mm:ss; `up`: rounded up (a time left is never shown as 0 while something is left)."""
    seconds = int(math.ceil(seconds)) if up else int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, what, total, stream=None, enabled=True, every=10.0, window=10, say=None):
        from .language import phrasebook

        self.what, self.total, self.say = what, total, say or phrasebook()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.every, self.done, self.errors = every, 0, 0
        self.start = self.last_step = time.monotonic()
        self.steps = deque(maxlen=window)  # seconds of the recent steps
        self.last_shown = 0.0

    def left(self, now=None):
        """Seconds still to go, from the recent steps' average, less the time the current step has already taken
        (None before the first step, and once that has run past the estimate: the bar then says nothing rather
        than "~0:00:00 left" while work remains)."""
        if not self.steps or self.done >= self.total:
            return None if not self.steps else 0.0
        since = (now if now is not None else time.monotonic()) - self.last_step
        estimate = sum(self.steps) / len(self.steps) * (self.total - self.done) - since
        return estimate if estimate > 0 else None

    def step(self, ok=True, label=""):
        self.errors += not ok
        self.update(self.done + 1, label)

    def update(self, done, label=""):
        """`done` steps are finished (each new one's time feeds the estimate); show it."""
        now = time.monotonic()
        if done > self.done:
            self.steps.extend([(now - self.last_step) / (done - self.done)] * (done - self.done))
            self.last_step = now
        self.done = done
        self.show(label, force=self.done == self.total)

    def show(self, label="", force=False):
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty and not force and now - self.last_shown < self.every:
            return
        self.last_shown = now
        width = 24
        filled = int(width * self.done / self.total)
        bar = "=" * filled + (">" if filled < width else "") + " " * max(0, width - filled - 1)
        left, say = self.left(now), self.say
        elapsed = clock(now - self.start)
        line = (f"{self.what} [{bar}] {self.done}/{self.total}"
                + ("  " + say("errors {n}", n=self.errors) if self.errors else "") + "  "
                + (say("{elapsed} elapsed, ~{left} left", elapsed=elapsed, left=clock(left, up=True))
                   if left is not None and self.done < self.total else say("{elapsed} elapsed", elapsed=elapsed))
                + (f"  {label}" if label else ""))
        if self.tty:
            self.stream.write("\r\x1b[K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def announce(message, enabled=True, stream=None):
    """One line of what is happening now (the start-up of a long operation, say)."""
    if enabled:
        stream = stream or sys.stderr
        stream.write(message + "\n")
        stream.flush()
