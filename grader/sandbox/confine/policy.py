"""The sandbox's policy: how one child is confined, given what the machine offers. A pure function, no
system calls: the zygote probes the machine once (`Caps`, probe.py), the grader says what one child needs
(`Request`), `decide()` returns the `Policy`, and `confine.apply()` carries it out in the child.
Standard library only (copied flat into the fork server's folder, imported by the grader as
`grader.sandbox.confine.policy`); the values of POSENC_SANDBOX_MODE come from modes.py.

Modes, strongest first:

- **root-jail** (root, mount namespaces): a uid of its own, chrooted into a private view (no grader
  files, no network, its own IPC; its own PID namespace and /proc where the kernel allows).
- **root-nojail** (root, no mount namespaces or POSENC_SANDBOX_MODE=nojail, Python readable by other
  users): a uid of its own, under Landlock (or chmod o-rwx on the grader's folders without Landlock).
- **root-user** (root, POSENC_SANDBOX_MODE=user, Python not readable by other users, Landlock): uid 0
  without capabilities, under Landlock, which withholds /etc's secrets.
- **user-jail** (not root, unprivileged user namespaces): the grader's user, in the same private view
  through a user namespace, no capabilities.
- **user** (not root, no user namespaces, Landlock): the grader's user, under Landlock.
- **none** (not root, neither): the grader's user; only seccomp, rlimits and the cgroup.

Every mode adds seccomp (where available), rlimits and a cgroup (where one can be made).

The rule for root without a jail: learner code never runs as uid 0 unless the instructor asks for it
(POSENC_SANDBOX_MODE=user) and Landlock can keep it to the system and Python folders. Otherwise it
runs as the sandbox's own uid, which needs a Python installation other users can read; when that is
missing, `decide()` refuses with the remedies (`Refused`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from ..modes import FORCED
    from ..paths import DEVICES
except ImportError:
    from modes import FORCED
    from paths import DEVICES

MODES = ("root-jail", "root-nojail", "root-user", "user-jail", "user", "none")


@dataclass(frozen=True)
class Note:
    """A sentence for the grading report or a refusal, as message data: `id` its English template, `params` its
    named parameters (a number, a name or path, or another Note). posenc_selfcheck/messages.py is not importable here
    (standard library only), so the grader's side makes each a message (host/session.py) and renders it in the
    reader's language; the templates are in the grader's catalog (grader.po) like every `msg`'s."""

    id: str
    params: dict[str, str | int | Note] = field(default_factory=dict)

    def __str__(self):
        """Its English."""
        return self.id.format_map({name: str(value) for name, value in self.params.items()})


def msg(template, **params):
    """A Note whose id is `template` (a literal, so that the grader's catalog extraction finds it)."""
    return Note(template, params)


class Refused(RuntimeError):
    """The machine cannot confine learner code acceptably in the mode asked for; `note` (a Note) says what to do."""

    def __init__(self, note):
        super().__init__(str(note))
        self.note = note


@dataclass(frozen=True)
class Caps:
    """What the zygote found, once (probe.py; cgroup.probe)."""

    root: bool = False  # the fork server runs with euid 0
    jail: bool = False  # root: private mount, network and IPC namespaces (probe.can_jail)
    userns_jail: bool = False  # not root: the same inside a user namespace (probe.can_userns_jail)
    pidns: bool = False  # with a jail: a PID namespace and a /proc of its own (probe.can_pid_namespace)
    landlock: int = 0  # Landlock ABI, 0 when absent (landlock.abi)
    seccomp: bool = False  # seccomp.available()
    cgroup: str | None = None  # "v2", "v1", None (cgroup.probe)
    cgroup_reason: str | Note = ""  # why not, when None (a Note: cgroup.probe)
    python_readable: bool = False  # root: a uid of no account, no groups reads Python (probe.python_readable_by)
    forced: str = "auto"  # POSENC_SANDBOX_MODE


@dataclass(frozen=True, kw_only=True)
class Request:
    """What one child needs (the grader's job for one exercise). The limits have no defaults here: they come
    from grader.settings.Limits (and SandboxTimings), under the same names."""

    workdir: str
    stub: str  # the posenc_selfcheck stub package's folder
    jail_dir: str  # an empty folder to build a jail on
    system: tuple = ()  # readable system and Python folders, none of which holds a protected path
    protect: tuple = ()  # the grader's folders (the repository, POSENC_SANDBOX_PROTECT)
    withhold: tuple = ()  # files no child may read wherever they lie, even below a readable folder: the
    # grader's secret (Settings.secret_file), whose owner is the grader's uid
    uid: int | None = None  # root: the sandbox's own uid and gid
    gid: int | None = None
    cuda: bool = False  # the exercise has CUDA checks and the machine a GPU
    gpu_devices: tuple = ()  # /dev/nvidia*, /dev/dri: CUDA opens them read-write
    memory_mb: int  # what the child may map beyond what the fork server has mapped
    nproc: int  # processes of the sandbox's uid (RLIMIT_NPROC) and of its cgroup
    cpu_seconds: int
    file_bytes: int  # the largest file it may write
    work_bytes: int  # its working folder, where that is a tmpfs of its own
    cgroup_headroom_mb: int  # the cgroup's memory over memory_mb (grader.settings.SandboxTimings)


