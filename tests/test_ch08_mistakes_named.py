"""Chapter 8's realistic mistakes are named as well as the other chapters' are: a held-out set, written as learners
write them (tests/submissions/ch08_heldout/: neither the reference nor a declared `wrong` line, other names, other
idioms), is graded by the self-check and by the grader. Every one loses points, and at least 90% of those whose
code answers (rather than raises) get the diagnosis of their very mistake from both: the self-check's ladder is
that mistake's, and the grader's first verdict that names a mistake names it."""

import importlib.util
from functools import lru_cache

import pytest

from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from grader.reference import answer as reference_answer
from grader.reference import mistakes as mistake_answers
from posenc_selfcheck.evaluate import same_answer
from posenc_selfcheck.messages import render
from posenc_selfcheck.runner import diagnosis, run_checks
from tests.conftest import ROOT, grade
from tests.grading_support import drawn

HELD_OUT = ROOT / "tests" / "submissions" / "ch08_heldout"
CHECKS = chapter_checks("ch08")
# file -> the mistake it makes (the chapter's own warnings first, then the slips learners make)
NAMED = {
    "resize_class_token_with_grid": "resize2d_class_token_with_grid",
    "resize_column_major": "resize2d_column_major",
    "resize_align_corners": "resize2d_align_corners",
    "resize_size_w_h": "resize2d_size_w_h",
    "resize_no_antialias": "resize2d_no_antialias",
    "resize_reshaped_to_channels": "resize2d_reshaped_to_channels",
    "resize_timm_call_copied": "resize2d_mode_antialias_fixed",
    "resize_reshaped_both_ways": "resize2d_reshaped_both_ways",
    "sincos_columns_first": "sincos2d_columns_first",
    "sincos_interleaved": "sincos2d_interleaved",
    "sincos_column_major": "sincos2d_column_major",
    "sincos_sin_cos_swapped": "sincos2d_sin_cos_swapped",
    "sincos_flattened_1d": "sincos2d_flattened_1d",
    "sincos_ladder_over_half": "sincos2d_ladder_over_half",
    "sincos_row_for_both_halves": "sincos2d_row_for_both_halves",
    "sincos_divides_by_height": "sincos2d_height_for_width",
    "axial_ladder_over_full_head": "axial_ladder_over_full_head",
    "axial_rows_then_columns": "axial_rows_then_columns",
    "axial_columns_first": "axial_columns_first",
    "axial_interleaved_tables": "axial_interleaved_tables",
    "axial_row_for_both_axes": "axial_row_for_both_axes",
    "axial_one_ladder_split": "axial_one_ladder_split",
    "axial_sin_cos_returned": "axial_sin_cos_returned",
    "ids_text_counts_tokens": "mrope_text_counts_tokens",
    "ids_text_after_largest_id": "mrope_text_after_largest_id",
    "ids_padding_counted": "mrope_padding_counted",
    "ids_height_width_swapped": "mrope_height_width_swapped",
    "ids_no_advance_after_image": "mrope_no_advance_after_image",
    "ids_advance_in_patches": "mrope_advance_in_patches",
    "ids_padding_one": "mrope_padding_one",
    "cos_sin_sections_reversed": "mrope_sections_reversed",
    "cos_sin_sections_over_full_head": "mrope_sections_over_full_head",
    "cos_sin_time_id_only": "mrope_time_id_only",
    "cos_sin_interleaved_sections": "mrope_interleaved_sections",
    "cos_sin_interleaved_tables": "mrope_interleaved_tables",
}
# realistic mistakes whose code raises on a public check (a reshape that cannot fit, the learner's own ValueError):
# the exception is their diagnosis; they must lose points all the same
RAISES = {"resize_one_prefix_row": "resize_position_table_2d", "ids_grids_per_row": "mrope_position_ids"}


def _function(stem):
    """The one exercise a held-out file defines: (exercise, function). Learner code, trusted here as test data."""
    spec = importlib.util.spec_from_file_location(f"ch08_heldout_{stem}", HELD_OUT / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    exercises = {c.exercise for c in CHECKS}
    (name,) = [n for n in vars(module) if n in exercises]
    return name, getattr(module, name)


@lru_cache(maxsize=None)
def _verdicts(stem):
    exercise, _ = _function(stem)
    return [v for v in grade(HELD_OUT / f"{stem}.py", CHECKS).verdicts if v.check.exercise == exercise]


def named_by_selfcheck(stem):
    """The mistake whose ladder the self-check shows (its diagnosis), or None."""
    exercise, fn = _function(stem)
    return diagnosis(run_checks(exercise, fn))


def named_by_grader(stem):
    """The mistake the grader's first verdict naming one names (in the order of the checks), or None."""
    said = next((v.mistake for v in _verdicts(stem) if v.status == "failed" and v.mistake), None)
    exercise, _ = _function(stem)
    return next((name for name, m in MISTAKES.items() if m.exercise == exercise and m.message == said), None)


def test_the_held_out_set_is_the_files_and_every_expected_mistake_is_chapter_8s():
    assert {p.stem for p in HELD_OUT.glob("*.py")} == set(NAMED) | set(RAISES)
    assert len(NAMED) >= 12 and len(set(NAMED.values())) == len(NAMED)
    for stem, name in NAMED.items():
        assert MISTAKES[name].exercise == _function(stem)[0], stem


@pytest.mark.parametrize("chk", [c for c in CHECKS if c.mistakes and not c.cuda], ids=lambda c: c.key)
def test_a_check_names_only_mistakes_its_input_tells_apart(chk):
    """A mistake whose answer is the reference's would be named on right code (evaluate refuses it, but then the
    check names nothing for it). A check's inputs drawn for each student (a main check) may hit that now and then.
    Two mistakes with one wrong answer, every chapter's: tests/test_mistakes_told_apart.py."""
    chk = drawn(chk)
    spec, expected = chk.spec(), reference_answer(chk)
    results = [result for _, result in mistake_answers(chk)]
    wrong = [not same_answer(spec, result, expected) for result in results]
    for name, result, is_wrong in zip(chk.mistakes, results, wrong):
        assert "error" not in result, (name, result.get("error"))
        assert is_wrong or chk.main, f"{name} gives the reference's answer on {chk.key}"


@pytest.mark.parametrize("stem", sorted(NAMED) + sorted(RAISES))
def test_every_held_out_mistake_loses_points(stem):
    verdicts = _verdicts(stem)
    assert verdicts, stem
    assert sum(v.score for v in verdicts) < sum(v.max_score for v in verdicts), stem
    if stem in RAISES:
        assert any(v.status == "failed" and "raised" in render(v.feedback, "en") for v in verdicts), stem


def test_at_least_90_percent_are_named_as_their_mistake_by_the_self_check_and_the_grader():
    rows = {stem: (named_by_selfcheck(stem), named_by_grader(stem)) for stem in NAMED}
    both = [stem for stem, (selfcheck, grader) in rows.items() if selfcheck == grader == NAMED[stem]]
    missed = {stem: rows[stem] for stem in NAMED if stem not in both}
    print(f"\nchapter 8, held-out mistakes named by both: {len(both)} of {len(NAMED)} ({len(both) / len(NAMED):.0%}); "
          f"self-check {sum(s == NAMED[k] for k, (s, _) in rows.items())}, "
          f"grader {sum(g == NAMED[k] for k, (_, g) in rows.items())}; missed (self-check, grader): {missed}")
    assert len(both) >= 0.9 * len(NAMED), missed
