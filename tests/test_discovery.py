"""Which submissions a class folder holds, and under which ids (grader/batch/discovery.py)."""

import os
import time

import pytest

from grader.batch.discovery import DiscoveryError, discover, parse_time, submission_hash


def entries(folder, layout="auto", assignment=None):
    return discover(folder, layout, assignment)[1]


def _touch(path, text="{}"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_plain_folder_has_one_entry_per_student(tmp_path):
    _touch(tmp_path / "alice.ipynb")
    _touch(tmp_path / "bob" / "01_sinusoidal.ipynb")
    _touch(tmp_path / "notes.txt", "not a submission")
    _touch(tmp_path / ".DS_Store")
    found = entries(tmp_path)
    assert {s: e.path for s, e in found.items()} == {"alice": tmp_path / "alice.ipynb", "bob": tmp_path / "bob"}


def test_nbgrader_submitted_layout_is_one_entry_per_student(tmp_path):
    root = tmp_path / "course"
    _touch(root / "submitted" / "alice" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    _touch(root / "submitted" / "bob" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    _touch(root / "submitted" / "bob" / "ch04_rope" / "04_rope.ipynb")
    _touch(root / "submitted" / ".ipynb_checkpoints" / "x" / "y.ipynb")
    _touch(root / "source" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")  # the instructor's, not a student's
    _touch(root / "nbgrader_config.py", "c = get_config()\n")
    expected = {"alice": root / "submitted" / "alice", "bob": root / "submitted" / "bob"}
    for folder, layout in ((root / "submitted", "auto"), (root / "submitted", "nbgrader"), (root, "nbgrader")):
        used, found = discover(folder, layout)
        assert used == "nbgrader" and {s: e.path for s, e in found.items()} == expected
    # one assignment: that folder of each student; a student without it is listed, with the reason
    found = entries(root / "submitted", "nbgrader", "ch04_rope")
    assert found["bob"].path == root / "submitted" / "bob" / "ch04_rope"
    assert found["alice"].path is None and "nothing handed in for ch04_rope" in str(found["alice"].note)
    with pytest.raises(DiscoveryError):  # the instructor asked for nbgrader's layout: a plain folder is refused
        discover(tmp_path / "course" / "source" / "ch01_sinusoidal", "nbgrader")


def test_ids_that_would_meet_or_change_get_a_visible_hash_and_never_overwrite(tmp_path):
    for name in ("bob_smith.py", "bob~smith.py", "alice.py", "alice.ipynb", "x" * 200 + ".py"):
        _touch(tmp_path / name, "x = 1\n")
    found = entries(tmp_path)
    assert len(found) == 5  # nobody lost
    assert all(len(s) <= 48 and s.replace("-", "").replace("_", "").replace(".", "").isalnum() for s in found)
    assert "bob_smith" not in found or found["bob_smith"].name == "bob_smith.py"
    by_name = {e.name: s for s, e in found.items()}
    assert by_name["bob~smith.py"].startswith("bob_smith-")  # changed by sanitising: a hash of the real name
    assert by_name["alice.py"] != by_name["alice.ipynb"]
    assert entries(tmp_path) == found  # stable across runs


def test_links_count_as_entries_and_are_hashed_without_being_followed(tmp_path):
    secret = tmp_path / "secret.py"
    _touch(secret, "SECRET = 1\n")
    folder = tmp_path / "class"
    folder.mkdir()
    os.symlink(secret, folder / "mallory.py")
    os.symlink("/proc/self/mem", folder / "eve.py")
    found = entries(folder)
    assert set(found) == {"mallory.py", "eve.py"}
    before = submission_hash(found["mallory.py"].path)
    _touch(secret, "SECRET = 2\n")
    assert submission_hash(found["mallory.py"].path) == before  # the target was never read


def test_a_student_folder_named_submitted_does_not_switch_the_layout(tmp_path):
    """Issue 15: alice, bob and carol vanished behind mallory's folder `submitted/` ("1 of 1 graded")."""
    for name in ("alice.py", "bob.py", "carol.ipynb"):
        _touch(tmp_path / name, "x = 1\n")
    _touch(tmp_path / "submitted" / "mallory" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    used, found = discover(tmp_path)
    assert used == "plain" and set(found) == {"alice", "bob", "carol", "submitted"}
    with pytest.raises(DiscoveryError):  # nor does it when nbgrader's layout is asked for: not every entry fits
        discover(tmp_path, "nbgrader")


def test_every_entry_gets_a_distinct_id_even_against_a_forged_hash(tmp_path):
    """Issue 15: `Ana Lima.py` became `Ana_Lima-1991cc40`, and an entry of that very name overwrote it."""
    import hashlib

    forged = "Ana_Lima-" + hashlib.sha256(b"Ana Lima.py").hexdigest()[:8]
    for name in ("Ana Lima.py", forged + ".py", "ALICE.py", "alice.ipynb"):
        _touch(tmp_path / name, "x = 1\n")
    found = entries(tmp_path)
    assert len(found) == 4 and len({s.casefold() for s in found}) == 4  # distinct, even without case
    by_name = {e.name: (s, str(e.note)) for s, e in found.items()}
    assert by_name[forged + ".py"] == (forged, "")  # the entry whose name needed no change keeps it
    renamed, note = by_name["Ana Lima.py"]
    assert renamed != forged and forged in note and renamed in note  # renamed visibly
    assert entries(tmp_path) == found


@pytest.mark.parametrize("layout", ["plain", "nbgrader"])
def test_submission_time_is_the_file_time_and_nbgrader_s_timestamp_only_the_student_s_claim(tmp_path, layout):
    if layout == "plain":
        _touch(tmp_path / "alice.py", "x = 1\n")
        os.utime(tmp_path / "alice.py", (1767225600, 1767225600))  # 2026-01-01T00:00:00Z
        entry = entries(tmp_path, "plain")["alice"]
        assert (entry.submitted, entry.time_source) == ("2026-01-01T00:00:00+00:00", "file time")
        return
    _touch(tmp_path / "alice" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    os.utime(tmp_path / "alice" / "ch01_sinusoidal" / "01_sinusoidal.ipynb", (1767225600, 1767225600))
    _touch(tmp_path / "alice" / "ch01_sinusoidal" / "timestamp.txt", "2025-03-01 23:59:30.123456 UTC")  # the student's
    _touch(tmp_path / "bob" / "ch01_sinusoidal" / "01_sinusoidal.ipynb")
    _touch(tmp_path / "bob" / "ch01_sinusoidal" / "timestamp.txt", "=HYPERLINK(1)")  # not a time: no claim
    found = entries(tmp_path, "nbgrader", "ch01_sinusoidal")
    assert (found["alice"].submitted, found["alice"].time_source, found["alice"].claimed) == \
        ("2026-01-01T00:00:00+00:00", "file time", "2025-03-01T23:59:30+00:00")
    assert (found["bob"].time_source, found["bob"].claimed) == ("file time", "")
    assert found["bob"].submitted[:4] == time.strftime("%Y")


def test_times_parse_like_nbgrader_writes_them():
    assert parse_time("2026-03-01 23:59:30.5 UTC").isoformat() == "2026-03-01T23:59:30.500000+00:00"
    assert parse_time("2026-03-01T23:59").isoformat() == "2026-03-01T23:59:00+00:00"  # naive: UTC
    assert parse_time("2026-03-02T00:59+01:00") == parse_time("2026-03-01T23:59")