@dataclass(frozen=True)
class Policy:
    mode: str
    uid: int | None  # run as (None: keep the fork server's)
    gid: int | None
    jail: str | None  # "root", "user" (namespaces through a user namespace), None
    pidns: bool  # the jail has a PID namespace and a /proc of its own (killed whole when the child ends)
    jail_dir: str
    binds: tuple[str, ...]  # read-only in the jail
    devices: tuple[str, ...]  # the devices in the jail's /dev (paths.DEVICES, and the GPU's for a CUDA exercise)
    withhold: tuple[str, ...]  # files no child reads: Landlock leaves them out, the jail covers them with an empty file
    stub: str
    workdir: str
    readable: tuple[str, ...]  # Landlock
    writable: tuple[str, ...]
    landlock: int  # ABI to use, 0: none
    seccomp: bool
    cgroup_mb: int | None  # memory.max / memory.limit_in_bytes: memory_mb plus cgroup_headroom_mb; None: no cgroup
    cgroup_pids: int | None
    memory_mb: int | None  # RLIMIT_AS: address space over what is mapped at fork; None: not set
    nproc: int | None  # RLIMIT_NPROC; None: not set
    nproc_shared: bool  # the uid is the grader's own: add its current tasks to nproc at fork
    cpu_seconds: int
    file_bytes: int
    work_bytes: int
    chmod_protect: tuple[str, ...]  # take "other" permissions from these (no jail, no Landlock, own uid)
    clean_files_of_uid: bool  # after the child: remove the uid's files in /tmp, /var/tmp, /dev/shm
    clean_ipc: str | None  # after the child: "uid" (the sandbox's own), "new" (the grader's uid: only
    # objects made meanwhile), None (an IPC namespace took them)
    notes: tuple[Note, ...]  # sentences for the grading report where protection is weaker than root-jail


def _mode(caps, landlock):
    """The mode's name, or Refused."""
    if caps.root:
        if caps.jail and caps.forced not in ("nojail", "user"):
            return "root-jail"
        if caps.python_readable:
            return "root-nojail"
        if caps.forced == "user" and landlock:
            return "root-user"
        why = (msg("POSENC_SANDBOX_MODE={mode} asks for no jail", mode=caps.forced) if caps.jail
               else msg("cannot build the sandbox's jail here (no mount namespaces)"))
        as_root = (msg("set POSENC_SANDBOX_MODE=user to accept running learner code as root without capabilities "
                       "under Landlock") if landlock
                   else msg("set POSENC_SANDBOX_MODE=user to accept running learner code as root without capabilities "
                            "under Landlock (this needs Landlock, which is missing here)"))
        raise Refused(msg(
            "the grader runs as root but {why}, and other users cannot read this Python installation, so learner "
            "code could only run as root. It will not. Remedies: grade in a container or VM where root may create "
            "mount namespaces (for Docker: `--cap-add SYS_ADMIN --security-opt seccomp=unconfined`, or Podman); or "
            "install Python where other users can read it (e.g. /usr/local or /opt, or chmod -R o+rX on its "
            "folders); or run the grader as an ordinary user; or {as_root}.", why=why, as_root=as_root))
    if caps.userns_jail and caps.forced != "nojail":
        return "user-jail"
    return "user" if landlock else "none"


