"""Checks declared as data become pytest items, graded through grader.grading (a thin adapter):

    pytest course --submission examples/complete           grade with plain pytest (course/conftest.py)
    pytest course --submission examples/complete -m cuda   only the CUDA checks

Each chapter's course/NN_name/exercises.py is collected as a file of its checks.

The first item that runs grades the submission once, for every check that was collected and
selected; each item then reports its own verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import course
from .checks import chapter_checks
from .records import Status
from .settings import Limits, Settings

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = pytest.StashKey()


def pytest_addoption(parser):
    group = parser.getgroup("posenc grader")
    group.addoption("--submission", default=str(ROOT / "solutions"),
                    help="notebook, .py file or folder to grade (default: the solution notebooks)")
    group.addoption("--wall-seconds", type=float, default=Limits.wall_seconds,
                    help="wall-clock limit for one exercise, in seconds")


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device; reported as skipped without one")


def pytest_collection_modifyitems(session, config, items):
    config.stash[VERDICTS] = {"checks": [i.check for i in items if isinstance(i, CheckItem)], "done": None}


def _verdicts(config):
    state = config.stash[VERDICTS]
    if state["done"] is None:
        from .grading import grade

        settings = Settings.from_env(limits={"wall_seconds": config.getoption("--wall-seconds")})
        result = grade(config.getoption("--submission"), settings, checks=state["checks"])
        state["done"] = {v.check.key: v for v in result.verdicts}
    return state["done"]


def pytest_collect_file(file_path, parent):
    if Path(file_path).resolve() in {chapter.path("exercises") for chapter in course.chapters()}:
        return ChapterFile.from_parent(parent, path=file_path)
    return None


class CheckFailed(Exception):
    pass


class ChapterFile(pytest.File):
    def collect(self):
        for check in chapter_checks(course.of_file(self.path).key):
            item = CheckItem.from_parent(self, name=check.key, check=check)
            if check.cuda:
                item.add_marker(pytest.mark.cuda)
            yield item


class CheckItem(pytest.Item):
    def __init__(self, *, check, **kwargs):
        super().__init__(**kwargs)
        self.check = check

    def runtest(self):
        verdict = _verdicts(self.config)[self.check.key]
        if verdict.status == Status.SKIPPED:
            pytest.skip(str(verdict.feedback))  # its English: pytest is the instructor's tool
        if verdict.status != Status.PASSED:
            raise CheckFailed(str(verdict.feedback))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            return f"{self.check.exercise}: {self.check.name}\n  {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.check.exercise}: {self.check.name}"
