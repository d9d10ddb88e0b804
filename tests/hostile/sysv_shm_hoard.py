"""At import: create System V shared memory segments, fill them, and leave them (with a semaphore set
and a message queue) behind: they outlive the process until IPC_RMID or the end of their IPC
namespace. (Found against the non-root sandbox: 768 MB left behind.) Stopped by seccomp (EPERM), the
jail's own IPC namespace, and the clean-up after each child (confine.remove_sysv_ipc)."""
import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT = 0, 0o1000


def _hoard(segments=3, size=16 << 20):
    made, refused = [], []
    for _ in range(segments):
        shmid = _libc.shmget(IPC_PRIVATE, ctypes.c_size_t(size), IPC_CREAT | 0o600)
        if shmid < 0:
            refused.append(os.strerror(ctypes.get_errno()))
            continue
        made.append(f"shm {shmid}")
        address = _libc.shmat(shmid, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(address, 1, size)
            _libc.shmdt(ctypes.c_void_p(address))
    for kind, ident in (("sem", _libc.semget(IPC_PRIVATE, 4, IPC_CREAT | 0o600)),
                        ("msg", _libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600))):
        if ident >= 0:
            made.append(f"{kind} {ident}")
        else:
            refused.append(os.strerror(ctypes.get_errno()))
    return made, refused


_made, _refused = _hoard()


def shift_matrix(k, d_model, base=10000.0):
    if _made:
        raise RuntimeError("HOARDED " + ", ".join(_made))
    raise RuntimeError("BLOCKED " + ", ".join(sorted(set(_refused))))
