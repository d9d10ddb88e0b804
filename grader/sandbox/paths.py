"""Which folders a sandbox child may read: the system's and Python's, never one that holds a protected path
(standard library only: imported flat by the fork servers, as `grader.sandbox.paths` by the grader and the
confinement modules).
"""

import os
import stat
import sys

SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")
# the devices a child may open (never /dev as a whole: no terminal, no /dev/pts, no host /dev/shm); a CUDA
# exercise adds the GPU's (policy.Request.gpu_devices)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


def within(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def without(paths, withheld):
    """`paths` (folders and files to allow) with every path of `withheld` (real paths) cut out. A rule on a
    folder covers everything below it, so a folder that holds a withheld path is replaced by its entries,
    and the entry on the way to the withheld path by its own, down to the withheld path's siblings. Each
    entry is judged by its real path: a link to a withheld path (or into it) is left out too. A folder
    this process cannot list (a root grader's 0700 folder, for a child that took its own uid) is left out:
    nothing in it was readable to the child anyway."""
    out = []
    for path in paths:
        real = os.path.realpath(path)
        inside = [w for w in withheld if within(w, real)]
        if any(within(real, w) for w in withheld):
            continue
        if not inside:
            out.append(path)
            continue
        try:
            names = sorted(os.listdir(real)) if os.path.isdir(real) else []
        except OSError:
            continue
        out += without([os.path.join(real, name) for name in names], inside)
    return out


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
