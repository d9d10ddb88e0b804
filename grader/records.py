"""The records that travel between the grader's parts: what a sandbox child is asked to run, what
came back, and the verdict on each check. Plain dataclasses; one status enum."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


def _learner_statuses():
    """posenc_selfcheck/status.py, read on its own: importing it through its package would load torch (the
    package's __init__ does), which the grader's own process never does."""
    path = Path(__file__).resolve().parent.parent / "posenc_selfcheck" / "status.py"
    spec = importlib.util.spec_from_file_location("_posenc_selfcheck_status", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LEARNER = _learner_statuses()


def standalone(name):
    """posenc_selfcheck/<name>.py read on its own (standard library only, as status.py is), without the package's
    __init__, which imports torch: the report and results.json are written where torch could not be set up."""
    import sys

    full = f"posenc_selfcheck.{name}"
    if full in sys.modules:  # the same classes as the self-check's evaluate() returns
        return sys.modules[full]
    path = Path(__file__).resolve().parent.parent / "posenc_selfcheck" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(full, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


messages = standalone("messages")


class Status(str, Enum):
    """A check's outcome: the self-check's words (posenc_selfcheck/status.py), as an enum (a str, so it compares
    equal to the plain strings posenc_selfcheck.evaluate returns)."""

    PASSED = _LEARNER.PASSED
    FAILED = _LEARNER.FAILED
    SKIPPED = _LEARNER.SKIPPED  # decided by the grader alone: a CUDA check on a machine without a GPU
    MISSING = _LEARNER.MISSING

    def __str__(self):
        return self.value


@dataclass(frozen=True)
class Statement:
    """One top-level statement of the submission: where it comes from (for messages), its source, and the line of
    its file or cell it starts on (the sandbox compiles it there, so tracebacks show the learner's own lines)."""

    label: str
    source: str
    line: int = 1


@dataclass
class ExerciseRun:
    """What one sandbox child gave back for one exercise."""

    results: dict = field(default_factory=dict)  # token -> probe result (a validated plain dict)
    log: list = field(default_factory=list)  # [(where, what)] statements that failed or were skipped
    ended: str = ""  # how the child ended: "ok", "timed out after 30 s", "ended early", ...


@dataclass(frozen=True)
class Verdict:
    check: object  # grader.spec.Check
    status: Status
    feedback: object = ""  # a message (posenc_selfcheck/messages.py), rendered where it is shown; "" when passed
    mistake: str = ""  # the named mistake's message (its English), when the wrong answer is a known one

    @property
    def score(self):
        return self.check.points if self.status == Status.PASSED else 0.0

    @property
    def max_score(self):
        return 0.0 if self.status == Status.SKIPPED else self.check.points


def totals(verdicts):
    """(points scored, points possible) of some verdicts: a submission's, an exercise's, a chapter's. Written
    once: the report, Gradescope's results.json and the batch's records all add up here."""
    return sum((v.score for v in verdicts), 0.0), sum((v.max_score for v in verdicts), 0.0)


@dataclass
class Grade:
    """One submission, graded. `to_json()` / `from_json()` is its form wherever it crosses a process
    (grader/remote.py) or is kept."""

    submission: str
    verdicts: list
    notes: list  # what the learner should know beyond the checks: messages (escaped at output, not here)
    seconds: float  # the visible work's wall clock (grader/grading.py): hidden children's time never counts
    flags: list = field(default_factory=list)  # code a person should look at (grader.parse.FLAGS)
    # what children that held hidden requests logged: shown only where hidden checks are (after the due date)
    hidden_notes: list = field(default_factory=list)

    @property
    def total(self):
        return totals(self.verdicts)[0]

    @property
    def max_score(self):
        return totals(self.verdicts)[1]

    def by_exercise(self):
        """{exercise: (points scored, points possible)} in the order the verdicts come."""
        groups = {}
        for v in self.verdicts:
            groups.setdefault(v.check.exercise, []).append(v)
        return {exercise: totals(vs) for exercise, vs in groups.items()}

    def to_json(self):
        """A JSON-ready dict; each verdict names its check by the check's key."""
        encode = messages.to_json
        return {"submission": self.submission, "notes": [encode(n) for n in self.notes], "seconds": self.seconds,
                "flags": self.flags, "hidden_notes": [encode(n) for n in self.hidden_notes],
                "verdicts": [[v.check.key, str(v.status), encode(v.feedback), v.mistake] for v in self.verdicts]}

    @classmethod
    def from_json(cls, data, checks):
        """The Grade `to_json()` gave; `checks`: {key: grader.spec.Check} (grader.checks.by_key())."""
        decode = messages.from_json
        return cls(data["submission"], [Verdict(checks[key], Status(status), decode(feedback), mistake)
                                        for key, status, feedback, mistake in data["verdicts"]],
                   [decode(n) for n in data["notes"]], data["seconds"], data["flags"],
                   [decode(n) for n in data["hidden_notes"]])


def no_result(message):
    """A check's result when its exercise's process gave none: the grader's words (`message`) in `said`, for the
    feedback, and in English in `error`, as an error is compared and stored."""
    return {"error": str(message), "error_type": "NoResult", "said": message}
