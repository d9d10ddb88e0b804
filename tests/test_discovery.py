"""Which submissions a class folder holds, and under which ids (grader/batch/discovery.py)."""

import os

from grader.batch.discovery import discover, submission_hash


def _touch(path, text="{}"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_plain_folder_has_one_entry_per_student(tmp_path):
    _touch(tmp_path / "alice.ipynb")
    _touch(tmp_path / "bob" / "01_sinusoidal.ipynb")
    _touch(tmp_path / "notes.txt", "not a submission")
    _touch(tmp_path / ".DS_Store")
    found = discover(tmp_path)
    assert {s: e.path for s, e in found.items()} == {"alice": tmp_path / "alice.ipynb", "bob": tmp_path / "bob"}


def test_nbgrader_submitted_layout_is_one_entry_per_student(tmp_path):
    root = tmp_path / "course"
    _touch(root / "submitted" / "alice" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    _touch(root / "submitted" / "bob" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    _touch(root / "submitted" / "bob" / "ch04_rope" / "04_rope.ipynb")
    _touch(root / "submitted" / ".ipynb_checkpoints" / "x" / "y.ipynb")
    _touch(root / "source" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")  # the instructor's, not a student's
    found = discover(root)
    assert {s: e.path for s, e in found.items()} == {"alice": root / "submitted" / "alice",
                                                     "bob": root / "submitted" / "bob"}


def test_ids_that_would_meet_or_change_get_a_visible_hash_and_never_overwrite(tmp_path):
    for name in ("bob_smith.py", "bob~smith.py", "alice.py", "alice.ipynb", "x" * 200 + ".py"):
        _touch(tmp_path / name, "x = 1\n")
    found = discover(tmp_path)
    assert len(found) == 5  # nobody lost
    assert all(len(s) <= 48 and s.replace("-", "").replace("_", "").replace(".", "").isalnum() for s in found)
    assert "bob_smith" not in found or found["bob_smith"].name == "bob_smith.py"
    by_name = {e.name: s for s, e in found.items()}
    assert by_name["bob~smith.py"].startswith("bob_smith-")  # changed by sanitising: a hash of the real name
    assert by_name["alice.py"] != by_name["alice.ipynb"]
    assert discover(tmp_path) == found  # stable across runs


def test_links_count_as_entries_and_are_hashed_without_being_followed(tmp_path):
    secret = tmp_path / "secret.py"
    _touch(secret, "SECRET = 1\n")
    folder = tmp_path / "class"
    folder.mkdir()
    os.symlink(secret, folder / "mallory.py")
    os.symlink("/proc/self/mem", folder / "eve.py")
    found = discover(folder)
    assert set(found) == {"mallory.py", "eve.py"}
    before = submission_hash(found["mallory.py"].path)
    _touch(secret, "SECRET = 2\n")
    assert submission_hash(found["mallory.py"].path) == before  # the target was never read
