"""Every scored check rests on inputs no learner has seen (grader/twins.py, grader/unseen.py).

The build proves the declarations (authoring.twin_problems: a twin for every scored check, draws in each, a space of
at least Settings' twins.min_space inputs). These tests prove what needs running code: each twin's draws are
inputs the reference accepts, they vary with the student, and none equals an input whose answer ships.
"""

from __future__ import annotations

import pytest

from grader import reference, shipped, unseen
from grader.checks import CHAPTERS
from grader.settings import TWINS
from grader.twins import scored, twins_of, with_twins

SECRET = bytes(range(32))
STUDENTS = ("s1", "s2", "s3")


def _drawn(chapter):
    """(check, [its twins or itself, for a main check]) of one chapter."""
    checks = CHAPTERS[chapter]
    return [(c, (c,) if c.main else twins_of(c, checks)) for c in checks if c.main or scored(c)]


def _answers(check, students):
    ids = [unseen.identity(SECRET, "course", s) for s in students]
    resolved = [unseen.resolve(check, ident, shipped.inputs()) for ident in ids]
    return resolved, [reference.answer(r) if r.needs_reference() or r.expect == "property" else None for r in resolved]


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_every_scored_check_has_twins_that_draw(chapter):
    for check, drawn in _drawn(chapter):
        assert drawn, f"{check.key} has no twin"
        assert all(t.unseen for t in drawn), check.key
        assert all(t.twin_of == check.key for t in drawn if not check.main)


def test_a_shared_twin_runs_once_and_counts_for_each_check_that_declares_it():
    checks, keys = with_twins(CHAPTERS["ch04"])
    verdict_checks = [c for c in CHAPTERS["ch04"] if c.exercise == "check_relative_property" and scored(c)]
    shared = {k for c in verdict_checks for k in keys[c.key]}
    assert 1 <= len(shared) <= 2  # the whole hidden catalogue, per head width
    assert len([c for c in checks if c.key in shared]) == len(shared)


@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_twins_draw_inputs_the_reference_answers_that_vary_by_student_and_never_ship(chapter):
    known = shipped.inputs()
    for check, drawn in _drawn(chapter):
        for twin in drawn:
            if twin.cuda:
                continue
            resolved, answers = _answers(twin, STUDENTS)
            for r in resolved:
                assert unseen.canonical(r.params) not in known, twin.key
            if answers[0] is None:
                continue
            if "candidates" in twin.params:  # a property test's: the same verdicts, on candidates in a drawn order
                assert len({tuple(r.params["candidates"]) for r in resolved}) > 1, twin.key
                continue
            assert not any("error" in a for a in answers), (twin.key, [a.get("error") for a in answers])
            keys = sorted(answers[0])
            distinct = {repr([answers[i][k].tolist() if hasattr(answers[i][k], "tolist") else answers[i][k]
                              for k in keys]) for i in range(len(answers))}
            assert len(distinct) > 1, f"{twin.key}: the same answer for every student"


def test_draws_depend_on_the_student_and_the_assignment_never_on_the_code():
    check = next(t for c in CHAPTERS["ch01"] for t in twins_of(c, CHAPTERS["ch01"]))
    a = unseen.resolve(check, unseen.identity(SECRET, "ch01", "alice"))
    assert a.params == unseen.resolve(check, unseen.identity(SECRET, "ch01", "alice")).params  # a regrade
    assert a.params != unseen.resolve(check, unseen.identity(SECRET, "ch01", "bob")).params
    assert a.params != unseen.resolve(check, unseen.identity(SECRET, "week1", "alice")).params
    assert a.params != unseen.resolve(check, unseen.identity(bytes(32), "ch01", "alice")).params


def test_a_draw_that_equals_a_shipped_input_is_drawn_again():
    check = next(t for c in CHAPTERS["ch01"] for t in twins_of(c, CHAPTERS["ch01"]))
    ident = unseen.identity(SECRET, "ch01", "alice")
    first = unseen.resolve(check, ident)
    again = unseen.resolve(check, ident, frozenset({unseen.canonical(first.params)}))
    assert again.params != first.params


def test_the_twins_are_folded_into_their_checks_and_a_failed_twin_voids_its_check():
    from grader.grading import TWIN
    from grader.grading import with_twins as fold
    from grader.records import Status, Verdict

    checks, keys = with_twins(CHAPTERS["ch01"])
    public = next(c for c in checks if c.public and c.expect == "match" and keys[c.key])
    twin = next(c for c in checks if c.key == keys[public.key][0])
    passed = [Verdict(public, Status.PASSED), Verdict(twin, Status.PASSED)]
    assert [v.status for v in fold(passed, keys)] == [Status.PASSED]
    failed = fold([Verdict(public, Status.PASSED), Verdict(twin, Status.FAILED, "output: 3 of 8 entries differ")],
                  keys)
    assert [(v.check.key, v.status, v.feedback) for v in failed] == [(public.key, Status.FAILED, TWIN)]


def test_min_space_bounds_a_guess():
    assert 1 / TWINS.min_space <= 1e-3


