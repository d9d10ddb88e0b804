"""The kernel calls the sandbox makes through libc (Linux; standard library and ctypes only): prctl, mount,
unshare, setns, capset (dropping every capability), and their flag values. Imported flat by the fork servers, as
`grader.sandbox.confine.kernel` by the grader.
"""

import ctypes
import os

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x40000000, 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 15, 36, 38

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def check(ret, what):
    """`ret` of a libc call, or OSError with errno's message when it is negative."""
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def prctl(option, value):
    check(libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
          f"prctl({option})")


def set_name(name):
    """This process's name in /proc/<pid>/comm (PR_SET_NAME)."""
    check(libc.prctl(PR_SET_NAME, name.encode(), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
          "prctl(PR_SET_NAME)")


def unshare(flags, what="unshare"):
    check(libc.unshare(flags), what)


def setns(fd, nstype, what="setns"):
    check(libc.setns(fd, nstype), what)


def _enc(text):
    return text.encode() if text is not None else None


def mount(source, target, fstype, flags, data=None):
    check(libc.mount(_enc(source), _enc(target), _enc(fstype), ctypes.c_ulong(flags), _enc(data)), f"mount {target}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities():
    """No capabilities at all (bounding set, effective, permitted, inheritable): for a child that stays uid 0
    (no uid of its own is usable) or holds a user namespace's, so that root is an ordinary user with
    Landlock around it (no module loading, no raw sockets, no kill); and for the jail's relays."""
    for cap in range(64):
        if libc.prctl(24, ctypes.c_ulong(cap), 0, 0, 0) < 0:  # PR_CAPBSET_DROP; EINVAL past the last
            break
    data = (_CapData * 2)()
    check(libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset")
