"""A memory (and process-count) cgroup per sandbox child, where one can be made (Linux; standard
library only: the fork server imports this file flat, the grader as `grader.sandbox.confine.cgroup`).

Why: RLIMIT_AS limits address space, which memfd, tmpfs and /dev/shm pages and System V shared
memory do not use, and which CUDA reserves by the terabyte (so it cannot be set on a GPU machine).
A cgroup charges the pages themselves (anonymous memory, page cache, tmpfs and shmem, kernel
memory) to the group, whatever maps them; past its limit the kernel reclaims, then kills a process
of the group (OOM) or fails the allocation. The process count limit stops a fork bomb even when
learner code runs under the grader's own user id (where RLIMIT_NPROC would count the grader's
processes too).

Where a group is made:
- **cgroup v2** (preferred): below the nearest folder, from this process's own cgroup upwards,
  whose cgroup.subtree_control enables the memory controller and which this process may write
  (root; or a subtree delegated to this user, e.g. systemd's Delegate=yes). Files: memory.max,
  memory.swap.max = 0, pids.max; memory.events (oom_kill); cgroup.kill.
- **cgroup v1**: in this process's own memory cgroup (and pids cgroup, where that hierarchy is
  mounted), if writable. Files: memory.limit_in_bytes, memory.memsw.limit_in_bytes (when swap is
  accounted), pids.max; memory.oom_control (oom_kill).

Groups are named `posenc-<pid of the process that made them>-<name>`. The first group a process
makes sweeps the groups of processes that are gone (a grader killed before it could clean up):
their processes are killed and the groups removed.
"""

import errno
import os
import time

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .. import procs
    from ..constants import SANDBOX
    from .policy import msg
except ImportError:
    import procs
    from constants import SANDBOX
    from policy import msg

PREFIX = "posenc-"


class Unavailable(OSError):
    """No cgroup can be made here; `note` (a policy.Note, the report's words) says why."""

    def __init__(self, note):
        super().__init__(str(note))
        self.note = note


def _errno_name(exc):
    """'ENOENT': an OSError's errno by its name, which reads the same in every language."""
    return errno.errorcode.get(exc.errno, type(exc).__name__)


# ---- where ---------------------------------------------------------------------------------------
def _read(path):
    with open(path) as f:
        return f.read()


def _write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def _mounts(mountinfo):
    """[(mount point, root inside the hierarchy, fstype, super options)] from /proc/<pid>/mountinfo."""
    out = []
    for line in _read(mountinfo).splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3:
            unescape = lambda s: s.replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")  # noqa: E731
            out.append((unescape(fields[4]), unescape(fields[3]), tail[0], set(tail[2].split(","))))
    return out


def _memberships(cgroup_file):
    """{controller or "" (v2): path} from /proc/<pid>/cgroup."""
    out = {}
    for line in _read(cgroup_file).splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            out[controller] = path
    return out


def _folder(mount, root, path):
    """The folder of cgroup `path` below a mount of its hierarchy whose root is `root`, or None."""
    if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
        return None
    rest = path[len(root):] if root != "/" else path
    return os.path.normpath(mount + "/" + rest.lstrip("/"))


def _upwards(folder, mount):
    out = [folder]
    while folder != mount and len(folder) > len(mount):
        folder = os.path.dirname(folder)
        out.append(folder)
    return out


class Place:
    """Where this process may make groups: kind "v2" (one folder) or "v1" (a memory folder, and a
    pids folder or None)."""

    def __init__(self, kind, memory, pids):
        self.kind, self.memory, self.pids = kind, memory, pids

    def __repr__(self):
        return f"Place({self.kind!r}, {self.memory!r}, {self.pids!r})"


def locate(proc="/proc/self"):
    """The Place for new groups, or raise Unavailable with the reasons for each version."""
    mounts, member = _mounts(f"{proc}/mountinfo"), _memberships(f"{proc}/cgroup")
    reasons = []
    v2 = [(m, r) for m, r, fstype, _ in mounts if fstype == "cgroup2"]
    if v2 and "" in member:
        mount, root = v2[0]
        own = _folder(mount, root, member[""])
        candidates = _upwards(own, mount) if own else []
        for folder in candidates:
            try:
                enabled = _read(f"{folder}/cgroup.subtree_control").split()
            except OSError:
                continue
            if "memory" in enabled and os.access(folder, os.W_OK):
                return Place("v2", folder, folder if "pids" in enabled else None)
        reasons.append(msg("cgroup v2 at {mount}: no folder from {folder} upwards enables the memory controller in "
                           "cgroup.subtree_control and may be written by this user", mount=mount, folder=member[""]))
    else:
        reasons.append(msg("no cgroup v2 hierarchy is mounted"))
    v1 = {}
    for mount, root, fstype, options in mounts:
        for controller in ("memory", "pids"):
            if fstype == "cgroup" and controller in options and controller in member and controller not in v1:
                v1[controller] = _folder(mount, root, member[controller])
    memory = v1.get("memory")
    if memory and os.path.isdir(memory) and os.access(memory, os.W_OK):
        pids = v1.get("pids")
        return Place("v1", memory, pids if pids and os.access(pids, os.W_OK) else None)
    reasons.append(msg("cgroup v1: {folder} may not be written by this user", folder=memory) if memory
                   else msg("cgroup v1: no memory hierarchy is mounted for this process"))
    raise Unavailable(msg("{v2}; {v1}", v2=reasons[0], v1=reasons[1]))


