"""User ids for sessions when the grader runs as root: one per live session, from settings.uid_base up, never
one that an account uses, held with a lock file in one machine-wide folder (two batch workers, each with its
own zygote, must never borrow the same uid: "every process of that uid" must be one submission's).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import stat
import tempfile
from pathlib import Path

from ...records import messages
from .. import procs
from ..errors import SandboxError


def slots_dir():
    """The lock files' folder: private, root's."""
    path = Path(tempfile.gettempdir()) / "posenc-sandbox-slots"
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
        raise SandboxError(messages.msg("{path} is not a private root-owned folder; remove it and grade again",
                                        path=str(path)))
    return path


def acquire_uid(base, slots):
    """(lock fd, uid): a uid among `slots` from `base` (Settings.uid_base, SandboxTimings.uid_slots) that no account
    and no other live session uses, held while the fd is open."""
    folder = slots_dir()
    for n in range(slots):
        uid = base + n
        try:
            pwd.getpwuid(uid)
            continue  # a real account: never borrow it
        except KeyError:
            pass
        fd = os.open(folder / f"{n}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        procs.kill_all(lambda: procs.uid_pids(uid))  # left over by a grader that was killed
        return fd, uid
    raise SandboxError(messages.msg("no free sandbox user id (all lock files are held)"))
