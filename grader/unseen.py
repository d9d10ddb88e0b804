"""Inputs no learner has seen: the main checks' draws, resolved per submission in the trusted process.

Everything shipped to learners is known to a cheater: the public checks' inputs and the reference's
answers to them (the self-check data). So an exercise's points rest on its main checks, whose params
hold draws (grader.spec: draw_int, draw_choice, same, SEED) that are decided here for each
submission, as

    value = HMAC-SHA256(secret, identity | check key | position of the draw in the params)

- the **secret** is 32 random bytes that only the grader holds (a file outside the student release:
  `Settings.secret_file`, by default `.grader-secret` in the repository, created on first use; the
  Gradescope bundle carries its own). It never reaches a sandbox child: it is read in the trusted
  grading process, after the zygote forked it;
- the **identity** is the digest of the code the grader executes for that exercise, so a regrade of
  the same code draws the same inputs (and gives the same grade), and a changed submission draws new
  ones: inputs seen in one submission's feedback say nothing about the next one's.

The expected answers are computed from the resolved params by the reference, here (grader.reference).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
from pathlib import Path

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


def identity(statements):
    """The digest of the code executed for one exercise ([Statement]): the submission's identity there."""
    h = hashlib.sha256()
    for statement in statements:
        for part in (statement.label, statement.source):
            data = part.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "big") + data)
    return h.digest()


class _Draws:
    """The values of one check's draws, each from its own HMAC stream."""

    def __init__(self, secret, ident, key, *declared):
        self.key = hmac.new(secret, ident + b"|" + key.encode(), hashlib.sha256).digest()
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
            return self._number() % (1 << 31)
        if kind == "shuffle":
            items = self.resolve(spec["of"])
            for i in range(len(items) - 1, 0, -1):  # Fisher-Yates on the HMAC stream
                j = self._number() % (i + 1)
                items[i], items[j] = items[j], items[i]
            return items
        if kind == "pairs":
            return {self.resolve(k): self.resolve(v) for k, v in spec["items"]}
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


def resolve(check, secret, ident):
    """The check with its draws decided for this submission (a new Check; params and property_params plain
    data, drawn in that order, so property_params may name what params drew)."""
    draws = _Draws(secret, ident, check.key, check.params, check.property_params)
    params = draws.resolve(check.params)
    property_params = draws.resolve(check.property_params)
    return dataclasses.replace(check, params=json.loads(json.dumps(params)),
                               property_params=json.loads(json.dumps(property_params)))
