"""The records that travel between the grader's parts: what a sandbox child is asked to run, what
came back, and the verdict on each check. Plain dataclasses; one status enum."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(str, Enum):
    """A check's outcome (a str, so it compares equal to posenc_selfcheck's plain status strings)."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"  # decided by the grader alone: a CUDA check on a machine without a GPU
    MISSING = "not implemented"

    def __str__(self):
        return self.value


@dataclass(frozen=True)
class ProbeRequest:
    """One probe for a sandbox child. `token` is an opaque name for this run: the child never learns
    which check, exercise visibility or candidate a request stands for."""

    token: str
    probe: str
    params: dict
    exercise: str

    def to_json(self):
        return {"token": self.token, "probe": self.probe, "params": self.params, "exercise": self.exercise}


@dataclass(frozen=True)
class Statement:
    """One top-level statement of the submission: where it comes from (for messages) and its source."""

    label: str
    source: str


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
    feedback: str = ""
    mistake: str = ""  # the named mistake, when the wrong answer is a known one

    @property
    def score(self):
        return self.check.points if self.status == Status.PASSED else 0.0

    @property
    def max_score(self):
        return 0.0 if self.status == Status.SKIPPED else self.check.points


@dataclass
class Grade:
    """One submission, graded."""

    submission: str
    verdicts: list
    notes: list  # what the learner should know beyond the checks (escaped at output, not here)
    seconds: float
    flags: list = field(default_factory=list)  # code a person should look at (grader.parse.FLAGS)
    # what children that held hidden requests logged: shown only where hidden checks are (after the due date)
    hidden_notes: list = field(default_factory=list)

    @property
    def total(self):
        return sum(v.score for v in self.verdicts)

    @property
    def max_score(self):
        return sum(v.max_score for v in self.verdicts)
