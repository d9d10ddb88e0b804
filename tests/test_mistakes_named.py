"""Every known mistake (every chapter's, derived or written by hand in course/NN_name/mistakes.py) is named: by
some grader check of its exercise, and by the learner's self-check, from the answers stored in
posenc_selfcheck/data.

A mistake that no check names is dead weight in the catalogue, and a mistake that only the grader
names leaves the learner's first feedback, the self-check, silent about it."""

import pytest

from grader.checks import all_checks, chapter_of
from grader.grading import judge
from grader.mistakes import MISTAKES
from posenc_selfcheck import FAILED, public_checks
from posenc_selfcheck.evaluate import evaluate
from tests.grading_support import drawn, mistake_answers

CHECKS = tuple(c for c in all_checks() if not c.cuda)


def named_by_grader():
    """{mistake name: a check key whose feedback names it}, judged on the mistake's own answers."""
    named = {}
    for check in CHECKS:
        if not check.mistakes:
            continue
        check = drawn(check)  # a main check: on inputs drawn as for a submission
        for name, (message, result) in zip(check.mistakes, mistake_answers(check)):
            verdict = judge(check, result)
            if name not in named and verdict.status == FAILED and verdict.feedback.leads_with(message):
                named[name] = check.key
    return named


def named_by_selfcheck():
    """{mistake message: a public check name}, from the stored self-check data alone."""
    named = {}
    for exercise in dict.fromkeys(c.exercise for c in CHECKS):
        for spec, expected, mistakes in public_checks(exercise):
            for message, result in mistakes:
                status, feedback = evaluate(spec, result, expected, mistakes)
                if status == FAILED and feedback.leads_with(message):
                    named.setdefault((exercise, message.id), spec["name"])
    return named


@pytest.fixture(scope="module")
def grader_names():
    return named_by_grader()


@pytest.fixture(scope="module")
def selfcheck_names():
    return named_by_selfcheck()


def test_every_chapter_has_mistakes_and_each_is_named_by_a_check_of_its_exercise(grader_names):
    chapters = {chapter_of()[m.exercise] for m in MISTAKES.values()}
    assert chapters == {f"ch{n:02d}" for n in range(10)}
    assert sorted(set(MISTAKES) - set(grader_names)) == []
    for name, key in grader_names.items():
        assert key.split(".")[0] == MISTAKES[name].exercise, name


def test_every_mistake_is_named_by_the_self_check_too(selfcheck_names):
    missing = sorted(name for name, m in MISTAKES.items() if (m.exercise, m.message) not in selfcheck_names)
    assert missing == []
