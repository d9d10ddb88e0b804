"""grader/records.py: one status list (the self-check's), one way to add up points, one JSON form of a Grade."""

import json
import math
import random
import subprocess
import sys

from grader.checks import all_checks, by_key
from grader.records import Grade, Status, Verdict, totals
from tests.conftest import ROOT


def test_the_grader_statuses_are_the_self_checks_words():
    """One list: records.Status derives from posenc_selfcheck/status.py, which evaluate returns from."""
    from posenc_selfcheck import evaluate, status

    assert tuple(s.value for s in Status) == status.STATUSES
    assert (evaluate.PASSED, evaluate.FAILED, evaluate.SKIPPED, evaluate.MISSING) == status.STATUSES
    assert Status.MISSING == "not implemented" and str(Status.PASSED) == "passed"


def test_records_loads_without_torch():
    """The grader's own process (command line, batch worker) never imports torch; reading the statuses must not."""
    code = "import sys; import grader.records; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def _grade(seed=0):
    rng = random.Random(seed)
    checks = rng.sample(all_checks(), 12)
    verdicts = [Verdict(c, rng.choice(list(Status)), f"feedback {i}", rng.choice(["", "a_mistake"]))
                for i, c in enumerate(checks)]
    return Grade("sub.ipynb", verdicts, ["a note"], 1.25, ["exits the process"], ["a hidden note"])


def test_totals_add_each_verdicts_points_once():
    grade = _grade()
    # independently: a passed check scores its points, a skipped one is out of nothing
    want_score = math.fsum(v.check.points for v in grade.verdicts if v.status == Status.PASSED)
    want_max = math.fsum(v.check.points for v in grade.verdicts if v.status != Status.SKIPPED)
    assert totals(grade.verdicts) == (want_score, want_max)
    assert (grade.total, grade.max_score) == (want_score, want_max)
    per = grade.by_exercise()
    assert math.isclose(math.fsum(s for s, _ in per.values()), want_score)
    assert math.isclose(math.fsum(m for _, m in per.values()), want_max)
    assert list(per) == list(dict.fromkeys(v.check.exercise for v in grade.verdicts))


def test_a_grade_survives_json_both_ways():
    grade = _grade(seed=3)
    data = json.loads(json.dumps(grade.to_json()))  # what crosses a process: plain JSON
    back = Grade.from_json(data, by_key())
    assert back == grade
    assert [type(v.status) for v in back.verdicts] == [Status] * len(grade.verdicts)
    assert [v[0] for v in data["verdicts"]] == [v.check.key for v in grade.verdicts]  # a check travels by its key
