"""The sandbox's temporary folders in the grader's temporary folder (the zygote's runtime folder, each
session's folder): each is marked with the pid of the process that must remove it, and the first one a
process makes sweeps away those of graders that were killed before they could (SIGKILL, a batch stopped).
"""

from __future__ import annotations

import os
import shutil
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
