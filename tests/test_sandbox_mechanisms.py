"""What each sandbox mode blocks, proved at the mechanism level: every attack file of tests/hostile/
that aims at one weakness is run in a forked child confined by `confine.apply(policy.decide(...))`, in
every mode, and what it managed is checked from outside. `EXPECTED` is the table of docs/instructor.md
("What is blocked, per mode"): each of its cells is one `test_cell[row-mode]` here, and a cell marked
open is asserted open (the attack works), so the table cannot claim more than the machine does.

How one run looks (`run`): this test process (root) stands for the machine's administrator; it forks a
"grader" process (the fork server's stand-in: root in the root modes, an unused uid with no account in
the others, so that the non-root modes are tried for real) that forks the confined child, waits for
it, and cleans up as the fork server does. Plain Python children: no torch, no fork server.

Controls (`test_control`): the same attacks with one mechanism taken away, showing which mechanism
stops them (Landlock alone misses UDP, Unix sockets, chmod, System V IPC, memfd; RLIMIT_AS alone does
not stop a memfd).
"""

from __future__ import annotations

import ast
import ctypes  # (attacks use these: imported before confinement, since a confined child
import encodings.idna  # noqa: F401  may not be allowed to read Python's folders to import them)
import errno  # noqa: F401
import functools
import gc
import json
import mmap  # noqa: F401
import os
import pwd
import resource
import shutil
import socket
import sysconfig
import tempfile
import termios
import time
from pathlib import Path

import pytest

from grader.sandbox import procs
from grader.sandbox.confine import cgroup, confine, jail, kernel, landlock, policy
from grader.sandbox.paths import SYSTEM_PATHS
from grader.sandbox.runtime import cleanup, probe
from grader.settings import Limits, SandboxTimings
from tests.conftest import ROOT

HOSTILE = ROOT / "tests" / "hostile"
INSTRUCTOR = 61999  # the grading user of the non-root modes: a uid no account has
SANDBOX = 61998  # the sandbox's own uid in the root modes
MEMORY_MB = 64  # the request's memory allowance (RLIMIT_AS); the cgroup adds SandboxTimings.cgroup_headroom_mb
TIMINGS = SandboxTimings()
PIDS = 16
MODES = policy.MODES
ATTACK_FILES = ("posenc-hoard-", "posenc-planted-")  # what write_outside and dev_shm_hoard leave in /tmp, /dev/shm
ROOT_MODES = ("root-jail", "root-nojail", "root-user")

