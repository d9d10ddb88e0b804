"""A seccomp-BPF filter for what Landlock does not cover (Linux; standard library and ctypes only).

Landlock confines paths (reads, writes, execution), TCP ports and, from ABI 6, signals and abstract
Unix sockets. It does not cover changing a file's mode, owner, times or extended attributes, UDP,
connecting to a Unix socket by path, System V IPC, memfd, ptrace, namespaces, keyrings, BPF, perf or
io_uring; nor another process's resource limits, priority, scheduling, CPU affinity, I/O priority or
memory placement (prlimit64, setpriority, sched_set*, ioprio_set, migrate_pages, move_pages: only
its own, pid 0 or its own pid), nor, before ABI 5, a terminal's settings (every terminal ioctl, type 'T', fails
with ENOTTY, as on a file that is no terminal: no TIOCSTI, no TCSETS, no TIOCSCTTY). This filter
makes those system calls fail with EPERM in the calling process and everything it starts: learner
code gets a Python exception (`PermissionError`) it can report, never a silent kill. A foreign
system-call convention (i386 `int 0x80` or x32 on x86_64), which would bypass a table of x86_64
numbers, kills the process: no honest Python program uses one.

The filter is generated from the declared tables below: `NUMBERS` (system call numbers per
architecture) and `RULES` (what each denied call may still do). `install()` installs it;
probe.seccomp_works() tries it once in a throw-away child.

Numbers: x86_64 from the kernel's arch/x86/entry/syscalls/syscall_64.tbl (= the uapi header
asm/unistd_64.h); aarch64 from include/uapi/asm-generic/unistd.h (arm64 uses the generic table, which
has no chmod, chown, utime... only their *at forms). tests/test_sandbox_mechanisms.py checks them
against the headers installed on the test machine.
"""

import ctypes
import errno
import os
import struct

# ---- the tables (data) -----------------------------------------------------------------------------
# name: (x86_64, aarch64); None where the architecture does not have the call
NUMBERS = {
    # file modes, owners, times, attributes (Landlock does not check them)
    "chmod": (90, None), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
    "chown": (92, None), "fchown": (93, 55), "lchown": (94, None), "fchownat": (260, 54),
    "utime": (132, None), "utimes": (235, None), "utimensat": (280, 88), "futimesat": (261, None),
    "setxattr": (188, 5), "lsetxattr": (189, 6), "fsetxattr": (190, 7), "setxattrat": (463, 463),
    "removexattr": (197, 14), "lremovexattr": (198, 15), "fremovexattr": (199, 16), "removexattrat": (466, 466),
    "file_setattr": (469, 469),
    # sockets of every family: UDP, Unix (by path or abstract), raw, netlink...
    "socket": (41, 198), "socketpair": (53, 199),
    # System V IPC
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    # anonymous memory files (not charged to RLIMIT_AS)
    "memfd_create": (319, 279), "memfd_secret": (447, 447),
    # other processes' memory and file descriptors
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "pidfd_getfd": (438, 438), "process_madvise": (440, 440), "kcmp": (312, 272),
    # mounts, namespaces, root folder (the jail is built before the filter is installed)
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "unshare": (272, 97), "setns": (308, 268), "open_tree": (428, 428), "open_tree_attr": (467, 467),
    "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432),
    "fspick": (433, 433), "mount_setattr": (442, 442),
    # kernel facilities learner code has no business with
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218), "bpf": (321, 280),
    "perf_event_open": (298, 241), "userfaultfd": (323, 282), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "kexec_load": (246, 104),
    "kexec_file_load": (320, 294), "init_module": (175, 105), "finit_module": (313, 273),
    "delete_module": (176, 106), "open_by_handle_at": (304, 265),
    # calls allowed only with some arguments (RULES)
    "personality": (135, 92), "clone": (56, 220), "clone3": (435, 435),
    "kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
    "rt_tgsigqueueinfo": (297, 240), "pidfd_send_signal": (424, 424),
    "prlimit64": (302, 261), "setpriority": (141, 140), "sched_setparam": (142, 118),
    "sched_setscheduler": (144, 119), "sched_setaffinity": (203, 122), "sched_setattr": (314, 274),
    "ioprio_set": (251, 30), "migrate_pages": (256, 238), "move_pages": (279, 239), "ioctl": (16, 29),
    # used by install() itself
    "seccomp": (317, 277),
}

