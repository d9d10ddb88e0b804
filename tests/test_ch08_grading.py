"""Chapter 8 grading: each learner-style mistake under tests/submissions named in the feedback, the reference
passing its public self-checks, and the hidden 2-D RoPE candidates kept out of the student release."""

from functools import lru_cache

import pytest

import posenc_ref
from grader.checks import chapter_checks
from grader.checks.ch08 import ACCEPT, BAD, GOOD, PUBLIC_ACCEPT, PUBLIC_REJECT, REJECT
from grader.mistakes import MISTAKES
from posenc_selfcheck import SelfCheckFailed, check, probes_ch08
from tests.conftest import ROOT
from tests.conftest import grade as grade_submission
from tests.test_ch08_independent import EXPECTED as INDEPENDENT
from tests.test_ch08_mistakes_named import NAMED as HELD_OUT

CHECKS = chapter_checks("ch08")
SUBMISSIONS = ROOT / "tests" / "submissions"
# submission file -> the mistake it makes (tests/submissions/ch08_<file>.py)
NAMED = {
    "resize_class_token_with_grid": "resize2d_class_token_with_grid", "resize_column_major": "resize2d_column_major",
    "resize_align_corners": "resize2d_align_corners", "resize_size_w_h": "resize2d_size_w_h",
    "resize_no_antialias": "resize2d_no_antialias", "sincos_columns_first": "sincos2d_columns_first",
    "sincos_interleaved": "sincos2d_interleaved", "sincos_column_major": "sincos2d_column_major",
    **{f"axial_{k}": f"axial_{k}" for k in ("ladder_over_full_head", "rows_then_columns", "columns_first",
                                             "interleaved_tables")},
    **{f"mrope_{k}": f"mrope_{k}" for k in ("text_counts_tokens", "text_after_largest_id", "padding_counted",
                                             "height_width_swapped", "sections_reversed",
                                             "sections_over_full_head", "time_id_only")},
}


@lru_cache(maxsize=None)
def grade(path):
    return {v.check.key: v for v in grade_submission(path, CHECKS).verdicts}


def test_every_chapter_8_mistake_has_its_submission():
    """Here, in the held-out set written as learners write (tests/test_ch08_mistakes_named.py grades it), or in the
    independent sets (tests/test_ch08_independent.py)."""
    ch08 = {name for name, m in MISTAKES.items() if m.exercise in {c.exercise for c in CHECKS}}
    independent = {want["mistake"] for want in INDEPENDENT.values() if "mistake" in want}
    assert set(NAMED.values()) | set(HELD_OUT.values()) | independent == ch08
    assert {p.stem for p in SUBMISSIONS.glob("ch08_*.py")} == {f"ch08_{name}" for name in NAMED}


@pytest.mark.parametrize("submission", sorted(NAMED))
def test_a_learner_mistake_is_named(submission):
    mistake = MISTAKES[NAMED[submission]]
    verdicts = grade(SUBMISSIONS / f"ch08_{submission}.py")
    mine = [v for v in verdicts.values() if v.check.exercise == mistake.exercise]
    assert any(v.status == "failed" and v.mistake == mistake.message for v in mine)
    assert sum(v.score for v in mine) < sum(v.max_score for v in mine)


def test_the_reference_passes_its_public_self_checks_and_a_mistake_is_named(capsys):
    for exercise in dict.fromkeys(c.exercise for c in CHECKS):
        check(exercise, getattr(posenc_ref, exercise))
    assert capsys.readouterr().out.count("checks passed") == 6
    mistake = MISTAKES["mrope_text_after_largest_id"]
    with pytest.raises(SelfCheckFailed, match="starts it at s"):
        check(mistake.exercise, mistake.impl)


def test_hidden_candidates_stay_out_of_the_student_release():
    import grader.hidden_probes  # importing the hidden candidates adds nothing to the public registry

    public = set(probes_ch08.CANDIDATES_2D)
    assert all(fn.__module__ == probes_ch08.__name__ for fn in probes_ch08.CANDIDATES_2D.values())
    merged = grader.hidden_probes.catalog()["axial_property"].keywords["table"]
    assert set(merged) == public | set(ACCEPT) | set(REJECT)
    assert public == {GOOD, BAD, *PUBLIC_ACCEPT, *PUBLIC_REJECT}
    for check_ in CHECKS:
        if check_.public and check_.probe == "axial_property":
            assert set(check_.params["candidates"]) <= public, check_.name
    stored = (ROOT / "posenc_selfcheck" / "data" / "ch08.json").read_text()
    published = (ROOT / "posenc_selfcheck" / "probes_ch08.py").read_text()
    for name in {**ACCEPT, **REJECT}:
        assert name not in stored and name not in published, name


def _property_score(test):
    from tests.grading_support import judge_in_process

    verdicts = [judge_in_process({"check_axial_property": test}, c) for c in CHECKS
                if c.exercise == "check_axial_property"]
    return sum(v.score for v in verdicts), sum(v.max_score for v in verdicts)


def test_the_reference_test_earns_every_point_and_constant_or_layout_bound_tests_earn_none():
    import torch

    assert _property_score(posenc_ref.check_axial_property)[0] == _property_score(posenc_ref.check_axial_property)[1]
    assert _property_score(lambda rope_fn, head_dim: True)[0] == 0
    assert _property_score(lambda rope_fn, head_dim: False)[0] == 0

    def qwen_numbers_only(rope_fn, head_dim):  # too strict: Qwen2-VL's layout, not the property
        ids = torch.tensor([[r, c] for r in range(5) for c in range(5)])
        x = torch.randn(1, 1, len(ids), head_dim, generator=torch.Generator().manual_seed(0))
        want = posenc_ref.apply_rope(x, *posenc_ref.axial_rope_cos_sin(ids, head_dim))
        return bool(torch.allclose(rope_fn(x, ids), want, atol=1e-4))

    score, total = _property_score(qwen_numbers_only)
    assert score <= 0.2 * total
