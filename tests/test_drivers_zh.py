# ruff: noqa: E501  (the recorded English lines are as long as the drivers print them)
"""Chapters 7's and 8's experiment drivers (posenc_selfcheck/lab, posenc_selfcheck/gridlab) say everything through
messages (issue 27): in Chinese, their printed lines and figure strings carry no English prose (the definition of
tests/test_messages.py), and in English they print what they printed before (the lines below, recorded from the
code before it became messages). Run without training: the stored runs (docs/chapter7/, docs/chapter8/), the
"nothing trained yet" paths and chapter 7's comparison table. The same for what hands exercises from chapter to
chapter (posenc_selfcheck/mine.py): the export cell's lines and the loader's listing, every path of both."""

from __future__ import annotations

import io
import re
import types

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from posenc_selfcheck import messages, mine  # noqa: E402
from posenc_selfcheck.columns import width  # noqa: E402
from posenc_selfcheck.gridlab import experiments as grid  # noqa: E402
from posenc_selfcheck.lab import experiments as lab  # noqa: E402
from posenc_selfcheck.lab import plots, train  # noqa: E402
from posenc_selfcheck.lab.labels import label  # noqa: E402
from tests.test_ch07 import CELLS  # noqa: E402  (chapter 3's cells: a right alibi_bias and what it uses)
from tests.test_messages import VERBATIM, english_prose  # noqa: E402

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
| scheme | acts on | parameters (here) | loss at L=64 | loss at the longest length | step time vs NoPE | cost (chapter 6) | used by |
| relative | logits | 132 | 1.48 | 1.77 | 1.24 | a float (H, L, L) attn_mask: 1.4-1.7x slower attention on CPU, no flash kernel on GPU (ch. 6) | Shaw et al. 2018 (with key and value vectors); Swin's per-head table |
| RoPE + YaRN | queries and keys | 0 | 1.79 | 1.83 (1.38 fine-tuned) | — | as RoPE | YaRN (Peng et al. 2023); DeepSeek-V2, Qwen2's long-context setting |
| learned 2-D, resized | input, once | H·W x d | — | — | — | one addition; a bicubic resize per new resolution | ViT, DeiT (timm's resample_abs_pos_embed at a new image size; ch. 8) |
Longest length: 512 for the schemes trained here; 256 for the scaled RoPE rows (the scale factor's target). Losses in nats per byte on held-out text.
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
    for step in ("train_schemes", "extrapolation", "rope_scaling", "attention_maps", "position_probe", "comparison"):
        figures.append(getattr(stored, step)())
    print(lab.markdown_table(lab.comparison_rows({})))  # nothing measured: every cell in words, none a number
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


def test_chinese_figures_use_a_cjk_font_or_say_in_one_line_which_package_provides_one(monkeypatch, capsys):
    from matplotlib import font_manager, rcParams

    from posenc_selfcheck import fonts

    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])  # none installed: the default font stays
    before = list(rcParams["font.sans-serif"])
    assert fonts.use_cjk_font() is None and rcParams["font.sans-serif"] == before
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "`sudo apt-get install fonts-noto-cjk`" in said and not english_prose(said)
    monkeypatch.setattr(font_manager.fontManager, "ttflist", [types.SimpleNamespace(name="Noto Sans CJK SC")])
    with matplotlib.rc_context():
        assert fonts.use_cjk_font() == "Noto Sans CJK SC" and rcParams["font.sans-serif"][0] == "Noto Sans CJK SC"
    assert capsys.readouterr().out == ""


# ---- tables line up in Chinese: padded by display width (posenc_selfcheck/columns.py) ----------------------
CELLS_AT_END = re.compile(r"(?:[ \t]+(?:L=)?-?\d+(?:\.\d+)?)+$")  # a table row's numbers (its header's lengths)


def _cell_ends(line):
    """The screen columns where each number at the end of a table row ends (None: not a table row)."""
    tail = CELLS_AT_END.search(line)
    if tail is None:
        return None
    return tuple(width(line[: tail.start() + m.end()]) for m in re.finditer(r"\S+", line[tail.start():]))


def test_a_tables_columns_line_up_with_chinese_and_english_names(capsys, monkeypatch):
    """The loss and accuracy tables (rows named 正弦, 相对偏置, ALiBi, RoPE...): every row's numbers end at the same
    screen column as its header's (a wide character takes two); the rows that name a setting or a scheme before
    their colon put the colon at one column."""
    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    _run_drivers()
    printed = capsys.readouterr().out.splitlines()
    tables, run = [], []
    for line in printed + [""]:  # a table: consecutive rows with as many numbers at their end
        ends = _cell_ends(line)
        if run and (ends is None or len(ends) != len(run[0][1])):
            tables.append(run)
            run = []
        if ends is not None:
            run.append((line, ends))
    tables = [t for t in tables if len(t) >= 3]
    assert len(tables) >= 3
    assert all(any(width(line) > len(line) for line, _ in t) for t in tables)  # Chinese names beside English ones
    for table in tables:
        assert {ends for _, ends in table} == {table[0][1]}, "\n".join(line for line, _ in table)
    for mark in ("R²（", "每个头平均回看"):  # the probe's settings, the attention distances' schemes
        rows = [line for line in printed if mark in line]
        assert len(rows) >= 3 and len({width(line[: line.index("：")]) for line in rows}) == 1, rows
    bars = io.StringIO()  # the training progress bars, one per scheme
    for name in ("sinusoidal", "ALiBi", "relative", "RoPE"):
        train.Progress(f"{label(name)} (L=64)", 10, stream=bars).update(10, 2.0)
    rows = bars.getvalue().replace("\r", "").splitlines()
    assert len({width(line[: line.index("[")]) for line in rows}) == 1 and width(rows[0]) > len(rows[0]), rows