# clone() flags that create namespaces (include/uapi/linux/sched.h): NEWNS, NEWCGROUP, NEWUTS, NEWIPC,
# NEWUSER, NEWPID, NEWNET. (CLONE_NEWTIME, 0x80, exists for unshare and clone3 only.)
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
OWN = "own pid"  # stands for the pid of the process that installs the filter
OWN_GROUP = "own process group"  # kill(-pid): the process group it leads (the fork server's child does)
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1  # <sys/resource.h>, <linux/ioprio.h>
# Terminal ioctls are type 'T' (include/uapi/asm-generic/ioctls.h: 0x54xx, and with a direction and size,
# TCSETS2 = 0x402C542B...). These few share the type but concern any file: FIONREAD, FIONBIO, FIONCLEX,
# FIOCLEX, FIOASYNC, FIOQSIZE (Python's os.set_inheritable uses FIOCLEX, falling back to fcntl on ENOTTY).
TERMINAL_IOCTL = (0xFF00, 0x5400)  # (mask, value) of the command's low 32 bits
FILE_IOCTLS = (0x541B, 0x5421, 0x5450, 0x5451, 0x5452, 0x5460)

_DENIED = [
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr", "setxattrat",
    "removexattr", "lremovexattr", "fremovexattr", "removexattrat", "file_setattr",
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
    "msgget", "msgsnd", "msgrcv", "msgctl", "memfd_create", "memfd_secret",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree", "open_tree_attr",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "open_by_handle_at",
    "tkill", "pidfd_send_signal",
]
NETWORK = ["socket", "socketpair"]

# Each rule: (system call, what to do). "deny": always fail with the errno. ("allow arg0", values):
# fail unless the first argument's low 32 bits are one of the values (the kernel reads these
# arguments as 32-bit int / unsigned int). ("allow args", {index: values}): fail unless every named
# argument's low 32 bits are one of its values. ("deny arg0 bits", mask): fail when any bit of the mask
# is set in the first argument's low 32 bits. ("deny arg1 masked", (mask, value, exceptions)): fail when
# the second argument's low 32 bits, masked, equal the value, unless they are one of the exceptions.
# errno EPERM unless given.
RULES = [(name, "deny", None, errno.EPERM) for name in _DENIED] + [
    # PER_LINUX and the query 0xffffffff only: no ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC...
    ("personality", "allow arg0", (0, 0xFFFFFFFF), errno.EPERM),
    # fork and threads yes, new namespaces no
    ("clone", "deny arg0 bits", CLONE_NAMESPACES, errno.EPERM),
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes glibc fall back to clone
    ("clone3", "deny", None, errno.ENOSYS),
    # signals only to itself and its own process group: never the grader, the fork server, a bystander
    ("kill", "allow arg0", (OWN, OWN_GROUP), errno.EPERM),
    ("tgkill", "allow arg0", (OWN,), errno.EPERM),
    ("rt_sigqueueinfo", "allow arg0", (OWN,), errno.EPERM),
    ("rt_tgsigqueueinfo", "allow arg0", (OWN,), errno.EPERM),
    # limits, priority, scheduling, affinity, I/O priority and memory placement of itself only (0: the
    # caller): never the grader's, whose batch would die on a file-size limit or crawl at nice 19
    ("prlimit64", "allow arg0", (0, OWN), errno.EPERM),
    ("setpriority", "allow args", {0: (PRIO_PROCESS,), 1: (0, OWN)}, errno.EPERM),
    ("sched_setparam", "allow arg0", (0, OWN), errno.EPERM),
    ("sched_setscheduler", "allow arg0", (0, OWN), errno.EPERM),
    ("sched_setaffinity", "allow arg0", (0, OWN), errno.EPERM),
    ("sched_setattr", "allow arg0", (0, OWN), errno.EPERM),
    ("ioprio_set", "allow args", {0: (IOPRIO_WHO_PROCESS,), 1: (0, OWN)}, errno.EPERM),
    ("migrate_pages", "allow arg0", (0, OWN), errno.EPERM),
    ("move_pages", "allow arg0", (0, OWN), errno.EPERM),
    # no terminal: not the grader's (opened by path, /dev/pts/N), not one of its own
    ("ioctl", "deny arg1 masked", (*TERMINAL_IOCTL, FILE_IOCTLS), errno.ENOTTY),
]
NETWORK_RULES = [(name, "deny", None, errno.EPERM) for name in NETWORK]

# <linux/audit.h>: AUDIT_ARCH_* = EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
ARCHES = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}  # name: (column in NUMBERS, AUDIT_ARCH)
X32_SYSCALL_BIT = 0x40000000  # x86_64: system calls of the x32 ABI carry this bit

# ---- classic BPF (include/uapi/linux/filter.h, seccomp.h) -------------------------------------------
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K, AND_K = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
RET_KILL_PROCESS, RET_ALLOW, RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
OFF_NR, OFF_ARCH, OFF_ARG0_LOW = 0, 4, 16  # struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];}
# (the low 32 bits of argument i are at OFF_ARG0_LOW + 8 i on a little-endian machine: x86_64, aarch64)
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 1, 1
PR_SET_NO_NEW_PRIVS = 38


class Unsupported(OSError):
    """This architecture has no table here, or the kernel refused the filter."""


def machine():
    return os.uname().machine


def _op(code, k=0, jt=0, jf=0):
    return (code, jt, jf, k & 0xFFFFFFFF)


