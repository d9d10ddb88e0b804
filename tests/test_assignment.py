"""Assignments (grader/assignment.py): the chapters by default, the course file's own, and a grade counted
the way an assignment counts it."""

from __future__ import annotations

import json

import pytest

from grader.assignment import CourseError, get, load_course, whole_course
from grader.checks import CHAPTERS, chapter_checks
from grader.records import Grade, Status, Verdict


def course_file(tmp_path, **assignments):
    path = tmp_path / "course.json"
    path.write_text(json.dumps({"assignments": assignments}))
    return path


def test_every_chapter_of_the_registry_is_an_assignment(tmp_path):
    course = load_course(tmp_path / "none.json")
    assert list(course) == list(CHAPTERS)  # a chapter added to the registry appears with no other change
    for chapter, assignment in course.items():
        assert [c.key for c in assignment.checks] == [c.key for c in chapter_checks(chapter)]
        assert assignment.nbgrader_name.startswith(chapter)
        assert get(assignment.nbgrader_name, tmp_path / "none.json") == assignment  # nbgrader's name works too
    assert sum(a.max_points() for a in course.values()) == whole_course().max_points()


def test_the_repository_course_file_is_valid():
    course = load_course()
    assert set(CHAPTERS) < set(course)


def test_points_per_exercise_scale_its_checks_and_hidden_checks_leave_the_registry_alone(tmp_path):
    path = course_file(tmp_path, week1={"chapters": ["ch00", "ch01"], "exercises": ["sinusoidal_table"],
                                        "points": {"sinusoidal_table": 40}, "hidden": ["sinusoidal_table"]})
    week1 = get("week1", path)
    original = [c for c in chapter_checks("ch01") if c.exercise == "sinusoidal_table"]
    assert [c.key for c in week1.checks] == [c.key for c in original]
    assert week1.max_points() == pytest.approx(40)
    cpu = sum(c.points for c in original if not c.cuda)
    for mine, theirs in zip(week1.checks, original):  # each check keeps its share of the exercise
        assert mine.points == pytest.approx(theirs.points * 40 / cpu)
        assert not mine.public
    assert any(c.public for c in original)


def test_a_grade_counts_the_assignment_s_checks_with_its_points(tmp_path):
    path = course_file(tmp_path, w={"chapters": ["ch01"], "exercises": ["shift_matrix"], "points": {"shift_matrix": 3}})
    w = get("w", path)
    checks = chapter_checks("ch01")
    grade = Grade("x", [Verdict(c, Status.PASSED) for c in checks], [], 1.0)
    counted = w.apply(grade)
    assert {v.check.exercise for v in counted.verdicts} == {"shift_matrix"}
    assert counted.total == pytest.approx(w.max_points(cuda=True))  # every check passed, in w's points
    assert w.max_points() == pytest.approx(3)  # the CPU checks: what the course file asked for
    assert [v.check.key for v in counted.verdicts] == [c.key for c in checks if c.exercise == "shift_matrix"]


@pytest.mark.parametrize("entry, message", [
    ({"chapters": ["ch42"]}, "no chapter"),
    ({"chapters": []}, "needs 'chapters'"),
    ({"chapters": ["ch01"], "exercises": ["rope"]}, "not exercises of"),
    ({"chapters": ["ch01"], "points": {"rope": 3}}, "not one of its exercises"),
    ({"chapters": ["ch01"], "points": {"shift_matrix": -1}}, "number >= 0"),
    ({"chapters": ["ch01"], "hidden": ["shift_matrix.nope"]}, "neither a check key"),
    ({"chapters": ["ch01"], "due": "tomorrow"}, "unknown keys"),
])
def test_course_file_mistakes_are_named(tmp_path, entry, message):
    path = course_file(tmp_path, w=entry)
    with pytest.raises(CourseError, match=message):
        load_course(path)


def test_names_cannot_shadow_a_chapter(tmp_path):
    with pytest.raises(CourseError, match="chapter's own"):
        load_course(course_file(tmp_path, ch01={"chapters": ["ch01"]}))
    with pytest.raises(CourseError, match="no assignment 'nope'"):
        get("nope", tmp_path / "none.json")
