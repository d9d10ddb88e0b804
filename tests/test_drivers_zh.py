# ruff: noqa: E501  (the recorded English lines are as long as the drivers print them)
"""Chapters 7's and 8's experiment drivers (posenc_selfcheck/lab, posenc_selfcheck/gridlab) say everything through
messages (issue 27): in Chinese, their printed lines and figure strings carry no English prose (the definition of
tests/test_messages.py), and in English they print what they printed before (the lines below, recorded from the
code before it became messages). Run without training: the stored runs (docs/chapter7/, docs/chapter8/) and the
"nothing trained yet" paths."""

from __future__ import annotations

import types

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from posenc_selfcheck.gridlab import experiments as grid  # noqa: E402
from posenc_selfcheck.lab import experiments as lab  # noqa: E402
from posenc_selfcheck.lab import plots  # noqa: E402
from tests.test_messages import english_prose  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Glyph")  # this machine may lack a CJK font: the text is what counts

ENGLISH = """\
the full run's stored results and figures (docs/chapter7/, measured in 456 s by `python -m posenc_selfcheck.lab --out docs/chapter7`), shown without training; unset POSENC_CH7_RUN to train here
stored: 7 models trained at L=64 (NoPE, sinusoidal, learned, relative, T5, ALiBi, RoPE) in 317 s
mean loss (nats per byte) at each evaluation length
                             L=64    L=128    L=256    L=512
  learned, table resized    1.602    1.841    2.250    2.595
RoPE, scale factor 4: as trained
after 200 steps at L=128
     ALiBi: mean distance looked back per head (last layer), at L=64:   2.9,   7.9,  11.6,  13.2; at L=512:   3.2,  12.8,  50.8,  95.0
    causal, windows start with BOS: R² embeddings, then after each layer: -0.02,  0.57,  0.58; mean error in positions (last layer) 9.3
no causal mask, windows start with BOS: R² embeddings, then after each layer:  0.01, -0.08, -0.27; mean error in positions (last layer) 17.3
reduced run (the same code on a smaller model in seconds; its numbers mean nothing); for the full one: RUN = 'full' in the cell, or POSENC_CH7_RUN=full in the environment
reduced run: d_model=32, 2 layers, 4 heads, trained on 40 batches of 16 x 32 bytes; torch threads: 1
text: 466,273 bytes of Python's reference manual (419,645 for training, 46,628 held out), sha256 71f2ff5d99bd
no trained models yet: run train_schemes() first
RoPE was not trained: nothing to extend
NoPE was not trained: nothing to probe
the full run's stored results and figure (docs/chapter8/, measured by `python -m posenc_selfcheck.gridlab --out docs/chapter8`), shown without training; unset POSENC_CH8_RUN to train here
stored: 4 encoders trained at 8x8 (no positions, learned, resized, 2-D sinusoidal, axial RoPE) in 247 s
accuracy at G x G                      4       6       8      12      16
axial RoPE, positions scaled       0.812   1.000   1.000   1.000   0.920
always the most frequent class     0.141   0.174   0.191   0.210   0.220
best without positions             0.203   0.201   0.207   0.217   0.224
reduced run (the same code on a smaller model in seconds; its numbers mean nothing); for the full one: RUN = 'full' in the cell, or POSENC_CH8_RUN=full in the environment
axial RoPE: left out (needs axial_rope_cos_sin, apply_rope)
"""
FIGURES_ENGLISH = """\
trained at L = 64, evaluated at 1-8 x L
held-out loss (nats per byte)
learned, table resized
where each scheme breaks
position in a window of 512 (means over 16 positions)
RoPE, scale factor 4: after 200 steps at L = 128
R² of a linear probe for the position
after layer 1
NoPE, no causal mask, windows start with BOS
predicted position (mean, last layer)
trained at 8x8: where is the marker?
accuracy (9 directions)
best without positions (+ the marker's own patch)
attention (square root of the weight) in the last layer, a window of 4 = 2 x L; dotted: L = 2
ALiBi
query position
head 1
key position
"""


def _texts(figure):
    """Every string a figure draws: titles, axis labels, tick labels, texts and legends."""
    texts = [figure._suptitle.get_text()] if figure._suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel(), *(t.get_text() for t in ax.texts),
                  *(t.get_text() for t in ax.get_xticklabels())]
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return [line for text in texts for line in text.splitlines() if line]


def _run_drivers():
    """What the drivers draw, without training: the stored runs' steps, the steps with nothing trained, and one
    attention-map figure of made-up weights."""
    figures = []
    stored = lab.Lab(None, types.SimpleNamespace(), lab.STORED)
    for step in ("train_schemes", "extrapolation", "rope_scaling", "attention_maps", "position_probe"):
        figures.append(getattr(stored, step)())
    empty = lab.Lab(None, types.SimpleNamespace(), lab.REDUCED)
    for step in ("extrapolation", "rope_scaling", "attention_maps", "position_probe"):
        getattr(empty, step)()
    grid_stored = grid.GridLab(types.SimpleNamespace(), grid.STORED)
    grid_stored.train_schemes()
    figures.append(grid_stored.resolution())
    grid_empty = grid.GridLab(types.SimpleNamespace(), grid.REDUCED)
    grid_empty.available()
    grid_empty.resolution()
    weights = torch.full((2, 4, 4), 0.25)  # (H, T, T)
    figures.append(plots.attention_maps({"ALiBi": [weights]}, train_len=2))
    return [t for f in figures if hasattr(f, "axes") for t in _texts(f)]


def test_the_english_output_is_what_it_was(capsys, monkeypatch):
    monkeypatch.setenv("POSENC_LANG", "en")
    texts = _run_drivers()
    printed = capsys.readouterr().out.splitlines()
    for line in ENGLISH.splitlines():
        assert line in printed, line
    for text in FIGURES_ENGLISH.splitlines():
        assert text in texts, text


def test_the_chinese_output_carries_no_english_prose(capsys, monkeypatch):
    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    texts = _run_drivers()
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) >= 30 and len(texts) >= 60
    prose = [f"{english_prose(line)} | {line}" for line in printed + texts if english_prose(line)]
    assert prose == []