def _value(value, pid):
    # the low 32 bits the kernel compares: own pid, or -pid (the process group) in two's complement
    return {OWN: pid, OWN_GROUP: -pid}.get(value, value) & 0xFFFFFFFF


def _assemble(items):
    """Instructions (code, jt, jf, k) from a list of (code, k, jt, jf) tuples and labels (strings), where jt
    and jf may name a label further on: resolved to relative jumps."""
    where, n = {}, 0
    for item in items:
        if isinstance(item, str):
            where[item] = n
        else:
            n += 1
    out = []
    for item in items:
        if isinstance(item, str):
            continue
        code, k, jt, jf = item
        here = len(out) + 1
        jt, jf = (where[j] - here if isinstance(j, str) else j for j in (jt, jf))
        out.append(_op(code, k, jt, jf))
    return out


def program(arch, pid, deny_network=True):
    """The filter for `arch` as a list of (code, jt, jf, k). Every rule is a self-contained block that
    ends in a return, so blocks can be laid out one after another."""
    column, audit_arch = ARCHES[arch]
    prog = [_op(LD_W_ABS, OFF_ARCH),
            _op(JEQ_K, audit_arch, jt=1),  # our architecture: skip the kill
            _op(RET_K, RET_KILL_PROCESS),
            _op(LD_W_ABS, OFF_NR)]
    if arch == "x86_64":
        prog += [_op(JGE_K, X32_SYSCALL_BIT, jf=1), _op(RET_K, RET_KILL_PROCESS)]
    for name, action, arg, err in RULES + (NETWORK_RULES if deny_network else []):
        number = NUMBERS[name][column]
        if number is None:
            continue
        deny = _op(RET_K, RET_ERRNO | err)
        if action == "deny":
            block = [deny]
        elif action == "allow arg0":
            values = [_value(v, pid) for v in arg]
            # A = arg0; each equal value jumps to the allow at the end, past the remaining tests and the deny
            block = [_op(LD_W_ABS, OFF_ARG0_LOW)]
            block += [_op(JEQ_K, v, jt=len(values) - i) for i, v in enumerate(values)]
            block += [deny, _op(RET_K, RET_ALLOW)]
        elif action == "allow args":
            # each argument in turn: one of its values goes on to the next argument (after the last: allow)
            block, tests = [], sorted(arg.items())
            for n, (index, values) in enumerate(tests):
                then = f"arg{n + 1}" if n + 1 < len(tests) else "allow"
                block += [f"arg{n}", (LD_W_ABS, OFF_ARG0_LOW + 8 * index, 0, 0)]
                block += [(JEQ_K, _value(v, pid), then, "deny" if i == len(values) - 1 else 0)
                          for i, v in enumerate(values)]
            block = _assemble(block + ["deny", (RET_K, RET_ERRNO | err, 0, 0), "allow", (RET_K, RET_ALLOW, 0, 0)])
        elif action == "deny arg0 bits":
            block = [_op(LD_W_ABS, OFF_ARG0_LOW), _op(JSET_K, arg, jf=1), deny, _op(RET_K, RET_ALLOW)]
        elif action == "deny arg1 masked":
            mask, value, exceptions = arg
            block = _assemble([(LD_W_ABS, OFF_ARG0_LOW + 8, 0, 0)]
                              + [(JEQ_K, e, "allow", 0) for e in exceptions]
                              + [(AND_K, mask, 0, 0), (JEQ_K, value, "deny", "allow"),
                                 "deny", (RET_K, RET_ERRNO | err, 0, 0), "allow", (RET_K, RET_ALLOW, 0, 0)])
        else:
            raise ValueError(f"unknown rule action {action!r}")
        # A = nr; not this call: jump over its block (the block reloads A itself, and always returns)
        prog += [_op(JEQ_K, number, jf=len(block))] + block
    return prog + [_op(RET_K, RET_ALLOW)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def install(deny_network=True, pid=None):
    """Install the filter on this process (all its threads: TSYNC) and everything it starts.
    Sets no_new_privs first, which seccomp requires of an unprivileged process. Returns the
    architecture's name; raises Unsupported on an architecture without a table, or if the kernel
    refuses (then nothing was installed)."""
    arch = machine()
    if arch not in ARCHES:
        raise Unsupported(errno.ENOSYS, f"no seccomp table for architecture {arch}")
    prog = program(arch, os.getpid() if pid is None else pid, deny_network)
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(prog), ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise Unsupported(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
    number = NUMBERS["seccomp"][ARCHES[arch][0]]
    ret = _libc.syscall(ctypes.c_long(number), ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
                        ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog))
    if ret != 0:  # -1 with errno, or (TSYNC) the id of a thread that could not be synchronised
        err = ctypes.get_errno() if ret < 0 else errno.EBUSY
        raise Unsupported(err, f"seccomp(SET_MODE_FILTER): {os.strerror(err)}")
    return arch
