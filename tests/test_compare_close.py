"""posenc_selfcheck.compare.close, the one comparison of an answer with the reference's (self-check and grader),
against an independent element-by-element oracle: |got - expected| <= atol + rtol * |expected| where the reference is
finite, the very same value where it is not, NaN never agreeing. Bitwise-equal answers (the common case, which close
answers at once), answers moved a little from them, in another dtype, or unrelated are all drawn; and complex answers,
whose imaginary part counts (a cast to float64 would drop it)."""

import cmath
import math
import random

import pytest
import torch

from posenc_selfcheck.compare import close

SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0]


def oracle(got, expected, atol, rtol):
    if got.shape != expected.shape:
        return False
    # Python's complex numbers: |g - e| is the modulus; a real entry is a complex one with no imaginary part
    for g, e in zip(got.flatten().tolist(), expected.flatten().tolist()):
        g, e = complex(g), complex(e)
        agrees = (abs(g - e) <= atol + rtol * abs(e)) if cmath.isfinite(e) else g == e  # nan == nan is False
        if not agrees or cmath.isnan(g):
            return False
    return True


def _draw(rng, shape, dtype):
    values = [rng.choice(SPECIAL) if rng.random() < 0.1 else rng.uniform(-3, 3) for _ in range(math.prod(shape))]
    return torch.tensor(values, dtype=torch.float64).reshape(shape).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_close_agrees_with_the_oracle_on_equal_near_and_far_answers(dtype):
    rng = random.Random(f"close-{dtype}")
    outcomes = set()
    for case in range(400):
        shape = (rng.randint(1, 4), rng.randint(1, 5))
        expected = _draw(rng, shape, dtype)
        how = case % 4
        if how == 0:  # the same values, bitwise
            got = expected.clone()
        elif how == 1:  # one entry moved a little (within some tolerances, not others), or set to a special value
            got = expected.double().flatten()
            i = rng.randrange(got.numel())
            got[i] = rng.choice(SPECIAL) if rng.random() < 0.3 else got[i] * (1 + 1e-4) + rng.choice([1e-7, 1e-4])
            got = got.reshape(shape).to(dtype)
        elif how == 2:  # another dtype (a float64 answer to a float32 reference, ...)
            got = expected.to(torch.float64 if dtype != torch.float64 else torch.float32)
        else:
            got = _draw(rng, shape, dtype)
        atol, rtol = rng.choice([(1e-6, 1e-5), (1e-3, 1e-3), (0.0, 0.0)])
        want = oracle(got, expected, atol, rtol)
        assert close(got, expected, atol, rtol) == want, (got, expected, atol, rtol)
        outcomes.add((how, want))
    assert {(0, True), (0, False), (1, True), (1, False), (3, False)} <= outcomes  # every kind of case was met


def test_other_shapes_and_non_tensors_never_agree():
    x = torch.zeros(2, 3)
    assert not close(x.T, x, 1.0, 1.0) and not close(x.tolist(), x, 1.0, 1.0) and close(x, x, 0.0, 0.0)


def test_a_complex_answer_agrees_only_when_its_imaginary_part_does_too():
    """A complex answer to a real reference (a rotation left in complex form) agrees only where its imaginary part is
    within the tolerance of zero; complex against complex compares both parts. Drawn against the oracle."""
    rng = random.Random("close-complex")
    outcomes = set()
    for case in range(400):
        shape = (rng.randint(1, 4), rng.randint(1, 5))
        real = _draw(rng, shape, torch.float32)
        imaginary = torch.zeros(shape) if case % 3 == 0 else _draw(rng, shape, torch.float32) * rng.choice([1e-9, 1.0])
        answer = torch.complex(real, imaginary)  # complex64
        expected, got = (real, answer) if case % 2 else (answer, answer.clone() + 1j * rng.choice([0.0, 1e-9, 0.5]))
        atol, rtol = rng.choice([(1e-6, 1e-5), (1e-3, 1e-3), (0.0, 0.0)])
        want = oracle(got, expected, atol, rtol)
        assert close(got, expected, atol, rtol) == want, (got, expected, atol, rtol)
        outcomes.add((case % 2, want))
    assert outcomes == {(0, True), (0, False), (1, True), (1, False)}
    real = torch.tensor([1.0, 2.0])
    assert not close(torch.complex(real, torch.tensor([0.0, 0.5])), real, 1e-3, 1e-3)


def test_describe_shows_each_side_in_its_own_kind():
    """A complex answer to a real reference is told apart with the reference's value as a real number and the answer's
    as a complex one."""
    from posenc_selfcheck.compare import describe
    from posenc_selfcheck.messages import render

    real = torch.tensor([1.0, 2.0])
    text = render(describe(torch.complex(real, torch.tensor([0.0, 0.5])), real, 1e-3, 1e-3), "en")
    assert "at index (1,): expected 2, got 2+0.5j" in text, text
