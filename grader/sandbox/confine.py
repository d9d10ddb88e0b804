"""Confine one sandbox child before it runs learner code (Linux; standard library and ctypes only).

Layers, each used where the machine allows it (the fork server reports which in its hello line):

- **jail** (root, mount namespaces): the child gets private mount, network, IPC and (where the
  kernel allows) PID namespaces and chroots into a tmpfs that holds only read-only binds of the
  system and Python folders, a private /tmp and /dev/shm, a /proc of its own (the namespace's
  processes only) and a size-limited tmpfs working folder. The grader's repository
  (the reference, the hidden checks, the solutions), other students' files, results folders:
  none of it exists in the child's view. No network (an empty network namespace).
- **user** (root): the child drops to a user id of its own (one per sandbox, unused by anything
  else), with no groups and no new privileges. It cannot signal the grader, the fork server or
  another submission's processes, and RLIMIT_NPROC caps its processes.
- **Landlock** (Linux 5.13+, root or not): reads allowed only below the system and Python folders
  (and of the machine's /proc only the child's own folder), writes only in the working folder, no
  program execution, no TCP (ABI 4+), no ioctl on a device it may only read (ABI 5+: no terminal),
  no signals to processes outside the sandbox (ABI 6+).
- **rlimits** always: CPU time, address space, file size, open files, no core dumps.

Added for the weaker modes (see policy.py for which mode gets what):

- **user-namespace jail** (not root, where the kernel allows unprivileged user namespaces): the
  same jail, built inside a new user namespace mapped to the grader's own uid; after the chroot
  every capability is dropped and no new privileges may be gained.
- **seccomp** (seccomp.py): chmod/chown/utime, sockets, System V IPC, memfd, ptrace, namespaces...
  fail with EPERM; signals, limits, priority and scheduling only of the child itself; no terminal
  ioctl (ENOTTY).
- **cgroup** (cgroup.py): memory (memfd, tmpfs, shared memory included) and process count.
- clean-up helpers for what a child can leave behind where no namespace takes it away: System V IPC
  objects (`remove_sysv_ipc`), files of the sandbox's uid in the shared temporary folders
  (`remove_files_of`), a working folder made hard to remove (`remove_tree`).

`apply(policy, cgroup)` carries out a policy.Policy in a freshly forked child.
"""

import ctypes
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from . import cgroup, procs, seccomp
except ImportError:
    import procs

    try:
        import cgroup
        import seccomp
    except ImportError:  # a runtime folder without them: apply() and capabilities() fail loudly if used
        cgroup = seccomp = None

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x40000000, 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38

SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc")
# Entries of /etc that Landlock never lets a child read, should it run as uid 0 (policy.py: only
# with POSENC_SANDBOX_MODE=user), where owner permissions would let it: password hashes, sudo rules,
# host keys, TLS private keys, stored secrets. Nothing a grading run needs.
ETC_WITHHELD = ("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl", "security",
                "krb5.keytab", "credstore", "credstore.encrypted", "wireguard", "NetworkManager", "ipsec.secrets",
                "ppp", "openvpn", "libvirt", ".pwd.lock")

# Entries of /proc that list or describe other processes (besides the numbered folders), or the kernel's memory
PROC_WITHHELD = ("sched_debug", "timer_list", "kcore", "kmsg", "kpagecgroup", "kpagecount", "kpageflags",
                 "sysrq-trigger", "locks")

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


def readable_paths(protect, python=None):
    """System and Python folders (`python`: the zygote's, as its hello reports them; default: this
    interpreter's), minus any that would contain a protected path (a folder that holds the reference is
    never exposed, even if Python's path points into it)."""
    out = []
    for path in list(SYSTEM_PATHS) + list(python_paths() if python is None else python):
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


def can_userns_jail(readable=None):
    """Try, in a throw-away child, everything `build_jail(..., userns=True)` does: a user namespace
    with mount, network and IPC namespaces, uid and gid maps, the tmpfs, the read-only binds of
    `readable` (default: the system and Python folders), the chroot, dropping all capabilities."""
    readable = readable_paths([]) if readable is None else readable
    top = tempfile.mkdtemp(prefix="posenc-userns-")
    try:
        for sub in ("jail", "stub"):
            os.mkdir(os.path.join(top, sub))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                build_jail(top + "/jail", readable, top + "/stub", top + "/work", os.getuid(), os.getgid(), 1 << 20,
                           userns=True)
                drop_capabilities()
                prctl(PR_SET_NO_NEW_PRIVS, 1)
                code = 0 if os.path.isdir(top + "/work") and not os.path.exists(top + "/jail") else 1
            except BaseException:
                pass
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    finally:
        shutil.rmtree(top, ignore_errors=True)