B, O = "blocked", "open"
# row: (attack file, {mode: expected}); the order of MODES: root-jail root-nojail root-user user-jail user none
EXPECTED = {
    "read the reference": ("read_reference_files", (B, B, B, B, B, O)),
    "read other students' files": ("read_other_students", (B, B, B, B, B, O)),
    "read the instructor's files": ("read_instructor_files", (B, B, B, B, B, O)),
    "write outside the work folder": ("write_outside", (B, B, B, B, B, O)),
    "network: TCP": ("tcp_connect", (B, B, B, B, B, B)),
    "network: UDP": ("udp_exfiltrate", (B, B, B, B, B, B)),
    "network: Unix sockets": ("unix_socket", (B, B, B, B, B, B)),
    "System V IPC": ("sysv_shm_hoard", (B, B, B, B, B, B)),
    "memfd": ("memfd_bomb", (B, B, B, B, B, B)),
    "chmod, chown, utime": ("chmod_home", (B, B, B, B, B, B)),
    "signals to the grader": ("kill_the_grader", (B, B, B, B, B, B)),
    "fork bomb": ("fork_flood", (B, B, B, B, B, B)),
    "memory": ("mmap_bomb", (B, B, B, B, B, B)),
    "memory, CUDA exercise, no cgroup": ("mmap_bomb", (O, O, O, O, O, O)),
    "root's files (uid 0)": ("read_shadow", (B, B, B, B, B, B)),
    "leftover files": ("dev_shm_hoard", (B, B, B, B, B, O)),
    "leftover IPC": ("sysv_shm_hoard", (B, B, B, B, B, B)),
    "leftover processes": ("fork_outlives_parent", (B, B, B, B, B, B)),
    # a user namespace's jail has a PID namespace per child, whose end kills them; as root the session's lives on,
    # and the clean-up kills them (the row above)
    "processes alive when the child ends": ("fork_outlives_parent", (O, O, O, B, O, O)),
    "the grader's limits and priority": ("renice_the_grader", (B, B, B, B, B, B)),
    "the grader's terminal": ("terminal_settings", (B, B, B, B, B, B)),
    "what is typed into the grader's terminal": ("read_the_terminal", (B, B, B, B, B, O)),
    "other processes in /proc": ("proc_snoop", (B, B, B, B, B, O)),
    # none: policy.decide refuses a request that withholds the grader's secret (as every session's does)
    "the grader's secret, outside the repository": ("read_the_secret", (B, B, B, B, B, B)),
}
SECRET_ROW = "the grader's secret, outside the repository"
KEYS = b"posenc-keystrokes typed by the instructor\n"  # typed into the grader's terminal before the run
TYPED_ROWS = ("what is typed into the grader's terminal",)
# rows tried on a machine that lacks something: row: (what is taken away, request changes)
ROW_SETUP = {"memory, CUDA exercise, no cgroup": ({"cgroup"}, {"cuda": True})}  # a GPU box, not root (no RLIMIT_AS)
# (row, mode, what is taken away, request changes, expected): which mechanism stops what
CONTROLS = [
    ("network: UDP", "user", {"seccomp"}, {}, O),  # Landlock checks TCP only
    ("network: Unix sockets", "user", {"seccomp"}, {}, O),  # Landlock does not check connect() by path
    ("network: TCP", "none", {"seccomp"}, {}, O),  # nothing else is left in mode none
    ("chmod, chown, utime", "user", {"seccomp"}, {}, O),  # Landlock does not check them
    ("System V IPC", "user", {"seccomp"}, {}, O),  # Landlock does not check them...
    ("leftover IPC", "user", {"seccomp"}, {}, B),  # ...but the clean-up after the child removes them
    ("memfd", "user", {"seccomp"}, {}, B),  # the cgroup charges memfd pages
    ("memfd", "user", {"seccomp", "cgroup"}, {}, O),  # RLIMIT_AS alone does not stop it
    ("memory", "user", set(), {"cuda": True}, B),  # no RLIMIT_AS (CUDA): the cgroup alone stops it
    ("signals to the grader", "none", {"seccomp"}, {}, O),  # same uid, no Landlock: only seccomp stopped it
    ("System V IPC", "root-jail", {"seccomp"}, {}, O),  # made, in the jail's own IPC namespace...
    ("leftover IPC", "root-jail", {"seccomp"}, {}, B),  # ...which vanishes with it
    ("leftover IPC", "user-jail", {"seccomp"}, {}, B),
    ("leftover files", "root-nojail", {"landlock"}, {}, B),  # its own uid's files are removed after it
    ("fork bomb", "user", {"cgroup"}, {}, B),  # RLIMIT_NPROC over the grading user's own processes
    ("fork bomb", "user-jail", {"cgroup"}, {}, B),  # RLIMIT_NPROC counted in the user namespace
    ("the grader's limits and priority", "user", {"seccomp"}, {}, O),  # same uid: only seccomp stopped it
    ("the grader's terminal", "user", {"seccomp"}, {}, B),  # its owner may open it; Landlock (ABI 5) denies ioctls
    ("the grader's terminal", "none", {"seccomp"}, {}, O),  # neither: stty -echo -icanon on the grader's terminal
    ("other processes in /proc", "root-jail", {"landlock"}, {}, B),  # the PID namespace alone hides them
    ("other processes in /proc", "user-jail", {"landlock"}, {}, B),
    ("other processes in /proc", "root-jail", {"pidns"}, {}, B),  # Landlock alone hides them too
    ("other processes in /proc", "root-jail", {"pidns", "landlock"}, {}, O),  # the machine's /proc, bound
    ("leftover processes", "user-jail", {"cgroup"}, {}, B),  # the subreaper, and the namespace's end
    # the secret not withheld (as before): the grader's uid reads its own file below /etc, /dev/shm...
    (SECRET_ROW, "root-user", set(), {"withhold": ()}, O),
    (SECRET_ROW, "user", set(), {"withhold": ()}, O),
    (SECRET_ROW, "user-jail", set(), {"withhold": ()}, O),
    (SECRET_ROW, "user-jail", {"landlock"}, {}, B),  # the jail's cover alone keeps it
    (SECRET_ROW, "root-jail", set(), {"withhold": ()}, B),  # its own uid alone keeps it (0600, the grader's)
    (SECRET_ROW, "root-nojail", set(), {"withhold": ()}, B),
]


