"""Shared fixtures. Test data under tests/submissions and tests/hostile is learner code: never collected."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

collect_ignore_glob = ["submissions/*", "hostile/*", "fixtures/*"]


@pytest.fixture(scope="session")
def root():
    return ROOT


def grade_with(submission, checks, **limits):
    """Grade `checks` of one submission with the real engine; {check name: CheckResult}."""
    from grader.engine import Engine
    from grader.sandbox.client import Limits

    with Engine(str(submission), limits=Limits(**limits) if limits else None, checks=tuple(checks)) as engine:
        return {c.name: engine.grade(c) for c in checks}
