"""Right values in float64 where float32 is expected: every check that matches the reference fails on the
dtype; the checks that look at the mathematics alone may pass."""

_honest = shift_matrix  # noqa: F821  (defined by the honest solution above)


def shift_matrix(k, d_model, base=10000.0):
    return _honest(k, d_model, base).double()
