"""The grader's in-process judging and its sandboxed grading, for the self-check tests: one place that
knows the grader's API (the engine of this branch, or the grading core that replaces it)."""

from __future__ import annotations


def judge_in_process(ns, check):
    """The grader's verdict on `check` for the definitions in `ns`, probed in this process (trusted test data)."""
    from posenc_selfcheck import probes

    try:
        from grader.grading import judge

        from grader import hidden_probes

        catalog = hidden_probes.catalog()
    except ImportError:
        from grader.engine import judge
        from grader.hidden_probes import CATALOG as catalog
    return judge(check, probes.run(ns, check.probe, check.params, check.exercise, catalog))


def mistake_answers(check):
    """((message, answer), ...) of the known mistakes `check` recognises, computed from the reference."""
    try:
        from grader.reference import mistakes
    except ImportError:
        from grader.engine import mistake_results as mistakes
    return mistakes(check)


def grade_in_sandbox(submission, checks):
    """[(check, status, feedback)] of one submission graded by the real grading path (sandbox included)."""
    try:
        from grader.grading import Grader  # noqa: F401

        from tests.conftest import grade

        return [(v.check, v.status, v.feedback) for v in grade(submission, checks).verdicts]
    except ImportError:
        from grader.engine import Engine

        with Engine(str(submission), checks=tuple(checks)) as engine:
            return [(c, r.status, r.feedback) for c, r in ((c, engine.grade(c)) for c in checks)]
