"""An exercise is one record (grader/exercise.py): what it declares is its own, its ids are unique, the mistakes its
checks name exist, and every chapter's records cover the exercises its source teaches, nothing more."""

from __future__ import annotations

import pytest

import grader.checks  # noqa: F401  (loads every chapter's declaration, as the grader does: ch04 imports from it)
from grader import course
from grader.authoring import chapter_exercises
from grader.exercise import Exercise, ExerciseError, declared
from grader.spec import Check, Mistake, draw_int, unseen_like

CHAPTERS = course.chapters()


def _check(exercise="f", id="one", **kw):
    return Check(exercise, "a case", "call", {"args": [1]}, id=id, **kw)


def _mistake(exercise="f"):
    return Mistake(exercise, "what is wrong and the fix", hints=("idea", "where", "key line: `x = 1`"), wrong="x = 2")


def test_a_record_holds_its_own_checks_main_checks_and_mistakes():
    public = _check(mistakes=("f_wrong",))
    main = unseen_like(public, {"args": [draw_int(1, 9)]}, "drawn", id="main")
    record = Exercise("f", "what f computes", [public], main=[main], hints=("a", "b"), mistakes={"f_wrong": _mistake()})
    conventions, checks, hints, mistakes = declared((record,))
    assert (conventions, hints) == ({"f": "what f computes"}, {"f": ("a", "b")})
    assert checks == [public, main] and list(mistakes) == ["f_wrong"]


def test_a_check_of_another_exercise_is_refused():
    with pytest.raises(ExerciseError, match="another exercise"):
        Exercise("f", "what f computes", [_check(), _check("g", id="two")])


def test_a_main_check_of_another_exercise_is_refused():
    main = unseen_like(_check("g"), {"args": [draw_int(1, 9)]}, "drawn", id="main")
    with pytest.raises(ExerciseError, match="another exercise"):
        Exercise("f", "what f computes", [_check()], main=[main])


def test_a_mistake_of_another_exercise_is_refused():
    with pytest.raises(ExerciseError, match="another exercise"):
        Exercise("f", "what f computes", [_check()], mistakes={"g_wrong": _mistake("g")})


def test_a_duplicate_id_is_refused():
    with pytest.raises(ExerciseError, match="share the id"):
        Exercise("f", "what f computes", [_check(id="same"), _check(id="same", public=True)])


def test_a_main_check_outside_main_is_refused():
    main = unseen_like(_check(), {"args": [draw_int(1, 9)]}, "drawn", id="main")
    with pytest.raises(ExerciseError, match="main="):
        Exercise("f", "what f computes", [_check(), main])


def test_an_unknown_mistake_is_refused():
    record = Exercise("f", "what f computes", [_check(mistakes=("f_nowhere",))])
    with pytest.raises(ExerciseError, match="f_nowhere"):
        declared((record,))


def test_an_unknown_mistake_of_a_declared_twin_is_refused():
    twin = _check(id="", mistakes=("f_nowhere",))
    record = Exercise("f", "what f computes", [_check(twin=(twin,))])
    with pytest.raises(ExerciseError, match="f_nowhere"):
        declared((record,))


def test_a_mistake_of_another_exercise_of_the_chapter_may_be_named():
    """Shaw's two forms share their messages: a check may name the other form's mistake."""
    f = Exercise("f", "what f computes", [_check(mistakes=("g_wrong",))])
    g = Exercise("g", "what g computes", [_check("g")], mistakes={"g_wrong": _mistake("g")})
    assert [c.mistakes for c in declared((f, g))[1]] == [("g_wrong",), ()]


def test_an_exercise_declared_twice_is_refused():
    with pytest.raises(ExerciseError, match="twice"):
        declared((Exercise("f", "one", [_check()]), Exercise("f", "two", [_check(id="two")])))


def test_derived_checks_are_every_exercises_checks_then_every_main_check():
    def record(name):
        public = _check(name)
        return Exercise(name, "", [public], main=[unseen_like(public, {"args": [draw_int(1, 9)]}, "d", id="main")])

    checks = declared((record("f"), record("g")))[1]
    assert [(c.exercise, c.main) for c in checks] == [("f", False), ("g", False), ("f", True), ("g", True)]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.key)
def test_every_chapter_declares_one_record_per_exercise_its_source_teaches(chapter):
    module = course.load(chapter, "exercises")
    names = [e.name for e in module.EXERCISES]
    # the solution's functions and classes (a `### BEGIN SOLUTION` region in their body), in the chapter's order
    assert names == chapter_exercises(chapter.path("source"))
    # the tables consumers read are the records' own, derived in one place
    assert (module.CONVENTIONS, module.CHECKS, module.HINTS, module.MISTAKES) == declared(module.EXERCISES)


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c.has("hidden_probes")], ids=lambda c: c.key)
def test_hidden_probes_are_pointed_to_by_the_exercise_they_grade(chapter):
    from posenc_selfcheck import probes

    hidden = course.load(chapter, "hidden_probes")
    tables = {fn.candidate_table for fn in probes.catalog().values() if getattr(fn, "candidate_table", None)}
    names = set(hidden.PROBES) | {n for table in tables for n in getattr(hidden, table, {})}
    pointed = [n for e in course.load(chapter, "exercises").EXERCISES for n in e.hidden]
    assert names and sorted(pointed) == sorted(names)