def decide(caps: Caps, req: Request) -> Policy:
    if caps.forced not in FORCED:
        raise Refused(msg("POSENC_SANDBOX_MODE={mode} is not one of {modes}", mode=repr(caps.forced),
                          modes=", ".join(FORCED)))
    landlock = 0 if caps.forced == "nolandlock" else caps.landlock
    mode = _mode(caps, landlock)
    if mode == "none" and req.withhold:
        raise Refused(msg(
            "sandbox mode none cannot keep learner code from reading the grader's secret {path} (the grader is not "
            "root, and this machine has neither user namespaces nor Landlock, so learner code runs as you and reads "
            "every file you can); with it, the main checks' inputs could be predicted, so this grader will not "
            "grade here. Grade as root (a container, Gradescope) or on a Linux with Landlock (5.13+) or "
            "unprivileged user namespaces.", path=req.withhold[0]))
    own_uid = mode in ("root-jail", "root-nojail")
    if own_uid and req.uid is None:
        raise ValueError("as root, the request must name the sandbox's uid")
    jail = {"root-jail": "root", "user-jail": "user"}.get(mode)
    devices = tuple(req.gpu_devices) if req.cuda else ()
    writable = (req.workdir, "/dev/null") + (("/tmp", "/dev/shm") if jail else ()) + devices
    # of /dev, the harmless devices only: no terminal (/dev/tty, /dev/pts), no host /dev/shm
    readable = tuple(req.system) + (req.stub,) + DEVICES + ("/proc", "/sys")
    cgroup = caps.cgroup is not None
    notes = []

    # ---- who, and what it sees; why not more (what this machine lacks, or what POSENC_SANDBOX_MODE asked)
    hidden = msg("Landlock (ABI {abi})", abi=landlock) if landlock else None
    no_landlock = (msg("POSENC_SANDBOX_MODE=nolandlock asked for no Landlock") if caps.forced == "nolandlock"
                   and caps.landlock else msg("this machine has no Landlock"))
    chmod_protect = ()
    if mode == "root-nojail":
        if not hidden:
            chmod_protect = tuple(req.protect)
            hidden = msg("chmod o-rwx on the grader's folders")
        why = (msg("POSENC_SANDBOX_MODE={mode} asked for no jail", mode=caps.forced) if caps.jail
               else msg("no mount namespaces here"))
        if caps.forced == "user":
            why = msg("POSENC_SANDBOX_MODE=user asked for no jail; other users can read this Python, so learner code "
                      "need not run as root")
        notes.append(msg("{why}: learner code ran as uid {uid} (a user id of its own) with {hidden} keeping it from "
                         "the grader's files, not in a private file-system view", why=why, uid=req.uid, hidden=hidden))
    elif mode == "root-user":
        notes.append(msg("POSENC_SANDBOX_MODE=user: learner code ran as root (uid 0) without capabilities; {hidden} "
                         "kept its reads to the system and Python folders (without /etc's secrets) and its writes "
                         "to its working folder. Grade in a container, or make Python readable by other users, so "
                         "that it runs under a user id of its own", hidden=hidden))
    elif mode == "user-jail":
        notes.append(msg("the grader is not running as root, so learner code ran as your own user, in a private "
                         "file-system view (a user namespace: none of your files, no network) with no capabilities. "
                         "Grade as root (a container, Gradescope) for a user id of its own"))
    elif mode in ("user", "none"):
        no_jail = (msg("POSENC_SANDBOX_MODE=nojail asked for no private file-system view") if caps.userns_jail
                   else msg("this machine allows no user namespaces"))
        if mode == "user":
            notes.append(msg("the grader is not running as root and {no_jail}, so learner code ran as your own "
                             "user; {hidden} kept it to the system and Python folders. Grade as root (a container, "
                             "Gradescope) for the full sandbox", no_jail=no_jail, hidden=hidden))
        else:
            notes.append(msg("the grader is not running as root, {no_jail} and {no_landlock}, so learner code ran "
                             "as your own user, able to read and write whatever you can. Grade as root (a "
                             "container, Gradescope) for the full sandbox", no_jail=no_jail, no_landlock=no_landlock))
    if jail and not caps.pidns:
        notes.append(msg("no PID namespace could be made here, so the /proc in learner code's view was the machine's "
                         "({hidden} let it read its own process's folder only)", hidden=hidden) if landlock
                     else msg("no PID namespace could be made here, so the /proc in learner code's view was the "
                              "machine's: it could list every process and read their command lines"))

    # ---- what Landlock misses
    if not caps.seccomp:
        notes.append(msg("seccomp is not available here, so learner code could change the modes, owners and times "
                         "of files it can write to, open UDP and Unix sockets, and use System V IPC and memfd"))

    # ---- memory and processes
    memory_mb = None if req.cuda else req.memory_mb
    if not cgroup:
        # the probe's own words (cgroup.probe: mounts and folders), shown as they are
        here = msg("here ({reason})", reason=caps.cgroup_reason) if caps.cgroup_reason else msg("here")
        if req.cuda:
            notes.append(msg("no cgroup could be made {here}, and CUDA cannot start under an address-space limit: "
                             "this exercise ran without a memory limit", here=here))
        else:
            notes.append(msg("no cgroup could be made {here}: memory was limited by address space only (RLIMIT_AS), "
                             "which memory files and shared memory do not use", here=here))
    if mode == "root-user" and not cgroup:
        notes.append(msg("processes were not limited: root is exempt from RLIMIT_NPROC and no cgroup could be made"))
    nproc = None if mode == "root-user" else req.nproc
    nproc_shared = mode in ("user", "none")  # a user namespace counts its own processes only

    return Policy(
        mode=mode, uid=req.uid if own_uid else None, gid=req.gid if own_uid else None, jail=jail,
        pidns=bool(jail) and caps.pidns,
        jail_dir=req.jail_dir, binds=tuple(req.system), devices=DEVICES + devices,
        withhold=tuple(req.withhold), stub=req.stub, workdir=req.workdir,
        readable=readable, writable=writable, landlock=landlock, seccomp=caps.seccomp,
        cgroup_mb=req.memory_mb + req.cgroup_headroom_mb if cgroup else None,
        cgroup_pids=req.nproc if cgroup else None, memory_mb=memory_mb, nproc=nproc, nproc_shared=nproc_shared,
        cpu_seconds=req.cpu_seconds, file_bytes=req.file_bytes, work_bytes=req.work_bytes,
        chmod_protect=chmod_protect,
        clean_files_of_uid=mode == "root-nojail",
        clean_ipc={"root-nojail": "uid", "root-user": "new", "user": "new", "none": "new"}.get(mode),
        notes=tuple(notes))
