"""Carry the hidden checks' inputs into feedback that students see before the due date: remember every
input, and report them all in an exception (a public check's feedback is visible at once). Stopped by
running the public checks' probes before the hidden ones in each child."""
_SEEN = []


def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    _SEEN.append(f"INPUT<{seq_len},{d_model},{base}>")
    raise ValueError("SEEN " + " ".join(_SEEN))
