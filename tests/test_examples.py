"""The bundled examples that scripts/example.sh grades: what the README promises about them."""

from grader.report import text_report
from tests.conftest import ROOT, grade
from tests.grading_support import defined


def test_the_complete_example_written_independently_scores_full_marks_on_every_chapter():
    """Full marks on every exercise it defines: chapters 0-8's all; an exercise added later may lack its example
    (docs/authoring.md: three files make an exercise)."""
    result = grade(ROOT / "examples" / "complete")
    results, notes = result.verdicts, [str(n) for n in result.notes]
    written = defined(ROOT / "examples" / "complete")
    assert len({r.check.exercise for r in results} & written) >= 33  # chapters 0-8's every exercise
    wrong = [(r.check.key, str(r.feedback)) for r in results
             if r.status not in ("passed", "skipped") and r.check.exercise in written]
    assert wrong == []
    assert notes == []


def test_the_typical_mistakes_example_names_each_mistake_and_survives_its_broken_cells():
    result = grade(ROOT / "examples" / "typical_mistakes")
    results, notes, report = result.verdicts, [str(n) for n in result.notes], text_report(result)
    assert "the exponent is i/d" in report
    assert "register_buffer" in report
    assert "past max_len compute the missing rows" in report
    assert "shift_matrix" in report and "not implemented yet" in report
    assert any("NameError" in n and "sinusoidal_tabel" in n for n in notes)  # the scratch cell, reported
    assert not any("timed out" in n for n in notes)  # the hour-long loop was not run
    # its one answer that happens to be right (one row, position 0, where the exponent does not matter) does not
    # count: that case's twins ask for the main check too, which the exponent gets wrong, and the report says why
    assert sum(r.score for r in results) == 0
    single = next(r for r in results if r.check.key == "sinusoidal_table.single_position_seq_len_1")
    assert "drawn for you" in str(single.feedback) and "the exponent is i/d" in str(single.feedback)


def test_the_report_lists_chapters_in_order_and_says_cuda_checks_were_skipped_once_per_chapter():
    import torch

    from grader.checks import CHAPTERS
    from grader.report import chapter_title

    report = text_report(grade(ROOT / "examples" / "complete"))
    positions = [report.index(chapter_title(chapter)) for chapter in CHAPTERS]
    assert positions == sorted(positions)
    with_cuda = [chapter for chapter, checks in CHAPTERS.items() if any(c.cuda for c in checks)]
    skipped_lines = [line for line in report.splitlines() if "CUDA check(s) skipped" in line]
    assert len(skipped_lines) == (0 if torch.cuda.is_available() else len(with_cuda))