def test_gradescope_draws_are_keyed_on_the_users_and_the_assignment_never_the_submission(tmp_path):
    import json

    from grader.gradescope import identity

    path = tmp_path / "submission_metadata.json"

    def write(submission_id, users, assignment):
        path.write_text(json.dumps({"id": submission_id, "created_at": "2026-12-01T10:00:00Z", "users": users,
                                    "assignment": assignment}))
        return identity(path)

    group = [{"id": 1234, "email": "a@example.com", "name": "A"}, {"id": 99, "email": "b@example.com", "name": "B"}]
    first = write(1, group, {"id": 25828})
    assert first == ("1234+99", "25828")  # the ids sorted as text
    assert write(2, list(reversed(group)), {"id": 25828}) == first  # a resubmission, the users in another order
    assert write(3, group[:1], {"id": 25828}) != first
    assert write(1, group, {"id": 1}) != first
    path.write_text("{not json")
    assert identity(path) == (None, None)
    assert identity(tmp_path / "missing.json") == (None, None)


def test_correct_code_gets_full_marks_whoever_the_student_is():
    """Fair to correct code: the bundled complete example (written as practitioners write it, float32 frequencies
    included) passes every twin drawn for another student than the tests' own (tests/test_examples.py grades it
    as that one)."""
    from grader.grading import Grader
    from tests.conftest import ROOT, settings
    from tests.grading_support import defined

    grade = Grader(settings()).grade(ROOT / "examples" / "complete", student="another student")
    written = defined(ROOT / "examples" / "complete")  # a later exercise may have no example (docs/authoring.md)
    assert [(v.check.key, str(v.feedback)) for v in grade.verdicts
            if v.status not in ("passed", "skipped") and v.check.exercise in written] == []


def test_a_known_mistake_on_the_main_twin_still_proves_the_work_of_a_value_free_check():
    """A check that raises, reports module facts or runs on the meta device asks its main-check twin for work: a
    named mistake's answer there is work on unseen inputs (that mistake is another check's), so it counts; any other
    failure does not, and a value check's twins never count a mistake."""
    from grader.grading import with_twins as fold
    from grader.records import Status, Verdict

    checks, keys = with_twins(CHAPTERS["ch01"])
    raises = next(c for c in checks if c.public and c.expect == "raises" and keys[c.key])
    work = next(c for c in checks if c.key in keys[raises.key] and c.proves_work)
    others = [c for c in checks if c.key in keys[raises.key] and c is not work]

    def verdicts(status, mistake=""):
        return ([Verdict(raises, Status.PASSED), Verdict(work, status, "wrong", mistake)]
                + [Verdict(c, Status.PASSED) for c in others])

    assert [v.status for v in fold(verdicts(Status.FAILED, "sin and cos are swapped"), keys)] == [Status.PASSED]
    assert [v.status for v in fold(verdicts(Status.FAILED), keys)] == [Status.FAILED]
    value = next(c for c in checks if c.public and c.expect == "match" and keys[c.key])
    assert not any(c.proves_work for c in checks if c.key in keys[value.key])


def test_a_value_free_check_is_voided_by_its_own_mistake_on_its_twin_not_by_another():
    """The bfloat16 mask-dtype property (chapter 7) sees its case through a forward twin drawn for the student: a
    forward that makes another known mistake (a Shaw form, a sign) still shows the mask cast right, so the check
    keeps its points; the mistake the check itself fails (the bias left in float32) voids it."""
    from grader.checks import mistakes
    from grader.grading import caught_by
    from grader.grading import with_twins as fold
    from grader.records import Status, Verdict

    checks, keys = with_twins(CHAPTERS["ch07"])
    mask = next(c for c in checks if c.id == "bfloat16_mask_dtype")
    (forward,) = [c for c in checks if c.key in keys[mask.key]]
    assert forward.proves_work and forward.probe != mask.probe
    own = mistakes()[mask.mistakes[0]].message
    assert own in caught_by(mask)
    other = next(mistakes()[name].message for name in forward.mistakes if name not in mask.mistakes)

    def folded(mistake):
        return [v.status for v in fold([Verdict(mask, Status.PASSED), Verdict(forward, Status.FAILED, "x", mistake)],
                                       keys)]

    assert folded(other) == [Status.PASSED]
    assert folded(own) == [Status.FAILED]
    assert folded("") == [Status.FAILED]


def test_every_known_mistake_answers_a_value_free_checks_twin_where_the_reference_does():
    """A value-free check keeps its point when its twin shows a known mistake of another check (proves_work); a
    mistake's implementation that raises where the reference answers can never be named there, so a learner who
    makes it would lose the value-free point too (chapter 7's hand-written attention mistakes left a float32 bias
    uncast in bfloat16, and every one of them raised on the mask-dtype twin)."""
    from tests.grading_support import drawn

    broken = []
    for checks in CHAPTERS.values():
        for twin in with_twins(checks)[0]:
            if not (twin.proves_work and twin.mistakes) or twin.cuda:
                continue
            twin = drawn(twin)
            if "error" in reference.answer(twin):
                continue
            broken += [(twin.key, message.context, answer["error"][:80])
                       for message, answer in reference.mistakes(twin) if "error" in answer]
    assert broken == []
