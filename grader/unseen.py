"""Inputs no learner has seen: the draws of main checks and twins, resolved per student in the trusted process.

Everything shipped to learners is known to a cheater: the public checks' inputs and the reference's answers to
them (the self-check data), and every input the chapters' notebooks show with its answer. So every point rests
on checks whose params hold draws (grader.spec: draw_int, draw_float, draw_choice, same, shuffled, SEED): main
checks, and each scored check's twins (grader/twins.py). They are decided here for each student, as

    value = HMAC-SHA256(HMAC-SHA256(secret, assignment | student), check key | attempt | position of the draw)

- the **secret** is 32 random bytes that only the grader holds (a file outside the student release:
  `Settings.secret_file`, by default `.grader-secret` in the repository, created on first use; the
  Gradescope bundle carries its own). It never reaches a sandbox child: it is read in the trusted
  grading process, after the zygote forked it;
- the **identity** is the student as the platform records them (batch's and nbgrader's student id; on
  Gradescope the submission's user ids with the assignment id; `grade --student ID`), with the assignment: never
  anything the student controls (the code's bytes, a file's name). A regrade and a resubmission draw the same
  inputs, so fishing for a lucky draw gains nothing; a bare `grade` without `--student` draws one fixed set
  and its report says so;
- a draw that equals an input whose answer ships to learners (`shipped`: the public checks' inputs and the
  notebooks' calls, grader/shipped.py) is drawn again (`attempt` + 1), so no draw can be looked up.

The expected answers are computed from the resolved params by the reference, here (grader.reference).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import os
from pathlib import Path

from .settings import BOUNDS

SECRET_BYTES = 32


class SecretError(RuntimeError):
    """The grader's secret file is unusable (a link, not ours, readable by others, the wrong size)."""


def load_secret(path):
    """The secret at `path`, created (0600, 32 random bytes) when it does not exist yet."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(SECRET_BYTES))
            f.flush()
            os.fsync(f.fileno())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise SecretError(f"the grader's secret {path} cannot be read ({exc.strerror}); it must be a regular "
                          "file (not a link)") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if info.st_mode & 0o077 or info.st_uid != os.getuid():
            raise SecretError(f"the grader's secret {path} must belong to you and be readable by you alone "
                              "(chmod 600)")
        data = f.read(SECRET_BYTES + 1)
    if len(data) != SECRET_BYTES:
        raise SecretError(f"the grader's secret {path} must hold exactly {SECRET_BYTES} bytes; delete it to "
                          "make a new one (grades of past submissions would then change)")
    return data


NO_STUDENT = ""  # a bare `grade` without --student: one fixed set of draws


def identity(secret, assignment, student):
    """The key of one student's draws for one assignment (bytes)."""
    label = json.dumps([str(assignment), str(student)]).encode("utf-8", "surrogatepass")
    return hmac.new(secret, b"identity|" + label, hashlib.sha256).digest()


class _Draws:
    """The values of one check's draws, each from its own HMAC stream."""

    def __init__(self, ident, key, attempt, *declared):  # declared: params, property_params (their named draws)
        self.key = hmac.new(ident, f"{key}|{attempt}".encode(), hashlib.sha256).digest()
        self.n, self.named, self.specs = 0, {}, {}
        for value in declared:
            self._declare(value)

    def _declare(self, value):
        """Remember every named draw, so that `same(name)` may come before the draw it names."""
        if isinstance(value, dict):
            if value.get("draw") not in (None, "same") and value.get("name"):
                self.specs.setdefault(value["name"], value)
            for v in value.values():
                self._declare(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                if isinstance(v, (dict, list, tuple)):  # (a call less for each of a long list's numbers)
                    self._declare(v)

    def _number(self):
        self.n += 1
        return int.from_bytes(hmac.new(self.key, str(self.n).encode(), hashlib.sha256).digest()[:8], "big")

    def value(self, spec):
        kind = spec["draw"]
        if kind == "same":
            if spec["name"] not in self.named:
                self.value(self.specs[spec["name"]])
            value = self.named[spec["name"]]
            if spec.get("times", 1) != 1 or spec.get("plus", 0):
                value = value * spec["times"] + spec["plus"]
            return value
        if spec.get("name") in self.named:  # drawn already, where a `same` came first
            return self.named[spec["name"]]
        if kind == "seed":
            value = self._number() % (1 << 31)
            if spec.get("name"):
                self.named[spec["name"]] = value
            return value
        if kind == "shuffle":
            items = self.resolve(spec["of"])
            for i in range(len(items) - 1, 0, -1):  # Fisher-Yates on the HMAC stream
                j = self._number() % (i + 1)
                items[i], items[j] = items[j], items[i]
            return items
        if kind == "pairs":
            return {self.resolve(k): self.resolve(v) for k, v in spec["items"]}
        if kind == "float":
            value = _float(spec, self._number())
            if spec.get("name"):
                self.named[spec["name"]] = value
            return value
        if kind == "int":
            options = range(spec["lo"], spec["hi"] + 1, spec.get("step", 1))
        elif kind == "choice":
            options = spec["of"]
        else:
            raise ValueError(f"unknown draw {kind!r}")
        value = self.resolve(options[self._number() % len(options)])  # an option may hold draws of its own
        if spec.get("name"):
            self.named[spec["name"]] = value
        return value

    def resolve(self, value):
        if isinstance(value, dict):
            if "draw" in value:
                return self.value(value)
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.resolve(v) for v in value]
        return value


