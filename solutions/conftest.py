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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    figures = text_figures(getattr(item, "test_outputs", None))
    if figures:
        pytest.fail(f"{item.name}: {len(figures)} figure(s) reached the notebook as text, not as a picture: "
                    f"{figures[0]} (display it, or return it where IPython can draw it)", pytrace=False)
    return result

# solutions/zh/ holds the same notebooks with the Markdown in Chinese: their code cells are identical to these
# (tests/test_i18n.py), so nbval runs the English ones only
collect_ignore = ["zh"]