def outcome_has(*words):
    return lambda r, ctx: any(w in r["outcome"] for w in words)


# ---- the machine ------------------------------------------------------------------------------------
def _in_child_as(uid, fn):
    """fn() in a throw-away child that first becomes `uid` (no groups); its bool result."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            confine.drop_to(uid, uid)
            code = 0 if fn() else 1
        except BaseException:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def python_folders():
    paths = sysconfig.get_paths()
    found = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    found.append(os.path.join(paths["stdlib"], "lib-dynload"))
    return sorted({p for p in found if os.path.isdir(p)})


@functools.lru_cache(maxsize=None)
def system_folders(uid):
    """System and Python folders (never sys.path: under pytest it holds the repository), minus those
    `uid` cannot read (the instructor stand-in cannot read a Python in /root)."""
    paths = [p for p in SYSTEM_PATHS if os.path.exists(p)] + python_folders()
    bad = set(probe.unreadable_by(uid, paths)) if uid not in (None, 0) else set()
    return tuple(p for p in paths if p not in bad)


@pytest.fixture(scope="module")
def machine():
    if os.geteuid() != 0:
        pytest.skip("needs root: each mode is emulated by dropping to unused uids")
    for uid in (INSTRUCTOR, SANDBOX):
        try:
            pwd.getpwuid(uid)
            pytest.skip(f"uid {uid} belongs to an account here")
        except KeyError:
            pass
    sys_user = [p for p in SYSTEM_PATHS if os.path.exists(p)]
    kind, reason = cgroup.probe()
    return {"landlock": landlock.abi(), "seccomp": probe.seccomp_works(), "cgroup": kind,
            "cgroup_reason": reason, "jail": probe.can_jail(), "pidns": probe.can_pid_namespace(userns=False),
            "userns": _in_child_as(INSTRUCTOR, lambda: probe.can_userns_jail(sys_user)),
            "userns_pidns": _in_child_as(INSTRUCTOR, lambda: probe.can_pid_namespace(userns=True))}


def caps_for(mode, m, without=()):
    common = dict(landlock=0 if "landlock" in without else m["landlock"],
                  seccomp=m["seccomp"] and "seccomp" not in without,
                  cgroup=None if "cgroup" in without else m["cgroup"], cgroup_reason=m["cgroup_reason"])
    pidns = {"root-jail": m["pidns"], "user-jail": m["userns_pidns"]}.get(mode, False) and "pidns" not in without
    return {
        "root-jail": policy.Caps(root=True, jail=True, pidns=pidns, **common),
        # the forked child imports nothing more, so Python's own readability does not matter here
        "root-nojail": policy.Caps(root=True, jail=m["jail"], forced="nojail", python_readable=True, **common),
        "root-user": policy.Caps(root=True, forced="user", python_readable=False, **common),
        "user-jail": policy.Caps(userns_jail=True, pidns=pidns, **common),
        "user": policy.Caps(**common),
        "none": policy.Caps(**{**common, "landlock": 0}),
    }[mode]


def needs(mode, m):
    """Why this machine cannot try `mode`, or None."""
    if mode == "root-jail" and not m["jail"]:
        return "no mount namespaces"
    if mode == "user-jail" and not m["userns"]:
        return "no unprivileged user namespaces"
    if (mode == "root-jail" and not m["pidns"]) or (mode == "user-jail" and not m["userns_pidns"]):
        return "no PID namespace with a /proc of its own"
    if mode in ("root-nojail", "root-user", "user") and not m["landlock"]:
        return "no Landlock"
    if not m["seccomp"]:
        return "no seccomp"
    if m["cgroup"] is None:
        return f"no cgroup ({m['cgroup_reason']})"
    return None


# ---- the world the attacks aim at -----------------------------------------------------------------------
FILES = {
    "repo/posenc_ref/ch01_sinusoidal.py": "def shift_matrix(k, d_model, base=10.0):\n    return 'REFERENCE-ANSWER'\n",
    "repo/course/01_sinusoidal/exercises.py": "CHECKS = 'SECRET-CHECKS'\n",
    "repo/solutions/01_sinusoidal.ipynb": '{"SECRET": "SOLUTION"}\n',
    "repo/.git/HEAD": "ref: refs/heads/main\n",
    "home/.bashrc": "export PS1='instructor$ '\n",
    "home/.ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    "class/bob.py": "# bob's submission: SECRET-OTHER-STUDENT\n",
}


@pytest.fixture(scope="module")
def world(machine):
    """The instructor's files (owned by INSTRUCTOR, readable by anyone: only the sandbox keeps a child
    out), a folder anyone may write to, and listeners for TCP, UDP and Unix sockets."""
    top = Path(tempfile.mkdtemp(prefix="posenc-mech-"))
    os.chmod(top, 0o755)
    for rel, text in FILES.items():
        path = top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for path in [top / "repo", top / "home", top / "class"] + [p for p in top.rglob("*")]:
        os.chown(path, INSTRUCTOR, INSTRUCTOR)
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(top / "home/.ssh", 0o700)
    os.chmod(top / "home/.ssh/id_ed25519", 0o600)
    (top / "drop").mkdir(mode=0o777)
    os.chmod(top / "drop", 0o777)
    (top / "runs").mkdir(mode=0o755)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    port = udp.getsockname()[1]
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", port))
    tcp.listen(16)
    sock_path = str(top / "drop" / "grader.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(sock_path)
    os.chmod(sock_path, 0o777)
    unix.listen(16)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + sock_path)
    abstract.listen(16)
    for s in (udp, tcp, unix, abstract):
        s.setblocking(False)
    tty_master, tty = os.openpty()  # stands for the terminal the instructor grades from
    os.set_blocking(tty, False)
    os.set_blocking(tty_master, False)
    # the grader's secret where an instructor may keep it outside the repository (32 random bytes, 0600, the
    # grader's own: its owner is set for each run): below /etc, in a temporary folder, in the home, in /dev/shm
    secrets = [f"/etc/posenc-secret-{top.name}", str(top / "tmp" / "grader-secret"),
               str(top / "home" / ".config" / "posenc" / "secret"), f"/dev/shm/posenc-secret-{top.name}"]
    secret = os.urandom(32)
    for path in secrets:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(secret)
    subs = {"__TTY__": os.ttyname(tty), "__TOP__": str(top), "__RUN__": top.name,
            "__REPO__": str(top / "repo"), "__HOME__": str(top / "home"), "__OTHERS__": str(top / "class"),
            "__MARKER__": str(top / "drop" / "marker"), "__TARGET__": str(top / "drop"),
            "__PORT__": str(port), "__SOCKET__": sock_path, "__SECRETS__": os.pathsep.join(secrets)}
    yield {"top": top, "subs": subs, "udp": udp, "tcp": tcp, "unix": unix, "abstract": abstract, "tty": tty,
           "tty_master": tty_master, "secrets": secrets, "secret": secret}
    for s in (udp, tcp, unix, abstract):
        s.close()
    os.close(tty)
    os.close(tty_master)
    for path in secrets:
        os.unlink(path)
    shutil.rmtree(top)


def drained(world):
    """What reached the listeners since the last call: connections and datagrams."""
    got = []
    for name in ("tcp", "unix", "abstract"):
        while True:
            try:
                conn, _ = world[name].accept()
            except BlockingIOError:
                break
            conn.settimeout(1)
            try:
                got.append((name, conn.recv(100)))
            except OSError:
                got.append((name, b""))
            conn.close()
    while True:
        try:
            got.append(("udp", world["udp"].recv(100)))
        except BlockingIOError:
            break
    return got


# ---- one run ----------------------------------------------------------------------------------------------
def _send(fd, data):
    os.write(fd, json.dumps(data).encode())


def _child(pol, group, source, fd, canary):
    """The sandbox child: confine, then run the attack like the fork server runs a submission."""
    try:
        confine.detach(fd)  # as child.py: a session of its own, no terminal, no fd but the pipe
        ctypes.CDLL(None).prctl(15, b"sandbox-child", 0, 0, 0)  # not the grader's name (PR_SET_NAME)
        try:
            confine.apply(pol, group)
        except BaseException as exc:
            _send(fd, {"outcome": f"SETUP FAILED {type(exc).__name__}: {exc}"})
            return
        if canary:  # as uid 0, a kill(-1) that got through would reach every root process of this machine
            try:
                os.kill(-1, 0)  # signal 0: the permission check alone
                _send(fd, {"outcome": "CANARY kill(-1) is allowed: the attack was not run"})
                return
            except OSError:
                pass
        ns = {"__name__": "submission", "shift_matrix": lambda k, d_model, base=10000.0: "HONEST"}
        try:
            exec(compile(source, "attack.py", "exec"), ns)
            out = f"returned {ns['shift_matrix'](2, 8)!r}"
        except BaseException as exc:
            out = f"{type(exc).__name__}: {exc}"
        _send(fd, {"outcome": out[:2000], "uid": os.getuid()})
    finally:
        os._exit(0)


def _own_state():
    """What learner code must not change in the grader: its limits, priority, CPUs, scheduler."""
    return [resource.getrlimit(resource.RLIMIT_FSIZE), resource.getrlimit(resource.RLIMIT_CPU),
            os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0)]


def _grader(pol, group, source, as_uid, fd_out, canary, seconds):
    """The fork server's stand-in: fork the child, wait, clean up as session_server.py does, report."""
    gc.disable()  # here and in the child: a full collection would copy the test process's heap into the cgroup
    kernel.prctl(kernel.PR_SET_CHILD_SUBREAPER, 1)
    ctypes.CDLL(None).prctl(15, b"posenc-GRADER", 0, 0, 0)  # PR_SET_NAME: what /proc/<pid>/comm shows of it
    if as_uid is not None:
        confine.drop_to(as_uid, as_uid)
    source = source.replace("__GRADER__", str(os.getpid()))
    mine = _own_state()
    ipc_before = cleanup.sysv_ipc(os.getuid())
    read_fd, write_fd = os.pipe()
    if pol.jail == "root" and pol.pidns:  # as session_server.py: the session's namespace, its init forked first
        jail.PidNamespace().enter()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(pol, group, source, write_fd, canary)
    os.close(write_fd)
    deadline, status = time.monotonic() + seconds, None
    while status is None and time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        else:
            time.sleep(0.005)
    os.set_blocking(read_fd, False)
    try:
        data = os.read(read_fd, 1 << 16)
    except BlockingIOError:
        data = b""
    report = json.loads(data) if data else {"outcome": ""}
    report["grader changed"] = _own_state() != mine
    report["alive at its end"] = len(procs.descendants(os.getpid()))  # before any clean-up
    if status is None:
        report["outcome"] += " (timed out)"
    elif os.WIFSIGNALED(status):
        report["outcome"] += f" killed by signal {os.WTERMSIG(status)}"
    # session_server.py's clean-up: everything below the server, everything of the sandbox's uid, then per policy
    procs.kill_all(lambda: procs.descendants(os.getpid()))
    runner = pol.uid if pol.uid is not None else os.getuid()
    if runner != 0:
        procs.kill_all(lambda: procs.uid_pids(runner))
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    if pol.clean_ipc == "uid":
        cleanup.remove_sysv_ipc(pol.uid)
    elif pol.clean_ipc == "new":
        cleanup.remove_sysv_ipc(os.getuid(), keep=ipc_before)
    if pol.clean_files_of_uid:
        cleanup.remove_files_of(pol.uid)
    report["left processes"] = len(procs.descendants(os.getpid())) + (
        len([p for p in procs.uid_pids(runner) if p != os.getpid()]) if runner != 0 else 0)
    report["left ipc"] = sorted(cleanup.sysv_ipc(runner) - (ipc_before if runner == os.getuid() else set()))
    _send(fd_out, report)


