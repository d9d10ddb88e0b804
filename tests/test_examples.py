"""The bundled examples that scripts/example.sh grades: what the README promises about them."""

import io

from grader.cli import grade
from tests.conftest import ROOT


def test_the_complete_example_written_independently_scores_full_marks_on_every_chapter(tmp_path):
    out = io.StringIO()
    results, notes = grade(ROOT / "examples" / "complete", json_path=tmp_path / "r.json", out=out)
    chapters = {r.check.exercise for r in results}
    assert len(chapters) >= 20  # every exercise of every chapter is defined
    wrong = [(r.check.key, r.feedback) for r in results if r.status not in ("passed", "skipped")]
    assert wrong == []
    assert notes == []


def test_the_typical_mistakes_example_names_each_mistake_and_survives_its_broken_cells():
    out = io.StringIO()
    results, notes = grade(ROOT / "examples" / "typical_mistakes", out=out)
    report = out.getvalue()
    assert "the exponent is i/d" in report
    assert "register_buffer" in report
    assert "past max_len compute the missing rows" in report
    assert "shift_matrix" in report and "not implemented yet" in report
    assert any("NameError" in n and "sinusoidal_tabel" in n for n in notes)  # the scratch cell, reported
    assert not any("timed out" in n for n in notes)  # the hour-long loop was not run
    assert 0 < sum(r.score for r in results) < sum(r.max_score for r in results)
