"""Executing the solution notebooks under pytest (nbval, in CI): chapters 7 and 8 run their reduced
configurations, and every figure must reach the notebook as a picture.

The variables are set when this folder is collected, before any notebook's kernel starts (kernels inherit the
environment). The full runs are `python -m posenc_selfcheck.lab --out docs/chapter7` (see docs/chapter7/) and
`python -m posenc_selfcheck.gridlab --out docs/chapter8` (see docs/chapter8/).

A matplotlib Figure that IPython does not know how to draw reaches the notebook as the text
`<Figure size 1200x430 with 2 Axes>` and no picture: JupyterLab then shows that text. The hook below fails
the cell that produced one (tests/test_figures.py proves that it does)."""

import os
import re

import pytest

os.environ.setdefault("POSENC_CH7_RUN", "reduced")
os.environ.setdefault("POSENC_CH8_RUN", "reduced")
os.environ.setdefault("OMP_NUM_THREADS", "1")  # as in tests/conftest.py: small tensors, a busy machine

FIGURE_TEXT = re.compile(r"<Figure size \d+x\d+ with \d+ Axes>")
PICTURES = ("image/png", "image/svg+xml", "image/jpeg")
# the experiment cells that must show a PNG, by notebook: chapter 7's draw matplotlib Figures made without pyplot
# (tests/test_figures.py checks that the notebook calls each of them once)
PICTURED = {"07_train_short_test_long.ipynb": ("extrapolation", "rope_scaling", "attention_maps", "position_probe")}


def text_figures(outputs):
    """The figures among a cell's outputs that came without a picture: their text, in order."""
    found = []
    for out in outputs or ():
        if out.get("output_type") == "stream":
            found += FIGURE_TEXT.findall(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            data = out.get("data", {})
            if not any(kind in data for kind in PICTURES):
                found += FIGURE_TEXT.findall(data.get("text/plain", ""))
    return found


def experiment(source):
    """The name of the chapter 7 experiment a cell's source calls (`experiment.NAME(...)`), or None."""
    m = re.match(r"experiment\.(\w+)\(", source)
    return m.group(1) if m else None


def missing_picture(notebook, source, outputs):
    """Whether the cell `source` of `notebook` is one of PICTURED's experiments and its outputs hold no PNG."""
    return experiment(source) in PICTURED.get(notebook, ()) and \
        not any("image/png" in o.get("data", {}) for o in outputs or ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    outputs = getattr(item, "test_outputs", None)
    figures = text_figures(outputs)
    if figures:
        pytest.fail(f"{item.name}: {len(figures)} figure(s) reached the notebook as text, not as a picture: "
                    f"{figures[0]} (display it, or return it where IPython can draw it)", pytrace=False)
    cell = getattr(item, "cell", None)
    if cell is not None and missing_picture(item.path.name, cell.source, outputs):
        pytest.fail(f"{item.name}: experiment.{experiment(cell.source)}() showed no picture", pytrace=False)
    return result

# solutions/zh/ holds the same notebooks with the Markdown in Chinese: their code cells are identical to these
# (tests/test_i18n.py), so nbval runs the English ones only
collect_ignore = ["zh"]
