"""No command ever overwrites a learner's work. In a copy of the repository: a learner's edits, saved in their
own copy (my_notebooks/, made by scripts/lab.sh) and in a generated notebook (notebooks/, where the course
opened before my_notebooks/ existed), survive every documented command that writes notebooks: lab.sh again,
`python -m grader build --check`, `python -m grader build`, `python -m grader release`."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from grader import build
from tests.conftest import ROOT

EDIT = "def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):\n    return 'my work'  # a learner's edit\n"


def _repository_copy(dest):
    """The repository's files as a clone would have them (tracked and untracked-not-ignored), links kept."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src, out = ROOT / rel, dest / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            out.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, out)


def _fake_environment(folder):
    """An environment for scripts/env.sh whose python is this one and whose course kernel exists, so that
    lab.sh does not set anything up."""
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    kernel = folder / "share" / "jupyter" / "kernels" / "posenc-course"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                                                             "{connection_file}"], "language": "python"}))
    return folder


def _edit(path):
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and "def sinusoidal_table" in "".join(c["source"]))
    cell["source"] = EDIT
    path.write_text(json.dumps(nb, indent=1))
    return path.read_text()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="no JupyterLab (bash scripts/setup.sh)")
    root = tmp_path_factory.mktemp("course") / "repo"
    _repository_copy(root)
    env = {**os.environ, "VIRTUAL_ENV": str(_fake_environment(root.parent / "env"))}
    env.pop("CONDA_PREFIX", None)

    def run(*args):
        return subprocess.run(list(args), cwd=root, env=env, capture_output=True, text=True, timeout=600)

    return root, run


def test_a_learners_edits_survive_every_documented_command(course):
    root, run = course
    nb = "01_sinusoidal.ipynb"
    generated = (root / "notebooks" / nb).read_text()
    # the course opens on the learner's own copies, made once
    lab = run("bash", "scripts/lab.sh", "--version")
    assert lab.returncode == 0, lab.stderr
    assert "copied to my_notebooks/" in lab.stdout and f"{root}/my_notebooks" in lab.stdout
    mine = root / "my_notebooks" / nb
    assert mine.read_text() == generated
    assert (root / "my_notebooks" / "posenc_selfcheck" / "__init__.py").exists()
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "my_notebooks/01_sinusoidal.ipynb"])
    assert ignored.returncode == 0  # untracked: never committed, never regenerated
    mine_text, theirs_text = _edit(mine), _edit(root / "notebooks" / nb)

    again = run("bash", "scripts/lab.sh", "--version")
    assert again.returncode == 0 and "copied to" not in again.stdout
    check = run(sys.executable, "-m", "grader", "build", "--check")
    assert check.returncode == 1 and f"notebooks/{nb} holds edits the build did not make" in check.stdout
    written = run(sys.executable, "-m", "grader", "build")
    assert written.returncode == 1, written.stdout + written.stderr
    assert f"kept: notebooks/{nb} holds edits the build did not make" in written.stdout
    assert "my_notebooks/" in written.stdout
    release = run(sys.executable, "-m", "grader", "release", str(root.parent / "bundle"))
    assert release.returncode != 0  # the generated files are not in sync while the edit sits in notebooks/
    assert mine.read_text() == mine_text and (root / "notebooks" / nb).read_text() == theirs_text

    # the learner moves their work to their copies: everything is in sync again, and nothing was lost
    (root / "notebooks" / nb).rename(root / "my_notebooks" / "01_sinusoidal_old.ipynb")
    assert run(sys.executable, "-m", "grader", "build").returncode == 0
    assert (root / "notebooks" / nb).read_text() == generated
    # in sync: the release checks it first (`grader build --check`, its step 1 of 3) and writes the bundle
    release = run(sys.executable, "-m", "grader", "release", str(root.parent / "bundle"))
    assert release.returncode == 0, release.stdout + release.stderr
    assert "checking that the generated files are in sync" in release.stderr
    assert run("bash", "scripts/lab.sh", "--version").returncode == 0
    assert mine.read_text() == mine_text
    assert (root / "my_notebooks" / "01_sinusoidal_old.ipynb").read_text() == theirs_text


def test_a_notebook_saved_unchanged_or_run_is_not_an_edit_and_a_changed_cell_is(tmp_path):
    nb = tmp_path / "01_sinusoidal.ipynb"
    shutil.copy(ROOT / "notebooks" / "01_sinusoidal.ipynb", nb)
    assert not build.holds_edits(nb)
    data = json.loads(nb.read_text())
    for cell in data["cells"]:  # run: outputs and counts, as JupyterLab saves them (JSON re-indented)
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [{"output_type": "stream", "name": "stdout", "text": "x"}], 1
    nb.write_text(json.dumps(data))
    assert not build.holds_edits(nb)
    data["cells"][3]["source"] = "".join(data["cells"][3]["source"]) + "\n# a note"
    nb.write_text(json.dumps(data))
    assert build.holds_edits(nb)
    nb.write_text("{ not json")
    assert build.holds_edits(nb)
