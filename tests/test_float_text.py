"""The snapshot's comparison of feedback text across machines (tests/float_text.py): a last printed digit may move,
nothing else may."""

import pytest

from tests.float_text import same, same_structure


@pytest.mark.parametrize("a, b", [
    ("expected -0.0559564, got 0.997944", "expected -0.0559565, got 0.997943"),  # float32 on another CPU
    ("largest error 1.05 at index (1, 3, 55)", "largest error 1.04 at index (1, 3, 55)"),
    ("atol 1.0e-05", "atol 1.1e-05"),
    ("expected -0.00258644", "expected -0.00258651"),  # a small value: float32's noise, not its digit
])
def test_the_last_printed_digit_may_move(a, b):
    assert same(a, b) and same(b, a)


@pytest.mark.parametrize("a, b", [
    ("largest error 1.05", "largest error 1.07"),  # two units
    ("at index (1, 3, 55)", "at index (1, 3, 56)"),  # integers are exact
    ("640 of 768 entries differ", "641 of 768 entries differ"),
    ("expected 0.5", "expected 0.5 or 0.6"),
    ("sin and cos are swapped", "cos and sin are swapped"),
    ("atol 1.0e-05", "atol 1.0e-04"),
])
def test_anything_else_must_be_equal(a, b):
    assert not same(a, b)


def test_structures_compare_their_strings_so():
    assert same_structure({"c": ["failed", 0.0, "got 0.997944"]}, {"c": ["failed", 0.0, "got 0.997943"]})
    assert not same_structure({"c": ["failed", 0.0]}, {"c": ["passed", 0.0]})
    assert not same_structure({"c": 1}, {"d": 1})