_RUNS = []


def run(world, m, mode, row, without=(), request=None, seconds=90, source=None):
    """Run the row's attack (or `source`) in `mode`; the child's and the grader's report, plus the run's context."""
    source = source or (HOSTILE / f"{EXPECTED[row][0]}.py").read_text()
    for key, value in world["subs"].items():
        source = source.replace(key, value)
    instructor = mode not in ROOT_MODES
    runner = {"root-jail": SANDBOX, "root-nojail": SANDBOX, "root-user": 0}.get(mode, INSTRUCTOR)
    _RUNS.append(1)
    folder = world["top"] / "runs" / str(len(_RUNS))
    for sub in ("jail", "stub/posenc_selfcheck", "work"):
        (folder / sub).mkdir(parents=True)
    os.chmod(folder / "work", 0o700)
    os.chown(folder / "work", runner, runner)
    # the secret rows withhold the world's secrets, as every session withholds Settings.secret_file
    withhold = tuple(world["secrets"]) if row == SECRET_ROW else ()
    for path in world["secrets"]:  # the grader's own file
        os.chown(path, INSTRUCTOR if instructor else 0, INSTRUCTOR if instructor else 0)
    req = policy.Request(workdir=str(folder / "work"), stub=str(folder / "stub"), jail_dir=str(folder / "jail"),
                         system=system_folders(INSTRUCTOR if instructor else None),
                         protect=(str(world["top"] / "repo"),), uid=None if instructor else SANDBOX,
                         gid=None if instructor else SANDBOX, memory_mb=MEMORY_MB, nproc=PIDS, cpu_seconds=20,
                         file_bytes=Limits().file_bytes, work_bytes=Limits().work_bytes,
                         cgroup_headroom_mb=TIMINGS.cgroup_headroom_mb, **{"withhold": withhold, **(request or {})})
    try:
        pol = policy.decide(caps_for(mode, m, without), req)
    except policy.Refused as exc:  # mode none with a secret: no child runs
        shutil.rmtree(folder)
        return {"outcome": f"REFUSED {exc}", "secret": world["secret"].hex()}
    assert pol.mode == mode
    group = None
    if pol.cgroup_mb:
        group = cgroup.Cgroup.create(f"mech{len(_RUNS)}", pol.cgroup_mb << 20, pol.cgroup_pids,
                                     gone_seconds=TIMINGS.gone_seconds)
        if instructor:  # a delegated group: the grading user may move its child into it
            for path in group.folders:
                for name in ("", "cgroup.procs", "tasks"):
                    if os.path.exists(os.path.join(path, name)):
                        os.chown(os.path.join(path, name), INSTRUCTOR, INSTRUCTOR)
    bashrc = (world["top"] / "home" / ".bashrc").read_text()
    home = os.stat(world["top"] / "home")
    tty = world["tty"]
    os.fchown(tty, INSTRUCTOR if instructor else 0, 5 if os.path.exists("/dev/pts") else 0)  # the grader's own
    os.fchmod(tty, 0o620)
    tty_before = termios.tcgetattr(tty)
    keys = KEYS if row in TYPED_ROWS else b""
    os.write(world["tty_master"], keys)
    drained(world)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_fd)
            _grader(pol, group, source, INSTRUCTOR if instructor else None, write_fd, mode == "root-user", seconds)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    report = json.loads(data) if data else {"outcome": "", "left processes": 0, "left ipc": []}
    report["grader alive"] = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    report["received"] = drained(world)
    report["runner"] = runner
    report["secret"] = world["secret"].hex()
    report["oom"] = group.oom_killed() if group else False
    new_home = os.stat(world["top"] / "home")
    report["home changed"] = (new_home.st_mode, new_home.st_uid, new_home.st_mtime) != (
        home.st_mode, home.st_uid, home.st_mtime)
    report["bashrc changed"] = (world["top"] / "home" / ".bashrc").read_text() != bashrc
    marker = world["top"] / "drop" / "marker"
    report["marker"] = marker.exists()
    try:
        typed = os.read(tty, 100)
    except BlockingIOError:
        typed = b""
    report["tty changed"] = termios.tcgetattr(tty) != tty_before or typed != keys
    termios.tcsetattr(tty, termios.TCSANOW, tty_before)
    try:
        while os.read(world["tty_master"], 1 << 16):  # the terminal's echo of what was typed
            pass
    except (BlockingIOError, OSError):
        pass
    report["left files"] = [e.path for folder_ in cleanup.TEMP_FOLDERS if os.path.isdir(folder_)
                            for e in os.scandir(folder_)
                            if e.name.startswith(tuple(f"{a}{world['subs']['__RUN__']}-" for a in ATTACK_FILES))
                            and e.stat(follow_symlinks=False).st_uid == runner]
    # put the world back for the next run (what an open cell changed), then clean up after the run
    marker.unlink(missing_ok=True)
    (world["top"] / "home" / ".bashrc").write_text(bashrc)
    os.chmod(world["top"] / "home", 0o755)
    os.chown(world["top"] / "home", INSTRUCTOR, INSTRUCTOR)
    os.utime(world["top"] / "home", ns=(home.st_atime_ns, home.st_mtime_ns))
    for path in report["left files"]:
        shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    if runner != 0:
        cleanup.remove_sysv_ipc(runner)
        procs.kill_all(lambda: procs.uid_pids(runner))
    if group:
        assert group.kill_and_remove(TIMINGS.gone_seconds)
    shutil.rmtree(folder)
    return report