def unreadable_by(uid, paths):
    """The paths of `paths` that user `uid`, with no groups, could not read (list and enter). As root
    this is tried for real in a throw-away child that takes that uid (ACLs and all); otherwise from
    the "other" permission bits along each path."""
    if os.geteuid() != 0:
        return [p for p in paths if not other_can_read(p)]
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            drop_to(uid, uid)
            bad = [p for p in paths if not os.access(p, os.R_OK | os.X_OK if os.path.isdir(p) else os.R_OK)]
            os.write(write_fd, "\0".join(["checked"] + bad).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read().decode().split("\0")
    os.waitpid(pid, 0)
    return data[1:] if data[0] == "checked" else list(paths)


def python_readable_by(uid):
    """Can `uid` (no groups) read every folder Python imports from? policy.py: without a jail, root
    drops learner code to the sandbox's uid only when this holds; it never runs it as uid 0 by default."""
    return not unreadable_by(uid, python_paths())


def capabilities(forced, uid_base):
    """What this machine offers, as the fields of policy.Caps (the fork server's hello). `uid_base`
    (Settings.uid_base): any uid of no account (readability of Python does not depend on which)."""
    root = os.geteuid() == 0
    kind, reason = cgroup.probe()
    jail, userns_jail = root and can_jail(), not root and can_userns_jail()
    return {"root": root, "jail": jail, "userns_jail": userns_jail,
            "pidns": (jail or userns_jail) and can_pid_namespace(userns=not root),
            "landlock": landlock_abi(), "seccomp": seccomp.available(), "cgroup": kind,
            "cgroup_reason": "" if kind else reason, "python_readable": root and python_readable_by(uid_base),
            "forced": forced}


# ---- the jail --------------------------------------------------------------------------------------
def _bind(source, target, readonly=True, devices=False):
    os.makedirs(target, exist_ok=True)
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        # keep the flags the source is mounted with: in a user namespace they are locked, and a
        # remount that would clear one (noexec on /dev, say) is refused
        kept = os.statvfs(source).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | (0 if devices else MS_NODEV) | kept)


def _tmpfs(target, options):
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def _enter_user_namespace(extra=0):
    """A new user namespace in which this process keeps its uid and gid (the only mapping an
    unprivileged process may write) and holds every capability, until it drops them. `extra`: more
    namespaces (CLONE_NEWPID), owned by it."""
    uid, gid = os.getuid(), os.getgid()
    prctl(PR_SET_DUMPABLE, 1)  # /proc/self/{setgroups,uid_map,gid_map} belong to us only when dumpable
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | extra), "unshare(user namespace)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _status_after(relay_fd, child):
    """Wait for `child`, reaping whatever else ends meanwhile (a namespace's init adopts every orphan);
    its wait status, also written to `relay_fd` when given."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return None
        if done == child:
            if relay_fd is not None:
                os.write(relay_fd, str(status).encode())
            return status


def _end_as(status):
    """End this process as `status` (a wait status) says its child ended: the same exit code, or the
    same signal (no core dump), so that whoever waits for this process learns what the child did."""
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _quiet(keep):
    """A relay holds nothing: no file descriptor but `keep`, not dumpable, no capabilities; it dies with
    its parent."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.closerange(0, keep)
    os.closerange(keep + 1, 1 << 16)
    prctl(PR_SET_DUMPABLE, 0)
    drop_capabilities()


def enter_pid_namespace():
    """Call after unshare(CLONE_NEWPID). Three processes come out of this one, and only the last returns:

    - this process stays in the fork server's namespace, waits for the namespace's init and ends as the
      child it relays ended (the fork server waits for it, and learns the exit code or signal);
    - the namespace's init (pid 1) waits for the child, reaps every orphan meanwhile, and passes the
      child's wait status on; when it exits the kernel kills every process left in the namespace;
    - the child (pid 2, a process group of its own) returns, to run learner code. It is not pid 1, which
      ignores its own signals (SIGXCPU, os.kill(os.getpid(), ...)) where a process should not."""
    read_fd, write_fd = os.pipe()
    init = os.fork()
    if init:
        try:
            _quiet(read_fd)
            status = _status_after(None, init)
            with os.fdopen(read_fd, "rb") as f:
                relayed = f.read()
            _end_as(int(relayed) if relayed else status)
        finally:
            os._exit(1)
    os.close(read_fd)
    child = os.fork()
    if child:
        try:
            _quiet(write_fd)
            _status_after(write_fd, child)
        finally:
            os._exit(0)
    os.close(write_fd)
    os.setpgid(0, 0)


