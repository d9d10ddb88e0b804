"""Grade one submission: learner code in the sandbox, the reference and the verdicts in here."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import torch

from posenc_selfcheck import probes
from posenc_selfcheck.evaluate import FAILED, MISSING, PASSED, SKIPPED, evaluate

from .checks import all_checks
from .hidden_probes import CATALOG
from .sandbox.client import Limits, Sandbox
from .spec import Check
from .submission import defining_file, read_submission


@dataclass
class CheckResult:
    check: Check
    status: str  # passed | failed | skipped | not implemented
    feedback: str
    diagnosis: str = ""  # the named mistake, when the wrong answer is a known one

    @property
    def score(self):
        return self.check.points if self.status == PASSED else 0.0

    @property
    def max_score(self):
        return 0.0 if self.status == SKIPPED else self.check.points


@lru_cache(maxsize=None)
def _reference_ns():
    import posenc_ref

    return dict(vars(posenc_ref))


@lru_cache(maxsize=None)
def reference_result(check: Check):
    """The reference's answer to a check's probe (computed in this process, cached)."""
    return probes.run(_reference_ns(), check.probe, check.params, check.exercise, CATALOG)


@lru_cache(maxsize=None)
def mistake_results(check: Check):
    """[(message, result)] of the known mistakes this check recognises."""
    from posenc_ref.mistakes import MISTAKES

    out = []
    for name in check.mistakes:
        mistake = MISTAKES[name]
        ns = dict(_reference_ns())
        ns[mistake.exercise] = mistake.impl
        out.append((mistake.message, probes.run(ns, check.probe, check.params, check.exercise, CATALOG)))
    return tuple(out)


def judge(check: Check, got: dict) -> CheckResult:
    expected = reference_result(check) if check.needs_reference() else None
    if expected is not None and "skipped" in expected:
        return CheckResult(check, SKIPPED, expected["skipped"])
    if expected is not None and "error" in expected:
        raise RuntimeError(f"the reference fails check {check.key} ({check.name}): {expected['error']}")
    if check.expect == "property" and "error" not in got and "skipped" not in got:
        # a property compares errors with a tolerance, and NaN > tol is False: never let NaN pass
        nan = [k for k, v in got.items() if isinstance(v, torch.Tensor) and v.is_floating_point() and v.isnan().any()]
        if nan:
            return CheckResult(check, FAILED, f"{'output' if nan[0] == 'out' else nan[0]} holds NaN")
    status, feedback = evaluate(check.spec(), got, expected, ())
    if status == FAILED and check.mistakes:
        status, feedback = evaluate(check.spec(), got, expected, mistake_results(check))
        named = [m for m, _ in mistake_results(check) if feedback.startswith(m)]
        return CheckResult(check, status, feedback, named[0] if named else "")
    return CheckResult(check, status, feedback)


@dataclass
class Engine:
    """Lazily runs each exercise once in the sandbox, then judges its checks."""

    submission: str
    limits: Limits | None = None
    checks: tuple = ()
    runs: dict = field(default_factory=dict)

    def __post_init__(self):
        self.files = read_submission(self.submission)
        self.checks = tuple(self.checks) or all_checks()
        self.sandbox = Sandbox(self.limits)

    def close(self):
        self.sandbox.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run_exercise(self, exercise):
        if exercise not in self.runs:
            source = defining_file(self.files, exercise)
            if source is None:
                self.runs[exercise] = None
            else:
                wanted = [(c.key, c.probe, c.params, c.exercise) for c in self.checks if c.exercise == exercise]
                self.runs[exercise] = self.sandbox.run(source.statements, wanted)
        return self.runs[exercise]

    def grade(self, check: Check) -> CheckResult:
        if check.cuda and not torch.cuda.is_available():
            # worth nothing here, whether or not the exercise exists: totals stay comparable
            return CheckResult(check, SKIPPED, "no CUDA device on this machine")
        run = self.run_exercise(check.exercise)
        if run is None:
            return CheckResult(check, MISSING, f"not implemented yet: no `{check.exercise}` is defined")
        got = run.results.get(check.key, {"error": "no result", "error_type": "NoResult"})
        return judge(check, got)

    def grade_all(self):
        return [self.grade(c) for c in self.checks]

    def notes(self):
        """What the learner should know beyond the checks: unreadable files, cells not run."""
        out = [n for f in self.files for n in f.notes]
        seen = set()
        for exercise, run in self.runs.items():
            if run is None:
                continue
            if run.ended not in ("ok", ""):
                out.append(f"{exercise}: the process running it {run.ended}")
            for entry in run.exec_log:
                key = (entry.get("where"), entry.get("error"))
                if key not in seen:
                    seen.add(key)
                    out.append(f"{entry.get('where')}: {entry.get('error')}")
        return out