FLOAT_STEPS = 1 << 40  # the grid a float draw picks from, before rounding to its digits


def _float(spec, number):
    """A float of `spec` (draw_float) from one HMAC number: uniform (or log-uniform) in [lo, hi], `digits`
    significant digits."""
    u = (number % FLOAT_STEPS) / (FLOAT_STEPS - 1)
    lo, hi = spec["lo"], spec["hi"]
    value = lo * (hi / lo) ** u if spec.get("log") else lo + (hi - lo) * u
    return float(f"{value:.{spec.get('digits', 4)}g}")


def canonical(params):
    """The params as one string: two inputs are the same input when these are equal."""
    return json.dumps(params, sort_keys=True, default=repr)




class DrawError(RuntimeError):
    """A check's draws keep landing on inputs whose answers ship (build --check makes this unreachable)."""


def resolve(check, ident, shipped=frozenset()):
    """The check with its draws decided for this identity (a new Check; params and property_params plain data,
    drawn in that order, so property_params may name what params drew). `shipped`: canonical params whose answers
    learners can read; a draw that lands on one is drawn again."""
    for attempt in range(BOUNDS.draw_attempts):
        draws = _Draws(ident, check.key, attempt, check.params, check.property_params)
        params = json.loads(json.dumps(draws.resolve(check.params)))
        property_params = json.loads(json.dumps(draws.resolve(check.property_params)))
        # words an error's message must hold may name a drawn value ("d_model", same("d")): as text
        mentions = tuple(str(w) for w in draws.resolve(list(check.mentions)))
        if canonical(params) not in shipped:
            return dataclasses.replace(check, params=params, property_params=property_params, mentions=mentions)
    raise DrawError(f"{check.key}: {BOUNDS.draw_attempts} draws in a row equal inputs whose answers ship to learners")


# ---- how many inputs a check's draws can give (build --check: at least Settings.twins.min_space) -----------------
SEED_SPACE = 1 << 31


def space(value):
    """The number of distinct draws `value` (params with draws) can give: an upper bound for the number of distinct
    inputs, exact when no two options of a draw give the same value."""
    if isinstance(value, dict):
        kind = value.get("draw")
        if kind == "seed":
            return SEED_SPACE
        if kind == "float":
            return min(FLOAT_STEPS, 9 * 10 ** (value.get("digits", 4) - 1))
        if kind == "int":
            return max(len(range(value["lo"], value["hi"] + 1, value.get("step", 1))), 1)
        if kind == "choice":
            return max(sum(space(o) for o in value["of"]), 1)
        if kind == "shuffle":
            n = space(value["of"])
            return n * math.factorial(len(value["of"]))
        if kind == "pairs":
            return space([list(item) for item in value["items"]])
        if kind == "same":
            return 1
        return space(list(value.values()))
    if isinstance(value, (list, tuple)):
        total = 1
        for v in value:
            total *= space(v)
        return total
    return 1
