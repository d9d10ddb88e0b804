"""Shared fixtures. Test data under tests/submissions and tests/hostile is learner code: never collected.

Grading goes through grader.grading with one zygote for the whole test session (each submission still
gets a fresh session of its own): the sandbox's torch import is paid once, not once per test.
"""

import os
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

collect_ignore_glob = ["submissions/*", "hostile/*", "fixtures/*", "snapshots/*"]

# one torch thread in the tests and every process they start (set before anything imports torch): their tensors
# are small, the suite runs several processes at once on two cores, and a second thread per process only waited
# (three test files on a busy machine: 88 s and 79 s on two threads, 66 s and 60 s on one). The grader's own
# processes take one thread anyway (grader/remote.py, the sandbox's server).
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _test_secret():
    """The grader's secret for the tests (grader/unseen.py): fixed, so that the main checks draw the same inputs
    on every run and the snapshot holds; set before anything reads Settings, inherited by commands the tests run."""
    import atexit
    import hashlib
    import os
    import shutil
    import tempfile

    if os.environ.get("POSENC_GRADER_SECRET"):
        return  # the process that made it (pytest's, not its xdist workers) removes it
    folder = tempfile.mkdtemp(prefix="posenc-test-secret-")
    path = Path(folder) / "secret"
    path.write_bytes(hashlib.sha256(b"posenc tests: not a grader's secret").digest())
    path.chmod(0o600)
    os.environ["POSENC_GRADER_SECRET"] = str(path)
    maker = os.getpid()
    atexit.register(lambda: os.getpid() != maker or shutil.rmtree(folder, ignore_errors=True))  # not in a fork


_test_secret()


@pytest.fixture(scope="session")
def root():
    return ROOT


@lru_cache(maxsize=None)
def settings(**limits):
    from grader.settings import Settings

    return Settings.from_env(limits=limits)


@lru_cache(maxsize=None)
def graded(submission):
    """A Grade of a bundled submission (examples/, tests/submissions/, solutions/, notebooks/) for every
    check, with the default settings; graded once per test session, shared by every test that reads it."""
    from grader.grading import Grader

    return Grader(settings()).grade(submission, student=STUDENT)


STUDENT = "tests"  # the student id the tests grade as (the draws are a student's: grader/unseen.py)


def grade(submission, checks=None, settings_=None, **limits):
    """A Grade of `submission` (only `checks`, when given) with the real grading path. Bundled
    submissions under the default settings come from `graded` (the verdicts of `checks` picked out)."""
    from dataclasses import replace

    from grader.grading import Grader

    path = Path(submission).resolve()
    if settings_ is None and not limits and path.is_relative_to(ROOT) and not path.is_relative_to(ROOT / ".venv"):
        full = graded(str(path))
        keys = None if checks is None else {c.key for c in checks}
        return replace(full, verdicts=[v for v in full.verdicts if keys is None or v.check.key in keys])
    return Grader(settings_ or settings(**limits), checks).grade(submission, student=STUDENT)


def grade_with(submission, checks, **limits):
    """Grade `checks` of one submission; {check name: Verdict}."""
    return {v.check.name: v for v in grade(submission, checks, **limits).verdicts}


# Test files that grade the bundled submissions through `graded` (every check, default settings). Its cache is
# one process's: under `--dist loadfile` (scripts/test.sh) one worker runs these files together, so each submission
# is graded once a session rather than once on each worker that runs one of them.
GRADE_SHARERS = ("test_snapshot.py", "test_messages_grader.py", "test_examples.py", "test_practitioner_variants.py",
                 "test_report_i18n.py", "test_ch03_grading.py", "test_ch04_grading.py", "test_ch07_grading.py",
                 "test_ch08_grading.py")


# Units of work (a test file, a notebook) that take minutes, or long for their few tests, run first and longest first:
# pytest-xdist's own order (most tests first) left them to the end, where one worker ran them while the others had
# nothing left (test_build_steps' four tests, a minute, ended a suite 21 s after the other workers). The solution
# notebooks come before the book's test, which shows the outputs of their nbval run (solutions/conftest.py); "*.ipynb"
# stands for the notebooks not named.
FIRST = ("solutions/07_train_short_test_long.ipynb", "solutions/08_positions_in_2d.ipynb",
         "tests/test_lab_languages.py", "tests/test_learner_work.py", "*.ipynb", "tests/test_browser.py",
         "tests/test_book.py", "tests/test_nbgrader_grading.py", "tests/test_build_steps.py",
         "tests/test_nbgrader_export.py", "tests/test_nbgrader_class.py", "tests/test_gradescope.py",
         "tests/test_three_files.py", "tests/test_trust_boundary_edges.py")


def _unit(nodeid):
    """The unit of work a test belongs to: its file, or the files of GRADE_SHARERS together."""
    path = nodeid.split("::")[0]
    return "tests/" + "+".join(GRADE_SHARERS) if path in [f"tests/{f}" for f in GRADE_SHARERS] else path


def pytest_collection_modifyitems(session, config, items):
    """The units of FIRST in that order, then the others with the most tests first (pytest-xdist's order), each
    unit's tests in their own order."""
    units = [_unit(item.nodeid) for item in items]
    size, first_seen = {}, {}
    for i, unit in enumerate(units):
        size[unit] = size.get(unit, 0) + 1
        first_seen.setdefault(unit, i)

    def rank(unit):
        named = unit if unit in FIRST else "*.ipynb" if unit.endswith(".ipynb") else None
        return (FIRST.index(named), 0) if named else (len(FIRST), -size[unit])

    order = sorted(range(len(items)), key=lambda i: (rank(units[i]), first_seen[units[i]], i))
    items[:] = [items[i] for i in order]


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with the files of GRADE_SHARERS one unit of work (a file is one everywhere else), handed out
    in the order of pytest_collection_modifyitems."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # the order is the collection's (above)

    class SharedGrades(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return _unit(nodeid)

    return SharedGrades(config, log)
