"""A check names only mistakes its input tells apart (issue 28): the diagnosis names the first known mistake whose
answer equals the learner's (posenc_selfcheck/evaluate.py `blamed`), so two mistakes of one check with the same
wrong answer there would let one be blamed for the other. On a single row, say, numbering the patches by height
instead of width gives the answer of concatenating the column blocks first: a check on that input must name
neither.

Every value check with known mistakes, a main check on inputs drawn as for a submission: each mistake it names has
an answer there that no other known mistake of its exercise gives, attached to the check or not, wherever it differs
from the reference's (a mistake whose answer is the reference's there is never named: tests/test_judge_blame.py)."""

from dataclasses import replace

import pytest

from grader.checks import all_checks
from grader.mistakes import MISTAKES
from grader.reference import answer, mistakes
from posenc_selfcheck.evaluate import same_answer
from posenc_selfcheck.messages import render
from tests.grading_support import drawn

VALUE_CHECKS = [c for c in all_checks() if c.expect == "match" and c.mistakes and not c.cuda]


def spec(check):
    """What the self-check's comparison reads of a check: its tolerance."""
    return {"tol": check.tol}


@pytest.mark.parametrize("check", VALUE_CHECKS, ids=lambda c: c.key)
def test_the_mistakes_a_check_names_have_answers_of_their_own(check):
    check = drawn(check)
    reference = answer(check)
    every = tuple(name for name, m in MISTAKES.items() if m.exercise == check.exercise)  # its exercise's, all
    answers = dict(zip(every, (a for _, a in mistakes(replace(check, mistakes=every)))))
    alike = [(named, other) for named in check.mistakes if not same_answer(spec(check), answers[named], reference)
             for other in every if other != named and "error" not in answers[other]
             and same_answer(spec(check), answers[named], answers[other])]
    assert alike == [], f"{check.key}: names mistakes its input cannot tell from others: {alike}"


def test_the_detector_sees_a_mistake_equal_to_itself():
    """same_answer is the comparison the test relies on: a mistake's answer equals itself (else the test above
    could never fail)."""
    check = drawn(next(c for c in VALUE_CHECKS if c.key == "sincos_2d_table.grid_4x6_d_16"))
    (message, first), *_ = mistakes(check)
    assert same_answer(spec(check), first, first) and render(message, "en")
