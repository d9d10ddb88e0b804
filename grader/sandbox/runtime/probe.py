"""What this machine lets the sandbox do, probed once by the zygote for its hello line (Linux; standard
library and ctypes only: imported flat by the fork servers, as `grader.sandbox.runtime.probe` by the grader).

Each mechanism is tried for real in a throw-away child (`in_child`): a jail (mount, network and IPC
namespaces), the same inside a user namespace, a PID namespace with a /proc of its own, seccomp, and which
folders a user id of no account can read. Landlock's ABI and the cgroup's place are read, not tried.
`capabilities()` returns the fields of policy.Caps.
"""

import json
import os
import shutil
import signal
import tempfile

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from ..confine import cgroup, jail, kernel, landlock, seccomp
    from ..confine.confine import drop_to
    from ..constants import SANDBOX
    from ..paths import DEVICES, other_can_read, python_paths, readable_paths
except ImportError:
    import cgroup
    import jail
    import kernel
    import landlock
    import seccomp
    from confine import drop_to
    from constants import SANDBOX
    from paths import DEVICES, other_can_read, python_paths, readable_paths


def in_child(test):
    """Fork a throw-away child that calls `test()`: its return value (JSON), or None when it raised or the
    child did not exit with status 0. Whatever the test changes (namespaces, a uid, a seccomp filter) stays
    in that child."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            data = memoryview(json.dumps(test()).encode())
            while data:
                data = data[os.write(write_fd, data):]
            code = 0
        finally:  # whatever the test raised: only the exit status says it failed
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return None
    return json.loads(data)


def can_jail():
    """Mount, network and IPC namespaces (root)."""
    if os.geteuid() != 0:
        return False

    def test():
        kernel.unshare(kernel.CLONE_NEWNS | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC)
        kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
        return True

    return in_child(test) is True


def can_userns_jail(readable=None):
    """Everything `jail.build_jail(..., userns=True)` does: a user namespace with mount, network and IPC
    namespaces, uid and gid maps, the tmpfs, the read-only binds of `readable` (default: the system and
    Python folders) and of the devices, the chroot, dropping all capabilities."""
    readable = readable_paths([]) if readable is None else readable
    top = tempfile.mkdtemp(prefix="posenc-userns-")

    def test():
        jail.build_jail(top + "/jail", readable, top + "/stub", top + "/work", os.getuid(), os.getgid(),
                        SANDBOX.probe_work_bytes, userns=True, devices=DEVICES)
        kernel.drop_capabilities()
        kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
        return os.path.isdir(top + "/work") and not os.path.exists(top + "/jail")

    try:
        for sub in ("jail", "stub"):
            os.mkdir(os.path.join(top, sub))
        return in_child(test) is True
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _own_proc_lists_two():
    """In a mount namespace of its own, a /proc of this process's PID namespace lists pid 1 and pid 2 alone."""
    kernel.mount(None, "/", None, kernel.MS_REC | kernel.MS_PRIVATE)
    kernel.mount("proc", "/proc", "proc", kernel.MS_NOSUID | kernel.MS_NODEV | kernel.MS_NOEXEC)
    return sorted(n for n in os.listdir("/proc") if n.isdigit()) == ["1", "2"]


def _in_session_namespace():
    """As a session server does as root (jail.PidNamespace): the namespace made, its init forked, a child forked into
    it as pid 2; twice, the init killed in between (the second namespace is made after a setns back)."""
    namespace = jail.PidNamespace()
    for _ in range(2):
        namespace.enter()
        pid = os.fork()
        if pid == 0:
            ok = False
            try:
                kernel.unshare(kernel.CLONE_NEWNS)
                ok = os.getppid() == 0 and _own_proc_lists_two()
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        init = namespace.init
        os.kill(init, signal.SIGKILL)
        os.waitpid(init, 0)
        namespace.reaped(init)
        if status != 0:
            return False
    return True


def can_pid_namespace(userns):
    """A PID namespace and a /proc of its own that lists only its processes: in a user namespace when `userns`
    (jail.enter_pid_namespace: the test returns in pid 2 of it), else as a session server makes them."""

    def test():
        if not userns:
            return _in_session_namespace()
        jail.enter_user_namespace(kernel.CLONE_NEWPID)
        jail.enter_pid_namespace()
        return _own_proc_lists_two()

    return in_child(test) is True


def seccomp_works():
    """A filter installs and works here: fchmod(-1) fails with EPERM (the filter) rather than EBADF (the
    kernel's own answer)."""
    if seccomp.machine() not in seccomp.ARCHES:
        return False

    def test():
        seccomp.install()
        try:
            os.fchmod(-1, 0o600)
        except PermissionError:
            return True
        return False

    return in_child(test) is True


def unreadable_by(uid, paths):
    """The paths of `paths` that user `uid`, with no groups, could not read (list and enter). As root
    this is tried for real in a throw-away child that takes that uid (ACLs and all); otherwise from
    the "other" permission bits along each path."""
    if os.geteuid() != 0:
        return [p for p in paths if not other_can_read(p)]

    def test():
        drop_to(uid, uid)
        return [p for p in paths if not os.access(p, os.R_OK | os.X_OK if os.path.isdir(p) else os.R_OK)]

    bad = in_child(test)
    return list(paths) if bad is None else bad


def python_readable_by(uid):
    """Can `uid` (no groups) read every folder Python imports from? policy.py: without a jail, root
    drops learner code to the sandbox's uid only when this holds; it never runs it as uid 0 by default."""
    return not unreadable_by(uid, python_paths())


def capabilities(forced, uid_base):
    """What this machine offers, as the fields of policy.Caps (the zygote's hello). `uid_base` (Settings.uid_base):
    any uid of no account (readability of Python does not depend on which)."""
    root = os.geteuid() == 0
    kind, reason = cgroup.probe()
    jailed, userns_jailed = root and can_jail(), not root and can_userns_jail()
    return {"root": root, "jail": jailed, "userns_jail": userns_jailed,
            "pidns": (jailed or userns_jailed) and can_pid_namespace(userns=not root),
            "landlock": landlock.abi(), "seccomp": seccomp_works(), "cgroup": kind,
            "cgroup_reason": "" if kind else reason, "python_readable": root and python_readable_by(uid_base),
            "forced": forced}
