"""Reading submissions: what is kept, what is dropped, and clear errors for unusable paths."""

import json

import pytest

from grader.submission import SubmissionError, defining_file, read_submission


def notebook(tmp_path, name, cells):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {"tags": tags}, "source": src, "outputs": [], "execution_count": None}
        for src, tags in cells]}
    path = tmp_path / name
    path.write_text(json.dumps(nb))
    return path


def test_definitions_are_kept_and_demos_loops_and_calls_dropped(tmp_path):
    path = notebook(tmp_path, "a.ipynb", [
        ("import torch\n%matplotlib inline\n!pip install x\nN = 3", []),
        ("def f(x):\n    return x + N\n\nf(2)\nfor i in range(10**9):\n    pass", []),
        ("def broken(:\n    pass", []),
        ("def g():\n    return 1", ["demo"]),
        ("%%time\ndef h():\n    pass", []),
        ("@staticmethod\ndef decorated():\n    pass", []),
    ])
    (sf,) = read_submission(path)
    kept = "\n".join(s.source for s in sf.statements)
    assert {"torch", "N", "f", "decorated"} <= sf.defines
    assert "g" not in sf.defines and "h" not in sf.defines and "broken" not in sf.defines
    assert "range(10**9)" not in kept and "f(2)" not in kept and "pip" not in kept
    assert "@staticmethod" in kept
    assert any("cell 3: syntax error" in str(note) for note in sf.notes)


def test_line_numbers_match_the_learners_cell(tmp_path):
    path = notebook(tmp_path, "a.ipynb", [("x = 1\n\n\ndef f():\n    return 1", [])])
    (sf,) = read_submission(path)
    statement = sf.statements[1]
    # the statement alone, with the line it starts on (the sandbox compiles it there: tracebacks show line 4)
    assert (statement.source.splitlines()[0], statement.line) == ("def f():", 4)
    assert "cell 1" in statement.label


def test_the_last_file_that_defines_a_name_is_used(tmp_path):
    (tmp_path / "01.py").write_text("def f():\n    return 1\n")
    (tmp_path / "02.py").write_text("def f():\n    return 2\n")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "03.py").write_text("def f():\n    return 3\n")
    files = read_submission(tmp_path)
    assert [f.name for f in files] == ["01.py", "02.py"]
    assert defining_file(files, "f").name == "02.py"
    assert defining_file(files, "missing") is None


def test_an_unreadable_notebook_is_a_note_not_a_crash(tmp_path):
    path = tmp_path / "bad.ipynb"
    path.write_text("{not json")
    (sf,) = read_submission(path)
    assert sf.statements == [] and "not a readable notebook" in str(sf.notes[0])


@pytest.mark.parametrize("make,message", [
    (lambda p: p / "missing.ipynb", "does not exist"),
    (lambda p: (p / "x.txt").write_text("x") and p / "x.txt", "neither a notebook"),
    (lambda p: p, "holds no .ipynb or .py file"),
])
def test_unusable_paths_raise_a_clear_error(tmp_path, make, message):
    with pytest.raises(SubmissionError, match=message):
        read_submission(make(tmp_path))
