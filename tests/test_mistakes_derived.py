"""A known mistake is its declared statements rewritten in the solution (grader/mistakes.py); an implementation
written by hand in a chapter's course/NN_name/mistakes.py is kept only where it answers some check otherwise than
that derived form (it reaches further than its statements, or rounds another way). One written by hand that answers
every check as its derived form does is a second copy of the same mistake: delete it."""

import pytest
import torch

import posenc_ref
from grader import hidden_probes, reference
from grader.checks import all_checks, mistakes
from grader.mistakes import IMPLEMENTATIONS, MISTAKES, derive
from posenc_selfcheck import probes
from tests.grading_support import drawn

BY_HAND = sorted(IMPLEMENTATIONS)


def _answer(impl, exercise, check):
    torch.manual_seed(0)
    try:
        return probes.run({**reference.namespace(), exercise: impl}, check.probe, check.params, check.exercise,
                          hidden_probes.catalog())
    except Exception as exc:  # a mistake may raise where the other form does not
        return repr(exc)


def _same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.equal(a.nan_to_num(), b.nan_to_num()))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_the_comparison_tells_a_mistake_from_the_solution():
    check = next(c for c in all_checks() if c.key == "rope_wavelengths.matches_reference_head_dim_8_base_100")
    solution = _answer(posenc_ref.rope_wavelengths, "rope_wavelengths", check)
    assert _same(solution, _answer(posenc_ref.rope_wavelengths, "rope_wavelengths", check))
    assert not _same(solution, _answer(MISTAKES["wavelength_per_radian"].impl, "rope_wavelengths", check))


def test_every_declared_mistake_has_an_implementation_and_most_are_derived():
    assert set(MISTAKES) == set(mistakes())
    assert set(BY_HAND) <= set(MISTAKES)
    assert all(MISTAKES[name].by_hand == (name in IMPLEMENTATIONS) for name in MISTAKES)
    assert sum(not m.by_hand for m in MISTAKES.values()) > len(BY_HAND)


@pytest.mark.parametrize("name", BY_HAND)
def test_a_mistake_written_by_hand_answers_some_check_otherwise_than_its_derived_form(name):
    declared = mistakes()[name]
    derived = derive(name, declared)
    checks = [drawn(c) for c in all_checks() if name in c.mistakes and not c.cuda]
    assert checks, f"{name}: named by no check"
    differ = [c.key for c in checks if not _same(_answer(IMPLEMENTATIONS[name], declared.exercise, c),
                                                 _answer(derived, declared.exercise, c))]
    assert differ, f"{name}: answers every check as its derived form does: delete it from its mistakes.py"