def can_pid_namespace(userns):
    """Try, in a throw-away child: a PID namespace (in a user namespace when `userns`) and a /proc of its
    own that lists only its processes."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if userns:
                _enter_user_namespace(CLONE_NEWPID)
            else:
                _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID), "unshare")
            enter_pid_namespace()
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            code = 0 if sorted(n for n in os.listdir("/proc") if n.isdigit()) == ["1", "2"] else 1
        except BaseException:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def build_jail(jail, readable, stub, workdir, uid, gid, work_bytes, userns=False, pidns=False):
    """Private namespaces; chroot into `jail` holding only `readable` (read-only), the stub package,
    /dev, /proc, /sys, a private /tmp and /dev/shm, and a tmpfs `workdir` owned by uid:gid.
    userns: not root; the namespaces come with a user namespace of their own (the caller then drops
    its capabilities in it). pidns: a PID namespace too (enter_pid_namespace: this function returns in
    a grandchild, pid 2 of it) with a /proc of its own, which lists only the namespace's processes;
    without it /proc is the machine's (confine.landlock still hides other processes' folders)."""
    extra = CLONE_NEWPID if pidns else 0
    if userns:
        _enter_user_namespace(extra)
    else:
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | extra), "unshare")
    if pidns:
        enter_pid_namespace()
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
    if pidns:
        os.makedirs(jail + "/proc", exist_ok=True)
        _mount("proc", jail + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    else:
        _bind("/proc", jail + "/proc", readonly=False)
    _bind("/sys", jail + "/sys")
    _bind(stub, jail + stub)
    _tmpfs(jail + workdir, f"size={work_bytes},mode=700,uid={uid},gid={gid}")
    _hide_skeleton(jail, bound + [stub, workdir], keep=("/", "/tmp", "/dev"))
    os.chroot(jail)
    os.chdir("/")


def _hide_skeleton(jail, targets, keep):
    """The folders made only to hold the mount points (the repository's folder around a virtual
    environment, the sandbox's own folder) may be passed through but not listed: mode 0111, even for
    their owner (a user namespace's). Mount points themselves and what lies in them are left alone."""
    skeleton = set()
    for target in targets:
        parent = os.path.dirname(target.rstrip("/"))
        while parent not in ("", "/") and parent not in keep:
            skeleton.add(parent)
            parent = os.path.dirname(parent)
    for folder in sorted(skeleton):
        if any(_within(folder, t) for t in targets) or not os.path.isdir(jail + folder):
            continue
        os.chmod(jail + folder, 0o111)


# ---- Landlock --------------------------------------------------------------------------------------
_FS = {name: 1 << i for i, name in enumerate(
    ("execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file", "make_char", "make_dir",
     "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer", "truncate", "ioctl_dev"))}
_READ_DIR = _FS["read_file"] | _FS["read_dir"]
_WRITE_DIR = (_READ_DIR | _FS["write_file"] | _FS["remove_dir"] | _FS["remove_file"] | _FS["make_dir"]
              | _FS["make_reg"] | _FS["make_sym"] | _FS["make_fifo"] | _FS["make_sock"] | _FS["refer"]
              | _FS["truncate"] | _FS["ioctl_dev"])  # ioctl on devices: /dev/null, and a GPU's for CUDA
_FILE_RIGHTS = _FS["execute"] | _FS["write_file"] | _FS["read_file"] | _FS["truncate"] | _FS["ioctl_dev"]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _withhold_etc(paths):
    """/etc as its entries but ETC_WITHHELD (a rule on a folder covers all below it)."""
    out = []
    for path in paths:
        if os.path.realpath(path) == "/etc":
            out += [os.path.join(path, n) for n in sorted(os.listdir(path)) if n not in ETC_WITHHELD]
        else:
            out.append(path)
    return out


def _own_proc(paths):
    """/proc as this process's own folder (/proc/<pid>, which /proc/self names) and the machine-wide
    files (cpuinfo, meminfo, ...), never another process's folder: no command line of the grader or of
    another submission, no list of the machine's processes. (A process this one forks cannot read its
    own /proc/<pid>: it is not below the rule.)"""
    out = []
    for path in paths:
        if os.path.realpath(path) == "/proc":
            out += [os.path.join(path, n) for n in sorted(os.listdir(path))
                    if not n.isdigit() and n not in PROC_WITHHELD]
        else:
            out.append(path)
    return out


def landlock(read, write, abi, own_proc=True):
    """Restrict this process (and everything it starts) to reading `read` (/etc without its
    secrets: ETC_WITHHELD; with `own_proc`, /proc without other processes' folders) and writing
    `write`; nothing may be executed. Returns the ABI used (0 when Landlock is unavailable)."""
    if abi < 1:
        return 0
    read = _withhold_etc(read)
    read = _own_proc(read) if own_proc else read
    # refer from ABI 2, truncate from 3, ioctl on devices from 5: none on a device it may only read (a
    # terminal: no stty, no TIOCSTI, even where seccomp is missing)
    handled = (1 << (13 if abi == 1 else 14 if abi == 2 else 15 if abi < 5 else 16)) - 1
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


def tasks_of(uid):
    """Threads and processes of real user `uid` (what RLIMIT_NPROC counts)."""
    count = 0
    for pid in procs.uid_pids(uid):
        try:
            count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


# ---- after the child: what no namespace took away ------------------------------------------------------
IPC_RMID = 0
_SYSV = {"shm": ("shmid", lambda i: _libc.shmctl(i, IPC_RMID, None)),
         "sem": ("semid", lambda i: _libc.semctl(i, 0, IPC_RMID)),
         "msg": ("msqid", lambda i: _libc.msgctl(i, IPC_RMID, None))}


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


def remove_tree(path):
    """Remove a working folder even where its owner took away its own permissions on a subfolder
    (possible where seccomp is missing). Call it once the child's processes are gone. True when it is gone."""
    todo = [path]
    while todo:  # give every folder back its owner's permissions first, top down, never through a link
        folder = todo.pop()
        try:
            if os.path.islink(folder) or not os.path.isdir(folder):
                continue
            os.chmod(folder, 0o700)
            todo += [e.path for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    shutil.rmtree(path, ignore_errors=True)
    return not os.path.lexists(path)


# ---- carrying out a policy ----------------------------------------------------------------------------
def detach(*keep):
    """First thing in a freshly forked child: a session of its own (no controlling terminal, and none it
    could take: setsid), stdin, stdout and stderr on /dev/null, every other file descriptor closed but
    those in `keep` (the result pipe, the request pipe). No terminal is inherited or reachable through a
    descriptor."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def apply(policy, cgroup=None):
    """Confine this freshly forked, single-threaded child as `policy` (policy.Policy) says, before the
    first learner statement. The order matters: join the cgroup while we may still write to it;
    build the jail while we hold the capabilities for it; change uid (which clears the parent-death
    signal, so that is set after); Landlock and rlimits; seccomp last, since it blocks mount, chroot
    and unshare, which the jail needed. The caller has already closed file descriptors, set the
    process group and the signal handlers (server.py)."""
    if cgroup is not None:
        cgroup.join(0)
    owner = (policy.uid, policy.gid) if policy.uid is not None else (os.getuid(), os.getgid())
    if policy.jail:
        build_jail(policy.jail_dir, list(policy.binds), policy.stub, policy.workdir, owner[0], owner[1],
                   policy.work_bytes, userns=policy.jail == "user", pidns=policy.pidns)
    os.chdir(policy.workdir)
    if policy.uid is not None:
        drop_to(policy.uid, policy.gid)
    else:  # in a user namespace: its capabilities; as root (root-user): root's; otherwise none to drop
        drop_capabilities()
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    nproc = policy.nproc
    if nproc is not None and policy.nproc_shared:  # the grader's own uid: its processes count too (counted
        nproc += tasks_of(os.getuid())  # before Landlock, which hides other processes' /proc folders)
    # a PID namespace's /proc shows the exercise's processes only: all of it may be read (a process learner code
    # forks, or a probe, reads its own /proc/self); the machine's /proc only the child's own folder
    landlock(list(policy.readable), list(policy.writable), policy.landlock, own_proc=not policy.pidns)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    limit(policy.cpu_seconds, (policy.memory_mb or 0) << 20, policy.file_bytes, nproc)
    if policy.seccomp:
        seccomp.install()
