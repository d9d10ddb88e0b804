"""The jail: a private view of the machine for one sandbox child (Linux; standard library and ctypes only).

`build_jail` gives the calling process private mount, network and IPC namespaces (inside a user namespace
of its own when it is not root; a PID namespace too where the kernel allows: as root, the one its session server
forked it into, `PidNamespace`) and chroots it into a tmpfs
that holds only read-only binds of the system and Python folders (the grader's secret covered where one of
them holds it), a private /tmp and /dev/shm, a /dev with a few devices and no terminal, /sys, a /proc (its
own namespace's where there is one), the stub package and a size-limited tmpfs working folder. The grader's
repository, other students' files and the results folders do not exist in that view. confine.apply calls it;
probe.py tries it once in a throw-away child.
"""

import os
import resource
import signal

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .. import procs
    from ..paths import SYSTEM_PATHS, within
    from . import kernel
except ImportError:
    import kernel
    import procs
    from paths import SYSTEM_PATHS, within


def _mount_point(source, target):
    """An empty folder, or an empty file where `source` is no folder (a device, the grader's secret)."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    elif not os.path.lexists(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0))


def _bind(source, target, readonly=True, devices=False):
    _mount_point(source, target)
    kernel.mount(source, target, None, kernel.MS_BIND | kernel.MS_REC)
    if readonly:
        # keep the flags the source is mounted with: in a user namespace they are locked, and a
        # remount that would clear one (noexec on /dev, say) is refused
        kept = os.statvfs(source).f_flag & (kernel.MS_NOSUID | kernel.MS_NODEV | kernel.MS_NOEXEC)
        flags = kernel.MS_BIND | kernel.MS_REMOUNT | kernel.MS_RDONLY | kernel.MS_NOSUID | kept
        kernel.mount(None, target, None, flags | (0 if devices else kernel.MS_NODEV))


def _tmpfs(target, options):
    os.makedirs(target, exist_ok=True)
    kernel.mount("tmpfs", target, "tmpfs", kernel.MS_NOSUID | kernel.MS_NODEV, options)


def enter_user_namespace(extra=0):
    """A new user namespace in which this process keeps its uid and gid (the only mapping an
    unprivileged process may write) and holds every capability, until it drops them. `extra`: more
    namespaces (CLONE_NEWPID), owned by it."""
    uid, gid = os.getuid(), os.getgid()
    kernel.prctl(kernel.PR_SET_DUMPABLE, 1)  # /proc/self/{setgroups,uid_map,gid_map} belong to us only when dumpable
    kernel.unshare(kernel.CLONE_NEWUSER | kernel.CLONE_NEWNS | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | extra,
                   "unshare(user namespace)")
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
    """A relay or an init holds nothing: no file descriptor but `keep` (-1: none), not dumpable, no capabilities;
    it dies with its parent."""
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
    os.closerange(0, keep)
    os.closerange(keep + 1, 1 << 16)
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)
    kernel.drop_capabilities()


def enter_pid_namespace():
    """Call after unshare(CLONE_NEWUSER | CLONE_NEWPID) (a user namespace's jail: as root, the session server makes
    the PID namespace, `PidNamespace`). Three processes come out of this one, and only the last returns:

    - this process stays in its parent's namespace, waits for the namespace's init and ends as the
      child it relays ended (its parent, the session server, waits for it, and learns the exit code or signal);
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


class PidNamespace:
    """A session server's PID namespace, as root (session_server.py): made before the fork of the first child that
    the policy gives one (unshare(CLONE_NEWPID) changes only where this process's later children live), its init
    (`namespace_init`) forked first, as pid 1; every child after is forked into it, and lives there as pid 2, 3, ...
    The clean-up between runs spares the init (cleanup.kill_and_reap's `keep`) and kills the rest; whatever kills
    the init (the grader ending the session's processes after a run ran out of time, the session's end) makes the
    kernel kill every process left in the namespace, and the next run gets a fresh one. One child at a time: one
    run's processes never see another's."""

    def __init__(self):
        self.init = None

    def enter(self):
        """Before forking a child: make the namespace where there is none, or its init has died."""
        if self.init is not None and not procs.alive(self.init):  # killed: a zombie until reaped here
            try:
                os.waitpid(self.init, os.WNOHANG)
            except ChildProcessError:
                pass
            self.init = None
        if self.init is not None:
            return
        # a fresh namespace only below this process's own: where its children lived until now is reset first
        with open("/proc/self/ns/pid") as own:
            kernel.setns(own.fileno(), kernel.CLONE_NEWPID, "setns(own PID namespace)")
        kernel.unshare(kernel.CLONE_NEWPID, "unshare(PID namespace)")
        pid = os.fork()
        if pid == 0:
            try:
                namespace_init()
            finally:
                os._exit(1)
        self.init = pid

    def reaped(self, pid):
        """`pid` was reaped: when it was the init, the namespace is gone."""
        if pid == self.init:
            self.init = None


