"""`python -m grader build --check` reports each piece an exercise lacks (grader/authoring.py): the rules the
other tests enforce (hints: tests/test_hints.py; the conventions table: tests/test_conventions.py) are proven by
the build too, so an author hears of a missing piece before the suite runs."""

import copy

import pytest

import grader.checks
import grader.spec
from grader import authoring
from tests.conftest import ROOT
from tests.grading_support import PRACTITIONER, defined

CHAPTER1 = ROOT / "course" / "01_sinusoidal" / "chapter.py"


@pytest.fixture
def declared(monkeypatch):
    """Copies of the declarations authoring.py reads, to edit: the real ones (and their order, which the
    generated tables follow) stay untouched."""
    tables = {name: copy.deepcopy(getattr(grader.checks, name)) for name in ("HINTS", "MISTAKES", "CONVENTIONS")}
    for name, table in tables.items():
        monkeypatch.setattr(grader.checks, name, table)
    return tables


def reported(chapters=None):
    return [(exercise, what) for exercise, what in authoring.problems(chapters)]


def test_the_course_is_complete():
    assert reported() == []


def test_a_missing_hint_ladder_is_reported(declared):
    del declared["HINTS"]["ch01"]["shift_matrix"]
    assert [w for e, w in reported([CHAPTER1]) if e == "shift_matrix"] == [
        "no hint ladder: HINTS['shift_matrix'] in course/01_sinusoidal/exercises.py, 3 levels or more, from the idea "
        "to its key line"]


@pytest.mark.parametrize("levels, words", [
    (lambda ls: ls[:2], "2 hint levels"),
    (lambda ls: ls[:-1], "must end, and only end, with its key line"),
    (lambda ls: ls[:-1] + ["key line: `w = base ** 2`"], "is not one run of statements of its solution"),
    (lambda ls: ["the idea, with `code`"] + ls[1:], "level 1 of HINTS['sinusoidal_table'] in "
                                                    "course/01_sinusoidal/exercises.py holds code"),
])
def test_a_ladder_too_short_or_without_its_solution_s_key_line_is_reported(declared, levels, words):
    hints = declared["HINTS"]["ch01"]
    hints["sinusoidal_table"] = levels(list(hints["sinusoidal_table"]))
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and words in found[0], found


PE_LINE = "pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)"


@pytest.mark.parametrize("ladder, words", [
    # pasted into the stub, `pe` is a name the learner never heard of
    (["the idea", "where to look", f"key line: `{PE_LINE}`"], "its key line uses `pe`, which exists only in the "
                                                              "solution"),
    # the statement holds only under a condition no level writes
    (["the idea", "where to look", "key line: `raise ValueError(f'seq_len must be positive, got seq_len={seq_len}')`"],
     "its key line holds only when `seq_len <= 0`"),
    # level 1 is the idea, not a line of the solution, backticks or not
    (["write angles = torch.outer(positions, inv_freq) first", "where", f"key line: `{PE_LINE}`"],
     "writes a line of the solution"),
])
def test_a_key_line_that_would_not_run_where_a_learner_pastes_it_is_reported(declared, ladder, words):
    declared["HINTS"]["ch01"]["sinusoidal_table"] = ladder
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and words in found[0], found


def test_the_same_ladder_naming_its_names_passes(declared):
    declared["HINTS"]["ch01"]["sinusoidal_table"] = ["the idea", "write into the table `pe` the sines of the "
                                                                  "angles", f"key line: `{PE_LINE}`"]
    assert [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"] == []


@pytest.mark.parametrize("change, words", [
    ({"hints": ()}, "0 hint levels in MISTAKES['table_swapped'] in course/01_sinusoidal/exercises.py: 3"),
    ({"hints": ("idea", "where", "more", "key line: `x = 1`")}, "4 hint levels"),
    ({"wrong": "pe[:, 0::2] = = 1"}, "the `wrong` form of MISTAKES['table_swapped'] in "
                                     "course/01_sinusoidal/exercises.py is not Python"),
    ({"also": {"angles = 1": "angles = 2"}}, "`angles = 1` in `also` of MISTAKES['table_swapped']"),
])
def test_a_known_mistake_s_ladder_and_statements_are_proven(declared, change, words):
    import dataclasses

    table = declared["MISTAKES"]["ch01"]
    table["table_swapped"] = dataclasses.replace(table["table_swapped"], **change)
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and words in found[0], found


def test_a_known_mistake_no_check_names_is_reported(declared):
    import dataclasses

    table = declared["MISTAKES"]["ch01"]
    table["table_unnamed"] = dataclasses.replace(table["table_swapped"])
    assert "the known mistake table_unnamed is named by none of its checks" in [
        w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]


def test_a_missing_conventions_line_is_reported(declared):
    del declared["CONVENTIONS"]["ch01"]["sinusoidal_table"]
    found = [w for e, w in reported([CHAPTER1]) if e == "sinusoidal_table"]
    assert len(found) == 1 and found[0].startswith("no conventions line: CONVENTIONS['sinusoidal_table']"), found


def test_declarations_for_an_exercise_no_chapter_teaches_are_reported(declared):
    declared["CONVENTIONS"]["ch01"]["gone_exercise"] = "what it computed"
    declared["HINTS"]["ch01"]["gone_exercise"] = ["idea", "where", "key line: `x = 1`"]
    declared["MISTAKES"]["ch01"]["gone_mistake"] = grader.spec.Mistake("gone_exercise", "m", (), "")
    found = reported()
    assert ("gone_exercise", "a conventions line in course/01_sinusoidal/exercises.py but taught in no chapter "
                             "source") in found
    assert ("gone_exercise", "a hint ladder in course/01_sinusoidal/exercises.py but taught in no chapter source") \
        in found
    assert ("gone_exercise", "the known mistake gone_mistake in course/01_sinusoidal/exercises.py but its exercise "
                             "is taught in no chapter source") in found


def test_an_exercise_needs_no_example_and_no_practitioner_file(tmp_path):
    """Three files make an exercise (the chapter, its declaration, its catalog): an independent example and a
    practitioner-style implementation are welcome, never required (tests/test_practitioner_variants.py grades them
    where they are)."""
    chapter = tmp_path / "01_new" / "chapter.py"
    chapter.parent.mkdir()
    chapter.write_text("# %%\ndef brand_new_exercise(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n")
    found = [w for e, w in reported([chapter]) if e == "brand_new_exercise"]
    assert any(w.startswith("no checks in") for w in found)  # the declaration is read
    assert not [w for w in found if "example" in w or "practitioner" in w], found


def test_an_example_marked_practitioner_style_is_the_practitioner_implementation(tmp_path):
    """An exercise whose independent example is written as libraries write it needs no second file."""
    folder = tmp_path / "complete"
    folder.mkdir()
    (folder / "ch01.py").write_text("import torch\n\n\n# practitioner-style: as transformers writes it\n"
                                    "def marked(x):\n    return x\n\n\n# a learner's\ndef plain(x):\n"
                                    "    return x\n")
    assert defined(folder) == {"marked", "plain"}
    assert defined(folder, marked=PRACTITIONER) == {"marked"}
