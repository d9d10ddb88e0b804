"""Clean-up after a sandbox child, in its session server: kill and reap everything the child started, verify
that nothing of it is left, and remove what it may leave where no namespace takes it away: System V IPC
objects, and files of the sandbox's uid in the shared temporary folders (Linux; standard library and ctypes
only: imported flat by the fork servers, as `grader.sandbox.runtime.cleanup` by the tests). policy.py decides which
of these a child's mode needs (`clean_ipc`, `clean_files_of_uid`).
"""

import ctypes
import os
import shutil

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .. import procs
    from ..confine.kernel import libc
    from ..confine.policy import msg
except ImportError:
    import procs
    from kernel import libc
    from policy import msg


def _below(keep):
    """Live processes below this one but `keep` (the session's PID namespace init, jail.PidNamespace: the
    orphans it adopted are still below, and are killed)."""
    return [p for p in procs.descendants(os.getpid()) if p != keep]


def kill_and_reap(uid, keep=None):
    """Kill everything below this process but `keep` and (where the child had a uid of its own) everything of
    `uid`; reap every child of this process but `keep`."""
    procs.kill_all(lambda: _below(keep))
    if uid is not None:
        procs.kill_all(lambda: procs.uid_pids(uid))
    while left := [p for p in procs.children(os.getpid()) if p != keep]:
        for pid in left:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def outlived(uid, group_removed, seconds, keep=None):
    """Verify that nothing of the exercise is left (below this process but `keep`; of its uid; in its cgroup),
    giving what was killed `seconds` to go: a sentence for the report (a policy.Note) when something is, else None."""
    left = procs.survivors(lambda: _below(keep) + (procs.uid_pids(uid) if uid is not None else []), seconds)
    if not left and group_removed:
        return None
    return (msg("{n} process(es) of this exercise outlived it and could not be killed", n=len(left)) if left
            else msg("this exercise's cgroup could not be removed: a process of it outlived its end"))


# ---- what no namespace took away ---------------------------------------------------------------------------
IPC_RMID = 0
_SYSV = {"shm": ("shmid", lambda i: libc.shmctl(i, IPC_RMID, None)),
         "sem": ("semid", lambda i: libc.semctl(i, 0, IPC_RMID)),
         "msg": ("msqid", lambda i: libc.msgctl(i, IPC_RMID, None))}


def sysv_ipc(uid, proc="/proc/sysvipc"):
    """{(kind, id)} of the System V IPC objects (shm, sem, msg) that user `uid` owns or created, in
    this process's IPC namespace (a jailed child's own namespace vanishes with it)."""
    out = set()
    for kind, (id_column, _) in _SYSV.items():
        try:
            with open(f"{proc}/{kind}") as f:
                header, *rows = f.read().splitlines()
        except OSError:
            continue
        names = header.split()
        for row in rows:
            values = dict(zip(names, row.split()))
            if str(uid) in (values.get("uid"), values.get("cuid")):
                out.add((kind, int(values[id_column])))
    return out


def remove_sysv_ipc(uid, keep=frozenset()):
    """Remove the System V IPC objects of user `uid` (see sysv_ipc) except those in `keep` (taken
    before the child started, where `uid` is the grader's own). Returns what could not be removed.
    seccomp keeps learner code from making any; this is defence in depth."""
    left = set()
    for kind, ident in sorted(sysv_ipc(uid) - set(keep)):
        if _SYSV[kind][1](ident) < 0 and ctypes.get_errno() not in (22, 43):  # EINVAL, EIDRM: already gone
            left.add((kind, ident))
    return left


TEMP_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_files_of(uid, folders=TEMP_FOLDERS):
    """Remove what user `uid` left directly in the shared temporary folders (files, folders, links,
    sockets: never following a link). Only for a sandbox uid of its own: for the grader's own uid it
    would take the grader's files too. Returns the paths removed."""
    if uid == os.getuid() or uid == 0:
        raise ValueError("remove_files_of is for a sandbox's own uid, not the grader's")
    removed = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed.append(entry.path)
            except OSError:
                continue
    return removed
