"""Which folders a sandbox child may read: the system's and Python's, never one that holds a protected path
(standard library only: imported flat by the fork servers, as `grader.sandbox.paths` by the grader).
"""

import os
import stat
import sys

SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")


def within(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def python_paths():
    """The interpreter's import folders (the zygote runs with -I: no current folder, no user site), but the
    folder of this file (in the zygote: its runtime folder, the servers and probes, not for learners)."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for entry in sys.path:
        if entry and os.path.isdir(entry) and os.path.abspath(entry) != here:
            out.append(os.path.abspath(entry))
    return out


def readable_paths(protect, python=None):
    """System and Python folders (`python`: the zygote's, as its hello reports them; default: this
    interpreter's), minus any that would contain a protected path (a folder that holds the reference is
    never exposed, even if Python's path points into it)."""
    out = []
    for path in list(SYSTEM_PATHS) + list(python_paths() if python is None else python):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue
        if any(within(os.path.realpath(p), real) for p in protect):
            continue
        out.append(path)
    return out


def other_can_read(path):
    """Would a user with no relation to the owner be able to read below `path` (DAC only)?"""
    path = os.path.realpath(path)
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        step = "/".join(parts[:i]) or "/"
        try:
            mode = os.stat(step).st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH or (step == path and not mode & stat.S_IROTH):
            return False
    return True
