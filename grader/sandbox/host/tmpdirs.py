"""The sandbox's temporary folders in the grader's temporary folder (the zygote's runtime folder, each
session's folder): each is marked with the pid of the process that must remove it, and the first one a
process makes sweeps away those of graders that were killed before they could (SIGKILL, a batch stopped).
And the one folder that outlives a grader: where the zygotes keep pyplot's font lists (`matplotlib_cache`).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .. import procs

_SWEPT = []


def make(prefix):
    """A fresh private folder `<tmp>/<prefix>...`, owned by this process."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    (folder / ".owner").write_text(str(os.getpid()))
    if not _SWEPT:
        _SWEPT.append(True)
        _sweep()
    return folder


def _sweep():
    """Remove the folders (of this user) whose owner is gone."""
    for other in Path(tempfile.gettempdir()).glob("posenc-s*-*"):
        try:
            if other.stat().st_uid == os.getuid() and not procs.alive(int((other / ".owner").read_text())):
                shutil.rmtree(other, ignore_errors=True)
        except (OSError, ValueError):
            continue


# pyplot's first import builds this list of the machine's fonts in matplotlib's cache folder (the version of its format
# in the name), and reads it at every later import
FONT_LISTS = "fontlist-v*.json"


def matplotlib_cache():
    """The folder where the zygotes keep pyplot's font lists from one start to the next: `posenc-grader/matplotlib` in
    this user's cache folder ($XDG_CACHE_HOME, else ~/.cache), this user's own and writable by no one else; None when
    there is no such folder (each zygote then builds its list, as it did before)."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME", ""))
        base = base if base.is_absolute() else Path.home() / ".cache"  # the XDG rule: a relative one is ignored
        folder = base / "posenc-grader" / "matplotlib"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = folder.lstat()
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid() or found.st_mode & 0o022:
        return None  # a link, another user's folder, or one that others may write: not ours to trust
    return folder


def _font_lists(folder):
    """The complete font lists in `folder`: regular files (never a link) that hold JSON."""
    out = []
    for path in sorted(folder.glob(FONT_LISTS)):
        try:
            if stat.S_ISREG(path.lstat().st_mode):
                json.loads(path.read_bytes())  # one that a killed process left half written is no list
                out.append(path)
        except (OSError, ValueError):
            continue
    return out


def seed_fonts(home):
    """Give the zygote whose HOME is `home` (a fresh folder) the font lists kept so far, where matplotlib looks for
    them (`home`/.cache/matplotlib): its pyplot import reads one instead of building it (about 0.1 s before its hello).
    matplotlib only ever writes in `home`, so nothing a zygote does, or a kill halfway through, reaches the kept ones.
    Learner code never writes either folder: every mode that grades keeps it to its own (runtime/child.py gives it
    its working folder as MPLCONFIGDIR)."""
    kept = matplotlib_cache()
    if kept is None:
        return
    cache = Path(home) / ".cache" / "matplotlib"
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        for path in _font_lists(kept):
            shutil.copyfile(path, cache / path.name)
    except OSError:  # a full disk: the zygote builds its list, as without one kept
        pass


def keep_fonts(home):
    """Keep the font lists the zygote whose HOME is `home` built (a version not kept yet), each written whole under
    a temporary name and then renamed, so that another grader reads a complete list or none."""
    kept = matplotlib_cache()
    if kept is None:
        return
    for path in _font_lists(Path(home) / ".cache" / "matplotlib"):
        if not (kept / path.name).exists():
            part = kept / f".{path.name}.{os.getpid()}"
            try:
                shutil.copyfile(path, part)
                os.replace(part, kept / path.name)
            except OSError:  # a full disk: nothing kept, nothing half kept, and the zygote closes all the same
                part.unlink(missing_ok=True)