def namespace_init():
    """The init (pid 1) of a session server's PID namespace, as root: the session server made the namespace
    (unshare(CLONE_NEWPID)) and forked this process first, then forks each child into the namespace (pid 2, 3, ...:
    never pid 1, which ignores its own signals). It holds nothing (`_quiet`), reaps every orphan of the namespace as
    it ends, and never returns: the session server kills it when the session ends, and the kernel then kills every
    process left in the namespace; it dies with the session server. A child sees it in its /proc as pid 1, named
    `posenc-init` (not its parent's name: the session server's stands for the grader's), with the command line
    the child's own shows (both are the session server's)."""
    kernel.set_name("posenc-init")
    signal.set_wakeup_fd(-1)  # the session server's: it closes with every other descriptor
    _quiet(-1)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # pending until sigwaitinfo takes it: none is missed
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        signal.sigwaitinfo([signal.SIGCHLD])


def _dev(jail, devices):
    """The jail's /dev: a tmpfs holding only `devices` (bound from the machine's /dev), the links to this
    process's file descriptors and a private /dev/shm. No terminal: no /dev/tty, /dev/pts, /dev/ptmx,
    /dev/console."""
    _tmpfs(jail + "/dev", "size=64k,mode=755")
    for device in devices:
        if os.path.exists(device):
            _bind(device, jail + device, devices=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{jail}/dev/{name}")
    _tmpfs(jail + "/dev/shm", "size=64m,mode=1777")


def _withhold(jail, withhold):
    """Cover each of `withhold` that a bind shows in the jail (the grader's secret below a system or Python
    folder) with an empty folder or file that nobody may read (mode 0), bound read-only over it."""
    blank = jail + "/.withheld"
    for path in withhold:
        target = jail + os.path.realpath(path)
        if not os.path.lexists(target):
            continue
        if os.path.isdir(target):
            _tmpfs(target, "size=4k,mode=0")
            kernel.mount(None, target, None, kernel.MS_REMOUNT | kernel.MS_RDONLY | kernel.MS_NOSUID
                         | kernel.MS_NODEV)
            continue
        _mount_point(blank, blank)
        _bind(blank, target)
        os.unlink(blank)


def build_jail(jail, readable, stub, workdir, uid, gid, work_bytes, userns=False, pidns=False, devices=(),
               withhold=()):
    """Private namespaces; chroot into `jail` holding only `readable` (read-only) but `withhold` (covered), the
    stub package, `devices` in a /dev of its own, /proc, /sys, a private /tmp and /dev/shm, and a tmpfs
    `workdir` owned by uid:gid.
    userns: not root; the namespaces come with a user namespace of their own (the caller then drops
    its capabilities in it). pidns: a PID namespace, with a /proc of its own, which lists only the namespace's
    processes; in a user namespace made here (enter_pid_namespace: this function returns in a grandchild, pid 2
    of it), as root the session's, which this process was forked into (`PidNamespace`: refused when it was
    not). Without it /proc is the machine's (landlock.py still hides other processes' folders)."""
    if userns:
        enter_user_namespace(kernel.CLONE_NEWPID if pidns else 0)
        if pidns:
            enter_pid_namespace()
    else:
        if pidns and os.getppid() != 0:  # 0: the parent lives outside this process's PID namespace
            raise OSError("this child was not forked into a PID namespace of its own")
        kernel.unshare(kernel.CLONE_NEWNS | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC)
    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
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
        if not any(within(real, b) for b in bound):
            _bind(real, jail + real)
            bound.append(real)
        if real != path and not os.path.lexists(jail + path):
            os.makedirs(os.path.dirname(jail + path), exist_ok=True)
            os.symlink(real, jail + path)
    _dev(jail, devices)
    if pidns:
        os.makedirs(jail + "/proc", exist_ok=True)
        kernel.mount("proc", jail + "/proc", "proc", kernel.MS_NOSUID | kernel.MS_NODEV | kernel.MS_NOEXEC)
    else:
        _bind("/proc", jail + "/proc", readonly=False)
    _bind("/sys", jail + "/sys")
    _bind(stub, jail + stub)
    _tmpfs(jail + workdir, f"size={work_bytes},mode=700,uid={uid},gid={gid}")
    _withhold(jail, withhold)
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
        if any(within(folder, t) for t in targets) or not os.path.isdir(jail + folder):
            continue
        os.chmod(jail + folder, 0o111)