# ---- what counts as blocked -----------------------------------------------------------------------------
def _blocked_word(r):
    return r["outcome"].startswith("RuntimeError: BLOCKED")


def _only_private_writes(r):
    """Refused, or written only to /tmp and /dev/shm, which in a jail are its own and vanish with it
    (what is left outside is checked as "left files")."""
    if not r["outcome"].startswith("RuntimeError: WROTE "):
        return _blocked_word(r)
    return all(p.startswith(("/tmp/", "/dev/shm/")) for p in r["outcome"].split("WROTE ", 1)[1].split())


CHECKS = {
    "read the reference": lambda r: _blocked_word(r) and "REFERENCE-ANSWER" not in r["outcome"],
    "read other students' files": lambda r: _blocked_word(r) and "SECRET-OTHER-STUDENT" not in r["outcome"],
    "read the instructor's files": lambda r: _blocked_word(r),
    "write outside the work folder": lambda r: _only_private_writes(r) and not r["marker"]
    and not r["bashrc changed"] and not r["left files"],
    "network: TCP": lambda r: _blocked_word(r) and not r["received"],
    "network: UDP": lambda r: _blocked_word(r) and not r["received"],
    "network: Unix sockets": lambda r: _blocked_word(r) and not r["received"],
    "System V IPC": lambda r: _blocked_word(r),
    "memfd": lambda r: (_blocked_word(r) or "STOPPED" in r["outcome"] or "killed by signal 9" in r["outcome"])
    and "FILLED" not in r["outcome"],
    "chmod, chown, utime": lambda r: _blocked_word(r) and not r["home changed"],
    "signals to the grader": lambda r: r["grader alive"] and "CANARY" not in r["outcome"]
    and "returned 'HONEST'" in r["outcome"],
    "fork bomb": lambda r: "STOPPED after" in r["outcome"]
    and int(r["outcome"].split("STOPPED after ")[1].split()[0]) <= PIDS,
    "memory": lambda r: ("STOPPED" in r["outcome"] or "killed by signal 9" in r["outcome"])
    and "FILLED" not in r["outcome"],
    "memory, CUDA exercise, no cgroup": lambda r: "FILLED" not in r["outcome"],
    "root's files (uid 0)": lambda r: _blocked_word(r) and "LEAKED" not in r["outcome"],
    "leftover files": lambda r: not r["left files"],
    "leftover IPC": lambda r: not r["left ipc"],
    "leftover processes": lambda r: r["left processes"] == 0 and "returned 'HONEST'" in r["outcome"],
    "processes alive when the child ends": lambda r: r["alive at its end"] == 0 and "returned 'HONEST'" in r["outcome"],
    # judged by its effect on the grader (renicing its own uid's processes is no attack where the uid is its own)
    "the grader's limits and priority": lambda r: r["outcome"].startswith(("RuntimeError: BLOCKED",
                                                                           "RuntimeError: CHANGED"))
    and not r["grader changed"],
    "the grader's terminal": lambda r: _blocked_word(r) and not r["tty changed"],
    "what is typed into the grader's terminal": lambda r: _blocked_word(r) and not r["tty changed"]
    and KEYS.strip().decode() not in r["outcome"],
    "other processes in /proc": lambda r: _blocked_word(r),
    # mode none refuses to run it (policy.NONE_REFUSAL); r["secret"]: the world's secret, in hex
    SECRET_ROW: lambda r: (_blocked_word(r) or r["outcome"].startswith("REFUSED sandbox mode none "))
    and r["secret"] not in r["outcome"],
}


