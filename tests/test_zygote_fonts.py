"""pyplot's list of the machine's fonts, kept from one zygote to the next (grader/sandbox/host/tmpdirs.py): built by
the first zygote in its own HOME, kept in a folder of the grader's user that no one else may write, and given to
every later zygote, which reads it instead of building it again; a folder or a file that is not the grader's alone,
or a list left half written, is never used."""

from __future__ import annotations

import json
import os
import stat

import pytest

from grader.sandbox.host import tmpdirs
from grader.sandbox.host.client import Zygote
from grader.settings import Settings


def _zygote():
    settings = Settings.from_env()
    return Zygote(settings.sandbox_mode, settings.uid_base, settings.sandbox)


def test_the_first_zygote_builds_the_font_list_and_the_next_one_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = _zygote()
    first.ready()  # its hello comes after pyplot's import
    first.close()
    kept = tmp_path / "posenc-grader" / "matplotlib"
    lists = list(kept.glob(tmpdirs.FONT_LISTS))
    assert len(lists) == 1, sorted(p.name for p in tmp_path.rglob("*"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700 and kept.stat().st_uid == os.geteuid()
    # mark the kept list (matplotlib keeps a key it does not know as an attribute): a list built again has no mark
    marked = {**json.loads(lists[0].read_text()), "kept_by_the_test": True}
    lists[0].write_text(json.dumps(marked))
    second = _zygote()
    try:
        second.ready()
        read = second.root / ".cache" / "matplotlib" / lists[0].name
        assert json.loads(read.read_text()).get("kept_by_the_test") is True  # read, not built again
    finally:
        second.close()
    assert json.loads(lists[0].read_text()) == marked  # and the kept one is left as it was


@pytest.mark.parametrize("spoilt", ["writable by the group", "a link", "a file", "another user's"])
def test_a_folder_that_is_not_the_graders_alone_is_not_used(tmp_path, monkeypatch, spoilt):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "posenc-grader" / "matplotlib"
    folder.parent.mkdir(parents=True)
    if spoilt == "writable by the group":
        folder.mkdir()
        folder.chmod(0o770)
    elif spoilt == "a link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(tmp_path / "elsewhere")
    elif spoilt == "a file":
        folder.write_text("")
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root")
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)
    assert tmpdirs.matplotlib_cache() is None
    home = tmp_path / "home"
    tmpdirs.seed_fonts(home)
    assert not home.exists()  # nothing given
    folder.unlink() if folder.is_symlink() or folder.is_file() else folder.rmdir()
    assert tmpdirs.matplotlib_cache() == folder  # made anew, this user's own


def test_a_half_written_list_is_not_kept_and_a_link_is_not_given(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kept = tmpdirs.matplotlib_cache()
    built = tmp_path / "zygote" / ".cache" / "matplotlib"
    built.mkdir(parents=True)
    (built / "fontlist-v1.json").write_text('{"__class__": "FontManager", "ttflist": [')  # killed while writing
    (built / "fontlist-v2.json").write_text('{"__class__": "FontManager"}')
    tmpdirs.keep_fonts(tmp_path / "zygote")
    assert sorted(p.name for p in kept.iterdir()) == ["fontlist-v2.json"]
    (tmp_path / "outside.json").write_text("{}")
    (kept / "fontlist-v3.json").symlink_to(tmp_path / "outside.json")
    tmpdirs.seed_fonts(tmp_path / "next")
    assert sorted(p.name for p in (tmp_path / "next" / ".cache" / "matplotlib").iterdir()) == ["fontlist-v2.json"]


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert tmpdirs.matplotlib_cache() == tmp_path / ".cache" / "posenc-grader" / "matplotlib"
    assert not (tmp_path / "relative").exists()


def test_a_full_disk_keeps_nothing_half_and_stops_no_zygote(tmp_path, monkeypatch):
    """Keeping and giving the lists is best effort: a copy that fails leaves no part behind and raises nothing (the
    zygote then builds its own list, as without one kept)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = tmp_path / "zygote" / ".cache" / "matplotlib"
    built.mkdir(parents=True)
    (built / "fontlist-v2.json").write_text('{"__class__": "FontManager"}')

    def full(src, dst, **kwargs):
        with open(dst, "wb") as f:
            f.write(b"{")  # a part of it, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tmpdirs.shutil, "copyfile", full)
    tmpdirs.keep_fonts(tmp_path / "zygote")
    assert list(tmpdirs.matplotlib_cache().iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    tmpdirs.keep_fonts(tmp_path / "zygote")
    monkeypatch.setattr(tmpdirs.shutil, "copyfile", full)
    tmpdirs.seed_fonts(tmp_path / "next")  # raises nothing
