"""Checks declared as data become pytest items: one item per check, one sandbox per session.

    pytest grader/checks --submission examples/complete           grade with plain pytest
    pytest grader/checks --submission examples/complete -m cuda   only the CUDA checks

`python -m grader grade` runs the same collection through pytest.main and turns the items'
results into a report and a Gradescope results.json.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .checks import chapter_checks
from .engine import Engine
from .sandbox.client import Limits

ROOT = Path(__file__).resolve().parent.parent
CHAPTER_FILE = re.compile(r"^ch\d\d\.py$")
ENGINE = pytest.StashKey()


def pytest_addoption(parser):
    group = parser.getgroup("posenc grader")
    group.addoption("--submission", default=str(ROOT / "solutions"),
                    help="notebook, .py file or folder to grade (default: the solution notebooks)")
    group.addoption("--wall-seconds", type=float, default=Limits.wall_seconds,
                    help="wall-clock limit for one exercise, in seconds")


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device; reported as skipped without one")


def pytest_unconfigure(config):
    engine = config.stash.get(ENGINE, None)
    if engine is not None:
        engine.close()


def _engine(config):
    if ENGINE not in config.stash:
        limits = Limits(wall_seconds=config.getoption("--wall-seconds"))
        config.stash[ENGINE] = Engine(config.getoption("--submission"), limits=limits)
    return config.stash[ENGINE]


def pytest_collect_file(file_path, parent):
    if CHAPTER_FILE.match(file_path.name) and file_path.parent.name == "checks":
        return ChapterFile.from_parent(parent, path=file_path)
    return None


class CheckFailed(Exception):
    pass


class ChapterFile(pytest.File):
    def collect(self):
        for check in chapter_checks(self.path.stem):
            item = CheckItem.from_parent(self, name=check.key, check=check)
            if check.cuda:
                item.add_marker(pytest.mark.cuda)
            yield item


class CheckItem(pytest.Item):
    def __init__(self, *, check, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.result = None

    def runtest(self):
        self.result = _engine(self.config).grade(self.check)
        if self.result.status == "skipped":
            pytest.skip(self.result.feedback)
        if self.result.status != "passed":
            raise CheckFailed(self.result.feedback)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CheckFailed):
            return f"{self.check.exercise}: {self.check.name}\n  {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.check.exercise}: {self.check.name}"