def _cells():
    for row, (_, expected) in EXPECTED.items():
        for mode, want in zip(MODES, expected):
            yield pytest.param(row, mode, want, id=f"{row}-{mode}")


@pytest.mark.parametrize("row, mode, want", list(_cells()))
def test_cell(row, mode, want, world, machine):
    why = needs(mode, machine)
    if why:
        pytest.skip(f"{mode}: {why} on this machine")
    without, request = ROW_SETUP.get(row, ((), None))
    report = run(world, machine, mode, row, without=without, request=request)
    assert "SETUP FAILED" not in report["outcome"], report["outcome"]
    assert (B if CHECKS[row](report) else O) == want, report


@pytest.mark.parametrize("row, mode, without, request_changes, want", CONTROLS,
                         ids=[f"{r}-{m}-without-{'+'.join(sorted(w)) or 'rlimit_as'}" for r, m, w, _, _ in CONTROLS])
def test_control(row, mode, without, request_changes, want, world, machine):
    why = needs(mode, machine)
    if why:
        pytest.skip(f"{mode}: {why} on this machine")
    report = run(world, machine, mode, row, without=without, request=request_changes)
    assert "SETUP FAILED" not in report["outcome"] and "CANARY" not in report["outcome"], report["outcome"]
    assert (B if CHECKS[row](report) else O) == want, report
    if row == "memfd" and want == B:
        assert report["oom"] or "STOPPED" in report["outcome"], report  # the cgroup, not seccomp, stopped it


