"""Chapter 1 mistakes: the sinusoidal table built the ways learners (and tutorials) get it wrong.

Only the implementations; each mistake's message is declared in exercises.py beside this file. The mistakes here are
the ones whose behaviour reaches further than the statements their declaration rewrites; the others are derived
(grader/mistakes.py).
"""

from __future__ import annotations

import torch

from posenc_ref import ch01_sinusoidal as ref


def _table(kind):
    def table(seq_len, d_model, base=10000.0, device=None):
        half = torch.arange(0, d_model, 2, dtype=torch.float32, device=device)  # (d/2,)
        # the exponent i/d (i = 0 .. d/2-1) instead of 2i/d
        exponent = half / 2 / d_model if kind == "i_over_d" else half / d_model
        inv_freq = 1.0 / (base ** exponent)  # (d/2,)
        angles = torch.outer(torch.arange(seq_len, dtype=torch.float32, device=device), inv_freq)  # (L, d/2)
        if kind == "concatenated":
            return torch.cat([angles.sin(), angles.cos()], dim=-1)  # (L, d)
        pe = torch.empty(seq_len, d_model, device=device)
        first, second = (angles.cos(), angles.sin()) if kind == "swapped" else (angles.sin(), angles.cos())
        pe[:, 0::2], pe[:, 1::2] = first, second
        return pe

    return table


def _module(kind):
    table = _table(kind)

    class Wrong(ref.SinusoidalPositionalEncoding):
        def forward(self, x, offset=0):
            return x + table(offset + x.shape[1], self.d_model, self.base)[offset:].to(x.dtype)

    return Wrong


# The declarations rewrite only the buffer the module registers; these make the table wrong in every row the
# module adds, the rows it computes past max_len included.
IMPLEMENTATIONS = {
    # sin and cos swapped: cos in the even columns, sin in the odd ones
    "module_swapped": _module("swapped"),
    # the exponent i/d instead of 2i/d
    "module_i_over_d": _module("i_over_d"),
    # all sines, then all cosines, instead of interleaved
    "module_concatenated": _module("concatenated"),
}
