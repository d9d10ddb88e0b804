"""Confine one sandbox child before it runs learner code (Linux; standard library and ctypes only).

Layers, each used where the machine allows it (the fork server reports which in its hello line):

- **jail** (root, mount namespaces): the child gets private mount, network and IPC namespaces and
  chroots into a tmpfs that holds only read-only binds of the system and Python folders, a
  private /tmp and /dev/shm, and a size-limited tmpfs working folder. The grader's repository
  (the reference, the hidden checks, the solutions), other students' files, results folders:
  none of it exists in the child's view. No network (an empty network namespace).
- **user** (root): the child drops to a user id of its own (one per sandbox, unused by anything
  else), with no groups and no new privileges. It cannot signal the grader, the fork server or
  another submission's processes, and RLIMIT_NPROC caps its processes.
- **Landlock** (Linux 5.13+, root or not): reads allowed only below the system and Python folders,
  writes only in the working folder, no program execution, no TCP (ABI 4+), no signals to
  processes outside the sandbox (ABI 6+).
- **rlimits** always: CPU time, address space, file size, open files, no core dumps.
"""

import ctypes
import os
import resource
import stat
import sys

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38

SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(ret, what):
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def prctl(option, value):
    _check(_libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
           f"prctl({option})")


def _enc(text):
    return text.encode() if text is not None else None


def _mount(source, target, fstype, flags, data=None):
    enc = _enc
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def _within(path, parent):
    return path == parent or path.startswith(parent.rstrip("/") + "/")


# ---- what the child may read ------------------------------------------------------------------
def python_paths():
    """The interpreter's import folders (the server runs with -I: no current folder, no user site)."""
    here = os.path.dirname(os.path.abspath(__file__))  # the runtime folder: server and probes, not for learners
    out = []
    for entry in sys.path:
        if entry and os.path.isdir(entry) and os.path.abspath(entry) != here:
            out.append(os.path.abspath(entry))
    return out


def readable_paths(protect):
    """System and Python folders, minus any that would contain a protected path (a folder that holds
    the reference is never exposed, even if Python's path points into it)."""
    out = []
    for path in list(SYSTEM_PATHS) + python_paths():
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue
        if any(_within(os.path.realpath(p), real) for p in protect):
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


# ---- capabilities, probed once by the fork server ---------------------------------------------------
def landlock_abi():
    try:
        abi = _libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    except Exception:
        return 0
    return max(int(abi), 0)


def can_jail():
    """Try mount + network namespaces in a throw-away child."""
    if os.geteuid() != 0:
        return False
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            code = 0
        except BaseException:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# ---- the jail --------------------------------------------------------------------------------------
def _bind(source, target, readonly=True, devices=False):
    os.makedirs(target, exist_ok=True)
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | (0 if devices else MS_NODEV))


def _tmpfs(target, options):
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def build_jail(jail, readable, stub, workdir, uid, gid, work_bytes):
    """Private namespaces; chroot into `jail` holding only `readable` (read-only), the stub package,
    /dev, /proc, /sys, a private /tmp and /dev/shm, and a tmpfs `workdir` owned by uid:gid."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _tmpfs(jail, "size=4m,mode=755")
    # the private /tmp first: Python folders, the stub and the working folder may lie below /tmp (a
    # virtual environment in /tmp, say) and are bound on top of it, not hidden by it
    _tmpfs(jail + "/tmp", "size=64m,mode=1777")
    bound = []
    for path in readable:
        if os.path.islink(path) and path in SYSTEM_PATHS:  # /lib -> usr/lib on merged-/usr systems
            os.symlink(os.readlink(path), jail + path)
            continue
        real = os.path.realpath(path)
        if not any(_within(real, b) for b in bound):
            _bind(real, jail + real)
            bound.append(real)
        if real != path and not os.path.lexists(jail + path):
            os.makedirs(os.path.dirname(jail + path), exist_ok=True)
            os.symlink(real, jail + path)
    _bind("/dev", jail + "/dev", devices=True)
    _tmpfs(jail + "/dev/shm", "size=64m,mode=1777")
    _bind("/proc", jail + "/proc", readonly=False)
    _bind("/sys", jail + "/sys")
    _bind(stub, jail + stub)
    _tmpfs(jail + workdir, f"size={work_bytes},mode=700,uid={uid},gid={gid}")
    os.chroot(jail)
    os.chdir("/")


# ---- Landlock --------------------------------------------------------------------------------------
_FS = {name: 1 << i for i, name in enumerate(
    ("execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file", "make_char", "make_dir",
     "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer", "truncate"))}
_READ_DIR = _FS["read_file"] | _FS["read_dir"]
_WRITE_DIR = (_READ_DIR | _FS["write_file"] | _FS["remove_dir"] | _FS["remove_file"] | _FS["make_dir"]
              | _FS["make_reg"] | _FS["make_sym"] | _FS["make_fifo"] | _FS["make_sock"] | _FS["refer"]
              | _FS["truncate"])
_FILE_RIGHTS = _FS["execute"] | _FS["write_file"] | _FS["read_file"] | _FS["truncate"]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock(read, write, abi):
    """Restrict this process (and everything it starts) to reading `read` and writing `write`;
    nothing may be executed. Returns the ABI used (0 when Landlock is unavailable)."""
    if abi < 1:
        return 0
    handled = (1 << (13 if abi == 1 else 14 if abi == 2 else 15)) - 1  # refer from ABI 2, truncate from 3
    attr = _RulesetAttr(handled, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)  # TCP bind+connect; signal+unix scope
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _check(_libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        for paths, rights in ((read, _READ_DIR), (write, _WRITE_DIR)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    allowed = rights & handled
                    if not stat.S_ISDIR(os.fstat(fd).st_mode):
                        allowed &= _FILE_RIGHTS
                    rule = _PathBeneath(allowed, fd)
                    _check(_libc.syscall(445, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule),
                                         ctypes.c_uint32(0)), f"landlock_add_rule {path}")
                finally:
                    os.close(fd)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        _check(_libc.syscall(446, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


# ---- user and limits -------------------------------------------------------------------------------
def drop_to(uid, gid):
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("could not drop privileges")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities():
    """For a child that must stay uid 0 (no uid of its own is usable): no capabilities at all, so
    root is an ordinary user with Landlock around it (no module loading, no raw sockets, no kill)."""
    for cap in range(64):
        if _libc.prctl(24, ctypes.c_ulong(cap), 0, 0, 0) < 0:  # PR_CAPBSET_DROP; EINVAL past the last
            break
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset")


def limit(cpu_seconds, memory_bytes, file_bytes, nproc=None):
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    if memory_bytes:
        # address space: what is mapped now (torch is loaded) plus the allowance
        with open("/proc/self/statm") as f:
            vm_bytes = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (vm_bytes + memory_bytes, vm_bytes + memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