def test_each_mode_runs_as_the_uid_it_claims(world, machine):
    """root-jail and root-nojail: the sandbox's own uid; root-user: 0; the others: the grading user's."""
    for mode in MODES:
        if needs(mode, machine):
            continue
        report = run(world, machine, mode, "root's files (uid 0)")
        assert report["uid"] == report["runner"], (mode, report)
        assert f"as uid {report['runner']}" in report["outcome"]


STATE = r"""
import os

def _status():
    with open("/proc/self/status") as f:
        return dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)

def shift_matrix(k, d_model, base=10000.0):
    s = _status()
    with open("/proc/self/cgroup") as f:
        groups = f.read()
    raise RuntimeError("STATE " + repr({"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
                       "CapEff": s["CapEff"].strip(), "CapBnd": s["CapBnd"].strip(),
                       "NoNewPrivs": s["NoNewPrivs"].strip(), "Seccomp": s["Seccomp"].strip(),
                       "in group": "posenc-" in groups, "cwd": os.getcwd()}))
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_confined_child_has_no_privileges_left(mode, world, machine):
    """Whatever the mode: no capabilities (not even in a user namespace), no new privileges, the
    seccomp filter, the cgroup, its working folder; the uid its mode claims, with no groups."""
    why = needs(mode, machine)
    if why:
        pytest.skip(f"{mode}: {why} on this machine")
    report = run(world, machine, mode, None, source=STATE)
    state = ast.literal_eval(report["outcome"].split("STATE ", 1)[1])
    assert state["uid"] == report["runner"] and state["groups"] == [], state
    assert int(state["CapEff"], 16) == 0 and state["NoNewPrivs"] == "1" and state["Seccomp"] == "2", state
    if mode in ("user-jail", "root-user"):
        assert int(state["CapBnd"], 16) == 0, state  # the bounding set too: nothing to regain
    assert state["in group"] and state["cwd"].endswith("/work"), state


def test_the_table_in_the_instructor_guide_is_this_table():
    """docs/instructor.md's table "What is blocked, per mode" says what EXPECTED says, cell by cell, and
    names each row's attack file."""
    section = (ROOT / "docs" / "instructor.md").read_text().split("### What is blocked, per mode", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == len(MODES) + 1:
            rows[cells[0]] = cells[1:]
    assert rows["attack (`tests/hostile/`)"] == list(MODES)
    for row, (attack, expected) in EXPECTED.items():
        assert f"`{attack}`" in section, attack
        for mode, want, cell in zip(MODES, expected, rows[row]):
            assert cell.startswith("blocked: " if want == B else "**open**"), (row, mode, cell)
    uid0 = rows["learner code runs as uid 0"]
    assert [cell.startswith("**yes**") for cell in uid0] == [mode == "root-user" for mode in MODES]