# ---- the export cell and the loader (posenc_selfcheck/mine.py) -----------------------------------------------
EXPORT_ENGLISH = """\
chapter 3: wrote posenc_mine/ch03.py
  · RelativePositionBias: not defined in this notebook
  ✓ alibi_bias: passed
  ✗ sinusoidal_table             chapter 1 (chapter 1's notebook): `sinusoidal_table` not in your package yet: finish it, then run the export cell at the end of the notebook
  ✓ alibi_bias                   yours, posenc_mine/ch03.py
  · alibi_bias: failed: 8 heads, q_len = k_len = 5: the sign: ALiBi *subtracts* m·|j − i|, so distant keys get lower logits (output: 160 of 200 entries differ beyond tolerance (atol 1.0e-05, rtol 1.0e-04); largest error 4 at index (0, 0, 0, 4): expected -2, got 2)
  ✗ resize_position_table        chapter 2 (chapter 2's notebook): `resize_position_table` posenc_mine/ch02.py does not import (RuntimeError: my own words, left as they are): run the export cell at the end of the notebook again
  ✗ alibi_bias                   chapter 3 (chapter 3's notebook): `alibi_bias` yours does not pass its self-check (failed: 8 heads, q_len = k_len = 5: the sign: ALiBi *subtracts* m·|j − i|, so distant keys get lower logits (output: 160 of 200 entries differ beyond tolerance (atol 1.0e-05, rtol 1.0e-04); largest error 4 at index (0, 0, 0, 4): expected -2, got 2)): fix it, then run the export cell again
  ✓ sinusoidal_table             the course's reference (not in your package yet)
  ✓ resize_position_table        the course's reference (posenc_mine/ch02.py does not import (RuntimeError: my own words, left as they are))
  · alibi_bias: failed: 8 heads, q_len = k_len = 5: raised NameError: name 'HALF' is not defined
  ! a definition failed when the copy ran: In[4]: KeyError: 'half'
chapter 3: nothing exported. Run the exercise cells above, then this cell, in Jupyter.
  · alibi_bias: unfinished
  · t5_bucket: its source was not found (run this cell in the notebook, after the exercise's cell)
"""
EXERCISES = ["sinusoidal_table", "resize_position_table", "alibi_bias", "t5_bucket"]
RAISED = "RuntimeError: my own words, left as they are"  # what a broken posenc_mine/ch02.py says: verbatim


def _export(folder, monkeypatch, cells, namespace=None):
    """Chapter 3's export cell after `cells` ran (the last one a demo that fails, as in the notebook)."""
    monkeypatch.setattr(mine, "_ran_cells", lambda: cells)
    if namespace is None:
        namespace = {}
        for cell, source in cells[:-1]:
            try:
                exec(compile(source, cell, "exec"), namespace)  # noqa: S102 (the test's own cells)
            except KeyError:  # the cell that fails in the notebook fails here too
                pass
    return mine.export_exercises("03_relative", namespace, folder=folder)


def _hand_on(folder, monkeypatch):
    """Every path of the export cell and of the loader: a right, a wrong, a broken and an unfinished exercise, a
    module that does not import, an exercise not exported, the reference filling in, nothing to export, a
    definition whose source was not found. Returns the loader's messages."""
    said = []
    _export(folder, monkeypatch, CELLS)
    said.append(mine.load_exercises(EXERCISES, folder=folder, fallback=False))
    (folder / "posenc_mine" / "ch02.py").write_text("raise RuntimeError('my own words, left as they are')\n")
    _export(folder, monkeypatch, [*CELLS[:3], ("In[4]", "SIGN = 1.0\n"), CELLS[4]])  # the wrong sign
    said.append(mine.load_exercises(EXERCISES, folder=folder, fallback=False))
    said.append(mine.load_exercises(EXERCISES, folder=folder))  # inside the course: the reference fills in
    _export(folder, monkeypatch, [*CELLS[:3], ("In[4]", "SIGN = -1.0\nHALF = {}['half']\n"), CELLS[4]])
    _export(folder, monkeypatch, [], {"alibi_bias": None})  # nothing ran
    stub = "def alibi_bias(num_heads, q_len, k_len, device=None):\n    raise NotImplementedError('not yet')\n"
    _export(folder, monkeypatch, [CELLS[0], ("In[2]", stub), CELLS[4]])
    _export(folder, monkeypatch, CELLS[:4], {"alibi_bias": None, "t5_bucket": None})
    return [m for impl in said for m in (*impl.sources.values(), *impl.problems.values())]


def test_handing_exercises_on_says_in_english_what_it_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POSENC_LANG", "en")
    _hand_on(tmp_path, monkeypatch)
    printed = capsys.readouterr().out.splitlines()
    for line in EXPORT_ENGLISH.splitlines():
        assert line in printed, line


def test_handing_exercises_on_in_chinese_carries_no_english_prose(tmp_path, monkeypatch, capsys):
    """Printed with what the learner's code said set apart (the renderer's mark), no line carries English prose;
    what it said is shown exactly as it said it."""
    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    monkeypatch.setattr(mine, "render", lambda message: messages.render(message, "zh_CN", mark=lambda _: VERBATIM))
    said = _hand_on(tmp_path, monkeypatch)
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) >= 40 and len(said) >= 12
    prose = [f"{english_prose(line)} | {line}" for line in printed if english_prose(line)]
    assert prose == []
    assert "第 3 章：已写入 posenc_mine/ch03.py" in printed and "  ✓ alibi_bias: 通过" in printed
    broken = [messages.render(m, "zh_CN") for m in said if RAISED in str(m)]
    assert len(broken) == 2 and all(RAISED in text and "无法导入" in text for text in broken)
