"""A solution notebook is executed once in a test session, not twice: the nbval run publishes each notebook it ran
without a failure, with its outputs (solutions/conftest.py), and the book's test build shows those outputs instead
of executing the notebook again (book/build.py --executed): only where the code cells are the page's and the chapter
has no stored run (chapters 7 and 8 show their full runs there, nbval runs the reduced ones), and after waiting for a
notebook that another worker is still running."""

import fcntl
import importlib.util
import json
import threading

import nbformat

from tests.conftest import ROOT
from tests.test_figures import _nbval

VARIABLE = "POSENC_EXECUTED_SOLUTIONS"


def _book():
    spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
    book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book)
    return book


def test_nbval_publishes_a_notebook_that_passed_with_its_outputs_and_not_one_that_failed(tmp_path, monkeypatch):
    executed = tmp_path / "executed"
    executed.mkdir()
    monkeypatch.setenv(VARIABLE, str(executed))
    (tmp_path / "ok").mkdir()
    run = _nbval(tmp_path / "ok", ["print('hello')", "21 * 2"], name="01_sinusoidal.ipynb")
    assert run.returncode == 0, run.stdout[-3000:]
    cells = nbformat.read(executed / "01_sinusoidal.ipynb", as_version=4).cells
    assert cells[0].outputs == [{"output_type": "stream", "name": "stdout", "text": "hello\n"}]
    assert [o["output_type"] for o in cells[1].outputs] == ["execute_result"]
    assert cells[1].outputs[0]["data"]["text/plain"] == "42"
    assert [c.execution_count for c in cells] == [1, 2]

    (tmp_path / "bad").mkdir()
    run = _nbval(tmp_path / "bad", ["print('before')", "1 / 0", "print('after')"], name="02_learned_absolute.ipynb")
    assert run.returncode != 0 and "ZeroDivisionError" in run.stdout
    assert not (executed / "02_learned_absolute.ipynb").exists()
    with (executed / "02_learned_absolute.lock").open() as lock:  # released: the book does not wait for it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert executed.is_dir()  # the session that made the folder removes it, not this one


def _staged(folder, stem, outputs=None, edit=False):
    """solutions/STEM.ipynb written into `folder`, its code cells given `outputs` (a stream naming the cell)."""
    nb = json.loads((ROOT / "solutions" / f"{stem}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    if outputs:
        for n, cell in enumerate(code):
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"{stem} cell {n}\n"}]
            cell["execution_count"] = n + 1
    if edit:
        code[-1]["source"] = "".join(code[-1]["source"]) + "\n# changed since"
    folder.mkdir(exist_ok=True)
    path = folder / f"{stem}.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1))
    return path


def test_the_book_shows_the_outputs_of_a_notebook_with_the_same_code_and_no_stored_run(tmp_path):
    book = _book()
    src, executed = tmp_path / "src", tmp_path / "executed"
    stems = ["01_sinusoidal", "03_relative", "07_train_short_test_long", "08_positions_in_2d"]
    pages = {stem: _staged(src, stem) for stem in stems}
    before = {stem: path.read_text() for stem, path in pages.items()}
    _staged(executed, "01_sinusoidal", outputs=True)
    _staged(executed, "03_relative", outputs=True, edit=True)  # its code changed since the tests ran it
    _staged(executed, "07_train_short_test_long", outputs=True)  # the book shows the full run, nbval ran the reduced
    # 08: the tests did not publish it (a cell failed, or nbval did not run it)
    assert book.reuse_executed(src, stems, executed) == ["01_sinusoidal"]
    page = json.loads(pages["01_sinusoidal"].read_text())
    code = [c for c in page["cells"] if c["cell_type"] == "code"]
    assert [c["outputs"][0]["text"] for c in code] == [f"01_sinusoidal cell {n}\n" for n in range(len(code))]
    assert page["metadata"]["mystnb"] == {"execution_mode": "off"}  # myst-nb does not execute it again
    # the Markdown the book staged is kept
    assert [c["source"] for c in page["cells"] if c["cell_type"] == "markdown"] == \
        [c["source"] for c in json.loads(before["01_sinusoidal"])["cells"] if c["cell_type"] == "markdown"]
    for stem in stems[1:]:
        assert pages[stem].read_text() == before[stem], stem


def test_the_book_waits_for_a_notebook_the_tests_are_still_running(tmp_path, monkeypatch):
    book = _book()
    src, executed = tmp_path / "src", tmp_path / "executed"
    _staged(src, "01_sinusoidal")
    executed.mkdir()
    lock = (executed / "01_sinusoidal.lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # a worker runs the notebook
    monkeypatch.setattr(book, "WAIT_S", 0)
    assert book.reuse_executed(src, ["01_sinusoidal"], executed) == []  # waited no longer than WAIT_S

    def finish():
        _staged(executed, "01_sinusoidal", outputs=True)
        lock.close()

    monkeypatch.setattr(book, "WAIT_S", 600)
    threading.Timer(1.0, finish).start()
    assert book.reuse_executed(src, ["01_sinusoidal"], executed) == ["01_sinusoidal"]
