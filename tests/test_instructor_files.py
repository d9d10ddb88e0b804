"""The instructor's files (issue 28): what holds the grader's secret, the reference or the hidden checks is
git-ignored, never tracked (`release` refuses while it is), and `gradescope` and `nbgrader` write it only
outside the repository or under a git-ignored folder."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grader import release
from grader.release import PRIVATE, PRIVATE_FOLDER, build_release, private_output, tracked_private
from grader.settings import DEFAULT_SECRET
from tests.conftest import ROOT


def _example(pattern):
    """A path (relative to the repository) that `pattern` is meant to catch, nested where the pattern allows it."""
    if pattern.startswith("/") and pattern.endswith("/"):
        return pattern.strip("/") + "/sub/file.ipynb"
    return "some/folder/" + pattern.replace("*", "autograder-ch01")


def _git(*args, cwd):
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("pattern", sorted(PRIVATE))
def test_gitignore_covers_every_file_that_holds_the_secret_the_reference_or_hidden_checks(pattern):
    path = _example(pattern)
    assert release._private_match(path) == pattern
    assert _git("check-ignore", "-q", "--no-index", path, cwd=ROOT).returncode == 0, f"{path} is not git-ignored"


def test_the_secrets_default_file_and_the_documented_outputs_are_private():
    assert release._private_match(DEFAULT_SECRET)
    for path in ("instructor/autograder-ch01.zip", "instructor/nbgrader/source/ch01_sinusoidal/01_sinusoidal.ipynb",
                 "autograder-ch01.zip"):
        assert release._private_match(path), path
    for path in ("course/01_sinusoidal/exercises.py", "README.md", "course.json", "notebooks/01_sinusoidal.ipynb"):
        assert release._private_match(path) is None, path


def test_the_repository_tracks_no_such_file():
    files = release.git_files(ROOT)
    if files is None:
        pytest.skip("not a git checkout")
    assert files and tracked_private(ROOT) == []


def test_tracked_private_files_are_found_with_git(tmp_path):
    _git("init", "-q", cwd=tmp_path)
    (tmp_path / DEFAULT_SECRET).write_bytes(b"x" * 32)
    (tmp_path / "bundles").mkdir()
    (tmp_path / "bundles" / "autograder.zip").write_bytes(b"PK")
    (tmp_path / "notes.md").write_text("fine\n")
    assert _git("add", "-f", DEFAULT_SECRET, "bundles/autograder.zip", "notes.md", cwd=tmp_path).returncode == 0
    found = tracked_private(tmp_path)
    assert [line.split(":")[0] for line in found] == [DEFAULT_SECRET, "bundles/autograder.zip"]


def test_release_refuses_while_git_tracks_such_a_file(tmp_path, monkeypatch):
    tracked = release.git_files(ROOT) or []
    monkeypatch.setattr(release, "git_files", lambda repo=ROOT: tracked + ["instructor/autograder-ch01.zip"])
    with pytest.raises(RuntimeError, match="instructor/autograder-ch01.zip"):
        build_release(tmp_path / "bundle", check_sync=False)
    assert not (tmp_path / "bundle").exists()


def test_instructor_outputs_refuse_the_tracked_tree(tmp_path):
    for path in (ROOT / "course" / "nbgrader", ROOT / "docs" / "bundle", ROOT / "autograder"):
        with pytest.raises(ValueError, match="not git-ignored"):
            private_output(path, "an nbgrader course")
    for path in (tmp_path / "a.zip", ROOT / PRIVATE_FOLDER / "autograder-ch01.zip", ROOT / PRIVATE_FOLDER / "nbgrader"):
        assert private_output(path, "the Gradescope bundle") == path
    for command in (["gradescope", "docs/autograder-bundle"], ["nbgrader", "course_export/"]):
        run = subprocess.run([sys.executable, "-m", "grader", *command, "--assignment", "ch00"], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and "not git-ignored" in run.stderr, run.stderr
        assert not (ROOT / command[1]).exists()
