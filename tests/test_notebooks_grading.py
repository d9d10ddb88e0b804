"""Every chapter: its solution notebook scores full marks and its untouched student notebook zero.

One grading per notebook, all of the chapter's checks, through the same code path as
`python -m grader grade`.
"""

import pytest
import torch

from grader import course
from grader.checks import chapter_checks
from tests.conftest import ROOT, grade

CHAPTERS = [(c.stem, c.key) for c in course.chapters()]


def _grade(path, chapter):
    result = grade(path, chapter_checks(chapter))
    return result.verdicts, [str(n) for n in result.notes]


@pytest.mark.parametrize("stem,chapter", CHAPTERS, ids=[c for _, c in CHAPTERS])
def test_solution_notebook_scores_full_marks(stem, chapter):
    results, notes = _grade(ROOT / "solutions" / f"{stem}.ipynb", chapter)
    assert results, f"no checks for {chapter}"
    wrong = [(r.check.key, r.status, str(r.feedback)) for r in results if r.status not in ("passed", "skipped")]
    assert wrong == []
    skipped = {r.check.key for r in results if r.status == "skipped"}
    assert skipped == ({r.check.key for r in results if r.check.cuda} if not torch.cuda.is_available() else set())
    assert notes == []  # every definition in the solution notebook executed cleanly


@pytest.mark.parametrize("stem,chapter", CHAPTERS, ids=[c for _, c in CHAPTERS])
def test_untouched_student_notebook_scores_zero_without_crashing(stem, chapter):
    results, notes = _grade(ROOT / "notebooks" / f"{stem}.ipynb", chapter)
    assert sum(r.score for r in results) == 0
    assert {r.status for r in results if not r.check.cuda} == {"not implemented"}
    assert not [n for n in notes if "timed out" in n or "killed" in n or "ended early" in n]
