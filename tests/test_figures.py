"""Every figure displays: the nbval run of the solution notebooks fails a cell whose figure reaches the
notebook as text (`<Figure size ...>`, what JupyterLab then shows instead of a picture), and chapter 7's
experiments, whose figures are matplotlib Figures made without pyplot, come out as pictures."""

import importlib.util
import os
import shutil
import subprocess
import sys

import nbformat

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("solutions_conftest", ROOT / "solutions" / "conftest.py")
solutions_conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(solutions_conftest)
text_figures = solutions_conftest.text_figures

FIGURE = ("from matplotlib.figure import Figure\n"
          "fig = Figure(figsize=(4, 3))\n"
          "fig.subplots().plot([0, 1], [1, 0])\n")


def test_a_figure_without_a_picture_is_found_and_one_with_a_picture_is_not():
    text = {"output_type": "execute_result", "data": {"text/plain": "<Figure size 1200x430 with 2 Axes>"}}
    picture = {"output_type": "display_data",
               "data": {"text/plain": "<Figure size 400x300 with 1 Axes>", "image/png": "iVBORw0KGgo="}}
    printed = {"output_type": "stream", "name": "stdout", "text": "loss 1.2\n<Figure size 640x480 with 1 Axes>\n"}
    assert text_figures([text]) == ["<Figure size 1200x430 with 2 Axes>"]
    assert text_figures([printed]) == ["<Figure size 640x480 with 1 Axes>"]
    assert text_figures([picture]) == []
    assert text_figures([{"output_type": "stream", "name": "stdout", "text": "Figure 1 of Press et al."}]) == []


def _nbval(tmp_path, cells, name="figures.ipynb"):
    """Run nbval (as scripts/test.sh runs the solutions) on a notebook of `cells`, with solutions/conftest.py."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / name)
    shutil.copy(ROOT / "solutions" / "conftest.py", tmp_path / "conftest.py")
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / name)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_nbval_fails_the_cell_whose_figure_reaches_the_notebook_as_text(tmp_path):
    run = _nbval(tmp_path, [FIGURE + "fig"])
    assert run.returncode != 0, run.stdout
    assert "figure(s) reached the notebook as text" in run.stdout and "<Figure size 400x300" in run.stdout


def test_nbval_passes_the_same_figure_once_the_lab_shows_figures(tmp_path):
    run = _nbval(tmp_path, ["import posenc_selfcheck.lab", FIGURE + "fig"])
    assert run.returncode == 0, run.stdout[-3000:]


def test_nbval_fails_a_chapter_7_experiment_cell_that_shows_no_picture(tmp_path):
    stub = "class experiment:\n    def extrapolation():\n        print('loss 1.2')\n"
    run = _nbval(tmp_path, [stub, "experiment.extrapolation()"], name="07_train_short_test_long.ipynb")
    assert run.returncode != 0, run.stdout
    assert "experiment.extrapolation() showed no picture" in run.stdout


def test_chapter_7s_experiments_display_their_figures_as_pictures():
    """The solution notebook in its reduced run: each experiment cell shows a picture, none a text figure. The nbval
    run of solutions/ executes it (solutions/conftest.py sets the reduced run): its hook fails a text figure in any
    cell and an experiment cell of PICTURED without a PNG; here, that PICTURED names the notebook's four experiment
    cells and that the rule fails a cell without a picture."""
    nb = nbformat.read(ROOT / "solutions" / "07_train_short_test_long.ipynb", as_version=4)
    name = "07_train_short_test_long.ipynb"
    experiments = [c for c in nb.cells if c.cell_type == "code"
                   and solutions_conftest.experiment(c.source) in solutions_conftest.PICTURED[name]]
    assert len(experiments) == 4
    assert sorted(solutions_conftest.experiment(c.source) for c in experiments) == \
        sorted(solutions_conftest.PICTURED[name])
    picture = {"output_type": "display_data", "data": {"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}}
    printed = {"output_type": "stream", "name": "stdout", "text": "loss 1.2\n"}
    for cell in experiments:
        assert solutions_conftest.missing_picture(name, cell.source, [printed])
        assert not solutions_conftest.missing_picture(name, cell.source, [printed, picture])
    assert not solutions_conftest.missing_picture(name, "experiment.comparison()", [printed])
    assert not solutions_conftest.missing_picture("01_sinusoidal.ipynb", experiments[0].source, [printed])
