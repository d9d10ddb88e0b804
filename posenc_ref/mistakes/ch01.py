"""Chapter 1 mistakes: the sinusoidal table built the ways learners (and tutorials) get it wrong."""

from __future__ import annotations

import torch

from .. import ch01_sinusoidal as ref
from .mistake import Mistake


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


def _shift_backwards(k, d_model, base=10000.0):
    return ref.shift_matrix(k, d_model, base).T


_TEXT = {
    "swapped": "sin and cos are swapped: even columns 2i take sin(p·w_i), odd columns 2i+1 take cos(p·w_i)",
    "i_over_d": "the exponent is i/d; it should be 2i/d (w_i = base^(-2i/d), with 2i the even dimension index)",
    "concatenated": "sin and cos are concatenated (all sines, then all cosines); they should be interleaved: "
                    "pe[:, 0::2] = sin, pe[:, 1::2] = cos",
}

MISTAKES = {}
for _kind, _text in _TEXT.items():
    MISTAKES[f"table_{_kind}"] = Mistake("sinusoidal_table", _text, _table(_kind))
    MISTAKES[f"module_{_kind}"] = Mistake("SinusoidalPositionalEncoding", "the table inside the module: " + _text,
                                          _module(_kind))
MISTAKES["shift_backwards"] = Mistake(
    "shift_matrix",
    "your matrix shifts by -k: with (sin, cos) pairs the block is [[cos kw, sin kw], [-sin kw, cos kw]] "
    "(the textbook rotation [[cos, -sin], [sin, cos]] turns the other way)",
    _shift_backwards,
)