def probe(proc="/proc/self"):
    """(kind or None, reason): what the zygote reports in its capabilities (probe.py); the reason for None is a
    policy.Note, which the report renders in its reader's language."""
    try:
        place = locate(proc)
    except Unavailable as exc:
        return None, exc.note
    except OSError as exc:  # /proc unreadable: the error's name says why (ENOENT, EACCES), in every language
        return None, msg("the cgroup hierarchy could not be read: {error}", error=_errno_name(exc))
    return place.kind, f"{place.kind} below {place.memory}"


# ---- one group -----------------------------------------------------------------------------------
def _make_dir(path):
    """mkdir on cgroupfs (the kernel fills the folder with its control files); tests replace it."""
    os.mkdir(path, 0o755)


def _remove_dir(path):
    """rmdir on cgroupfs (an empty group goes, control files and all); tests replace it."""
    os.rmdir(path)


def _group_folders(folder):
    """`folder` and every group below it, deepest first (rmdir order)."""
    out = []
    for top, dirs, _ in os.walk(folder, topdown=False):
        out.append(top)
    return out


class Cgroup:
    def __init__(self, kind, folders):
        self.kind = kind
        self.folders = folders  # v2: [group]; v1: [memory group] + [pids group]
        self.memory = folders[0]

    def __repr__(self):
        return f"Cgroup({self.kind!r}, {self.folders!r})"

    @classmethod
    def create(cls, name, memory_bytes, pids=None, place=None, *, gone_seconds):
        """A new group `posenc-<our pid>-<name>` limited to `memory_bytes` (no swap) and `pids`
        processes (where the pids controller is there). Raises Unavailable with the reason. `gone_seconds`
        (SandboxTimings): how long a swept or half-made group's processes may take to go."""
        place = place or locate()
        parents = [place.memory] + ([place.pids] if place.kind == "v1" and place.pids and pids else [])
        for parent in parents:
            sweep(parent, gone_seconds)
        base = f"{PREFIX}{os.getpid()}-{name}"
        folders = []
        try:
            for parent in parents:
                folder = os.path.join(parent, base)
                _make_dir(folder)
                folders.append(folder)
            group = cls(place.kind, folders)
            group._limit(memory_bytes, pids if place.pids else None)
        except OSError as exc:
            cls(place.kind, folders).kill_and_remove(gone_seconds)
            raise Unavailable(msg("could not set up the cgroup {group}: {error}", group=base,
                                  error=_errno_name(exc))) from exc
        return group

    def _limit(self, memory_bytes, pids):
        folder = self.memory
        if self.kind == "v2":
            _write(f"{folder}/memory.max", memory_bytes)
            if os.path.exists(f"{folder}/memory.swap.max"):  # absent without swap accounting
                _write(f"{folder}/memory.swap.max", 0)
            if pids is not None:
                _write(f"{folder}/pids.max", pids)
            return
        _write(f"{folder}/memory.limit_in_bytes", memory_bytes)
        if os.path.exists(f"{folder}/memory.memsw.limit_in_bytes"):  # memory + swap: no swap at all
            _write(f"{folder}/memory.memsw.limit_in_bytes", memory_bytes)
        if pids is not None and len(self.folders) > 1:
            _write(f"{self.folders[1]}/pids.max", pids)

    def join(self, pid):
        """Move process `pid` (0: the caller) into the group. A process moves itself right after
        fork, before it allocates: pages charged earlier stay with the group they were charged to."""
        for folder in self.folders:
            _write(f"{folder}/cgroup.procs", pid)

    def pids(self):
        out = set()
        for folder in self.folders:
            for group in _group_folders(folder) if os.path.isdir(folder) else []:
                try:
                    out.update(int(p) for p in _read(f"{group}/cgroup.procs").split())
                except (OSError, ValueError):
                    continue
        return sorted(out)

    def _counter(self, name, key):
        try:
            for line in _read(f"{self.memory}/{name}").splitlines():
                k, _, v = line.partition(" ")
                if k == key:
                    return int(v)
        except (OSError, ValueError):
            pass
        return 0

    def oom_killed(self):
        """Did the kernel kill a process of this group for want of memory?"""
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        return self._counter(name, "oom_kill") > 0

    def kill_and_remove(self, seconds):
        """SIGKILL every process in the group (and below it), then remove the folders, giving them `seconds` to
        go. Robust when the group is already gone. True when nothing is left."""
        if self.kind == "v2" and os.path.exists(f"{self.memory}/cgroup.kill"):
            try:
                _write(f"{self.memory}/cgroup.kill", 1)
            except OSError:
                pass
        procs.kill_all(self.pids)
        deadline = time.monotonic() + seconds
        left = []
        for folder in self.folders:
            for group in _group_folders(folder) if os.path.isdir(folder) else []:
                while True:
                    try:
                        _remove_dir(group)
                        break
                    except FileNotFoundError:
                        break
                    except OSError:  # EBUSY: a killed process is still on its way out
                        if time.monotonic() > deadline:
                            left.append(group)
                            break
                        procs.kill_all(self.pids)
                        time.sleep(SANDBOX.poll_seconds)
        return not left


_SWEPT = set()


def sweep(parent, seconds):
    """Once per process and parent folder: remove groups whose maker (the pid in the name) is gone (giving their
    processes `seconds` to go)."""
    if parent in _SWEPT:
        return
    _SWEPT.add(parent)
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        owner = name[len(PREFIX):].split("-", 1)[0]
        if not name.startswith(PREFIX) or not owner.isdigit() or procs.alive(int(owner)):
            continue
        folder = os.path.join(parent, name)
        if os.path.isdir(folder):
            kind = "v2" if os.path.exists(os.path.join(folder, "cgroup.type")) else "v1"
            Cgroup(kind, [folder]).kill_and_remove(seconds)

