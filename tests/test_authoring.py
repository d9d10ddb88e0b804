"""`python -m grader build --check` reports each piece an exercise lacks (grader/authoring.py): the rules the
other tests enforce (hints: tests/test_hints.py; the conventions table: tests/test_conventions.py; the
practitioner-style submission: tests/test_practitioner_variants.py) are proven by the build too, so an author
hears of a missing piece before the suite runs."""

import copy

import pytest

import grader.checks
import posenc_selfcheck.hints
from grader import authoring
from tests.conftest import ROOT

CHAPTER1 = ROOT / "chapters" / "01_sinusoidal.py"


@pytest.fixture
def declared(monkeypatch):
    """Copies of the declarations authoring.py reads, to edit: the real ones (and their order, which the
    generated tables follow) stay untouched."""
    tables = {"HINTS": copy.deepcopy(posenc_selfcheck.hints.HINTS),
              "MISTAKE_HINTS": copy.deepcopy(posenc_selfcheck.hints.MISTAKE_HINTS),
              "CONVENTIONS": copy.deepcopy(grader.checks.CONVENTIONS)}
    monkeypatch.setattr(posenc_selfcheck.hints, "HINTS", tables["HINTS"])
    monkeypatch.setattr(posenc_selfcheck.hints, "MISTAKE_HINTS", tables["MISTAKE_HINTS"])
    monkeypatch.setattr(grader.checks, "CONVENTIONS", tables["CONVENTIONS"])
    return tables


def reported(chapters=None):
    return [(exercise, what) for exercise, what in authoring.problems(chapters)]


def test_the_course_is_complete():
    assert reported() == []


def test_a_missing_hint_ladder_is_reported(declared):
    del declared["HINTS"]["shift_matrix"]
    assert [w for e, w in reported([CHAPTER1]) if e == "shift_matrix"] == [
        "no hint ladder: HINTS['shift_matrix'] in posenc_selfcheck/hints.py, three levels or more, from the idea "
        "to its key line"]


@pytest.mark.parametrize("levels, words", [
    (lambda ls: ls[:2], "only 2 hint levels"),
    (lambda ls: ls[:-1], "must end, and only end, with its key line"),
    (lambda ls: ls[:-1] + ["key line: `w = base ** 2`"], "is not a line of its solution"),
])
def test_a_ladder_too_short_or_without_its_solution_s_key_line_is_reported(declared, levels, words):
    hints = declared["HINTS"]
    hints["sinusoidal_table"] = levels(list(hints["sinusoidal_table"]))
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and words in found[0], found


def test_a_known_mistake_without_its_own_ladder_is_reported(declared):
    del declared["MISTAKE_HINTS"]["table_swapped"]
    assert [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"] == [
        "the known mistake table_swapped has no ladder of its own: MISTAKE_HINTS['table_swapped'] in "
        "posenc_selfcheck/hints.py (the idea, where to look, its key line)"]


def test_a_missing_conventions_line_is_reported(declared):
    del declared["CONVENTIONS"]["ch01"]["sinusoidal_table"]
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and found[0].startswith("no conventions line: CONVENTIONS['sinusoidal_table']"), found


def test_declarations_for_an_exercise_no_chapter_teaches_are_reported(declared):
    declared["CONVENTIONS"]["ch01"]["gone_exercise"] = "what it computed"
    declared["HINTS"]["gone_exercise"] = ["idea", "where", "key line: `x = 1`"]
    declared["MISTAKE_HINTS"]["gone_mistake"] = {"levels": [], "wrong": ""}
    found = reported()
    assert ("gone_exercise", "a conventions line in grader/checks/ch01.py but taught in no chapter source") in found
    assert ("gone_exercise", "a hint ladder in posenc_selfcheck/hints.py but taught in no chapter source") in found
    assert any("MISTAKE_HINTS['gone_mistake']" in w for _, w in found)


def test_a_missing_practitioner_implementation_is_reported(tmp_path, monkeypatch):
    chapter = tmp_path / "01_new.py"
    chapter.write_text("# %%\ndef brand_new_exercise(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n")
    assert any(w.startswith("no practitioner-style implementation in tests/submissions/practitioner/")
               for e, w in reported([chapter]) if e == "brand_new_exercise")
    practitioner = tmp_path / "practitioner"
    practitioner.mkdir()
    (practitioner / "ch01.py").write_text("def brand_new_exercise(x):\n    return x\n")
    real = authoring._defined
    monkeypatch.setattr(authoring, "_defined",
                        lambda folder: real(practitioner) if folder.name == "practitioner" else real(folder))
    assert not any("practitioner" in w for e, w in reported([chapter]) if e == "brand_new_exercise")
