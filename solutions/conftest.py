"""Executing the solution notebooks under pytest (nbval, in CI): chapters 7 and 8 run their reduced
configurations, and every figure must reach the notebook as a picture.

The variables are set when this folder is collected, before any notebook's kernel starts (kernels inherit the
environment). The full runs are `python -m posenc_selfcheck.lab --out docs/chapter7` (see docs/chapter7/) and
`python -m posenc_selfcheck.gridlab --out docs/chapter8` (see docs/chapter8/).

A matplotlib Figure that IPython does not know how to draw reaches the notebook as the text
`<Figure size 1200x430 with 2 Axes>` and no picture: JupyterLab then shows that text. The hook below fails
the cell that produced one (tests/test_figures.py proves that it does).

Each notebook this run executes without a failure is published, with its outputs, in the folder named by
POSENC_EXECUTED_SOLUTIONS (made here for the test session, removed at its end): the book's test build
(tests/test_book.py, book/build.py --executed) shows those outputs instead of executing the notebook a second time.
While a notebook runs, its NAME.lock there is locked (flock), so that the book waits for a notebook in progress on
another worker; NAME.ipynb appears once every cell has passed."""

import fcntl
import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

os.environ.setdefault("POSENC_CH7_RUN", "reduced")
os.environ.setdefault("POSENC_CH8_RUN", "reduced")
os.environ.setdefault("POSENC_CH9_RUN", "ci")
os.environ.setdefault("OMP_NUM_THREADS", "1")  # as in tests/conftest.py: small tensors, a busy machine

EXECUTED = "POSENC_EXECUTED_SOLUTIONS"  # the folder of this session's executed notebooks
MADE = []  # that folder, when this process made it

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


class Published:
    """One notebook's run on this process: its lock held from the first cell on, each cell's outputs as they come."""

    def __init__(self, notebook):
        folder = Path(os.environ[EXECUTED])
        self.path = folder / notebook.path.name
        # made under a name of its own and locked before it takes its name: a reader never finds it unlocked early
        claim = folder / f".{self.path.name}.{os.getpid()}"
        self.lock = claim.open("w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        claim.rename(self.path.with_suffix(".lock"))
        self.nb = notebook.nb
        self.outputs = {}  # cell number -> outputs, of the cells that passed

    def finish(self):
        """Publish the notebook with its outputs if every code cell ran and passed, then release the lock."""
        if len(self.outputs) == sum(c.cell_type == "code" for c in self.nb.cells):
            nb = nbformat.from_dict(self.nb)  # a copy
            for number, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
                cell.outputs, cell.execution_count = self.outputs[number], number + 1
            partial = self.path.with_suffix(".partial")
            nbformat.write(nb, partial)
            partial.rename(self.path)
        self.lock.close()


RUNS = {}  # notebook path -> Published, on this process


def _published(item):
    """The run of the notebook `item` (a cell of nbval's) belongs to, or None when nothing is published."""
    notebook = item.parent
    if not hasattr(item, "cell_num") or not hasattr(notebook, "nb") or not os.environ.get(EXECUTED):
        return None
    if notebook.path not in RUNS:
        RUNS[notebook.path] = Published(notebook)
    return RUNS[notebook.path]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    run = _published(item)
    result = yield
    outputs = getattr(item, "test_outputs", None)
    figures = text_figures(outputs)
    if figures:
        pytest.fail(f"{item.name}: {len(figures)} figure(s) reached the notebook as text, not as a picture: "
                    f"{figures[0]} (display it, or return it where IPython can draw it)", pytrace=False)
    cell = getattr(item, "cell", None)
    if cell is not None and missing_picture(item.path.name, cell.source, outputs):
        pytest.fail(f"{item.name}: experiment.{experiment(cell.source)}() showed no picture", pytrace=False)
    if run is not None:  # the cell passed (a failed one has no outputs there: its notebook is not published)
        run.outputs[item.cell_num] = outputs or []
    return result


def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell: publish it (or not, after a failure) and release its lock."""
    run = RUNS.get(item.path) if hasattr(item, "cell_num") else None
    if run is not None and (nextitem is None or nextitem.path != item.path):
        run.finish()
        del RUNS[item.path]


def pytest_configure(config):
    """Made by the session's first process, before pytest-xdist starts its workers, which inherit it."""
    if not os.environ.get(EXECUTED):
        MADE.append(tempfile.mkdtemp(prefix="posenc-executed-"))
        os.environ[EXECUTED] = MADE[0]


def pytest_unconfigure(config):
    for folder in MADE:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(EXECUTED, None)

# solutions/zh/ holds the same notebooks in Chinese: their code is these notebooks' but for the learner's words
# (tests/test_zh_code_cells.py), so nbval runs the English ones only (the book's test build executes the Chinese ones)
collect_ignore = ["zh"]
