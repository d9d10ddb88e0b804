"""Confine one sandbox child before it runs learner code (Linux; standard library and ctypes only: imported
flat by the fork servers, as `grader.sandbox.confine.confine` by the grader).

`apply(policy, cgroup)` carries out a policy.Policy (policy.py decides it from what probe.py found) in a
freshly forked child, each layer where the machine allows it:

- **cgroup** (cgroup.py): memory (memfd, tmpfs, shared memory included) and process count;
- **jail** (jail.py: root, or a user namespace where the kernel allows unprivileged ones): private mount,
  network, IPC (and PID) namespaces, chrooted into a view with nothing of the grader's files;
- **user** (root): a user id of its own, no groups, no new privileges; otherwise no capabilities;
- **Landlock** (landlock.py): reads below the system and Python folders (never the grader's secret, wherever
  it lies), a few devices (no terminal), writes in the working folder;
- **rlimits** always (`limit`): CPU time, address space, file size, open files, no core dumps;
- **seccomp** (seccomp.py) last: chmod/chown, sockets, System V IPC, ptrace, namespaces... fail with EPERM.

`detach` is what comes before: a session of its own, nothing open but its pipes.
"""

import os
import resource
import signal

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .. import procs
    from . import jail, landlock, seccomp
    from .kernel import PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, drop_capabilities, prctl
except ImportError:
    import jail
    import landlock
    import procs
    import seccomp
    from kernel import PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, drop_capabilities, prctl


# ---- user and limits -------------------------------------------------------------------------------
def drop_to(uid, gid):
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("could not drop privileges")


def limit(cpu_seconds, memory_bytes, file_bytes, nproc=None):
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    if memory_bytes:
        # address space: what is mapped now (torch is loaded) plus the allowance
        vm_bytes = procs.mapped_bytes()
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
    process group and the signal handlers (child.py)."""
    if cgroup is not None:
        cgroup.join(0)
    owner = (policy.uid, policy.gid) if policy.uid is not None else (os.getuid(), os.getgid())
    if policy.jail:
        jail.build_jail(policy.jail_dir, list(policy.binds), policy.stub, policy.workdir, owner[0], owner[1],
                        policy.work_bytes, userns=policy.jail == "user", pidns=policy.pidns,
                        devices=list(policy.devices), withhold=list(policy.withhold))
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
    landlock.restrict(list(policy.readable), list(policy.writable), policy.landlock, own_proc=not policy.pidns,
                      withhold=list(policy.withhold))
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    limit(policy.cpu_seconds, (policy.memory_mb or 0) << 20, policy.file_bytes, nproc)
    if policy.seccomp:
        seccomp.install()
