"""Landlock for one sandbox child (Linux 5.13+, root or not; standard library and ctypes only).

`restrict` allows reads only below the system and Python folders (/etc without its secrets, and never the
grader's secret file wherever it lies; of the machine's /proc only the child's own folder; of /dev only the
devices paths.DEVICES names), writes only in the working folder, and no program execution; from ABI 4
no TCP, from ABI 5 no ioctl on a device it may only read (no terminal), from ABI 6 no signals to processes
outside the sandbox. `abi()` says which ABI the kernel offers (0: none).
"""

import ctypes
import os
import stat

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from ..paths import without
    from .kernel import PR_SET_NO_NEW_PRIVS, check, libc, prctl
except ImportError:
    from kernel import PR_SET_NO_NEW_PRIVS, check, libc, prctl
    from paths import without

# Entries of /etc that Landlock never lets a child read, should it run as uid 0 (policy.py: only
# with POSENC_SANDBOX_MODE=user), where owner permissions would let it: password hashes, sudo rules,
# host keys, TLS private keys, stored secrets. Nothing a grading run needs.
ETC_WITHHELD = ("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl", "security",
                "krb5.keytab", "credstore", "credstore.encrypted", "wireguard", "NetworkManager", "ipsec.secrets",
                "ppp", "openvpn", "libvirt", ".pwd.lock")

# Entries of /proc that list or describe other processes (besides the numbered folders), or the kernel's memory
PROC_WITHHELD = ("sched_debug", "timer_list", "kcore", "kmsg", "kpagecgroup", "kpagecount", "kpageflags",
                 "sysrq-trigger", "locks")


def abi():
    """The Landlock ABI this kernel offers, 0 when none."""
    try:
        found = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    except Exception:
        return 0
    return max(int(found), 0)


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


def withheld(extra=()):
    """The real paths no child reads, whatever folder around them it may: /etc's secrets (ETC_WITHHELD) and
    `extra` (the grader's secret, policy.Request.withhold)."""
    etc = os.path.realpath("/etc")
    return [os.path.join(etc, n) for n in ETC_WITHHELD] + [os.path.realpath(p) for p in extra]


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


def restrict(read, write, abi, own_proc=True, withhold=()):
    """Restrict this process (and everything it starts) to reading `read` but `withhold` and /etc's
    secrets (`withheld`: wherever they lie below `read`; with `own_proc`, /proc without other processes'
    folders) and writing `write`; nothing may be executed. Returns the ABI used (0 when Landlock is
    unavailable)."""
    if abi < 1:
        return 0
    read = without(read, withheld(withhold))
    read = _own_proc(read) if own_proc else read
    # refer from ABI 2, truncate from 3, ioctl on devices from 5: none on a device it may only read (a
    # terminal: no stty, no TIOCSTI, even where seccomp is missing)
    handled = (1 << (13 if abi == 1 else 14 if abi == 2 else 15 if abi < 5 else 16)) - 1
    attr = _RulesetAttr(handled, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)  # TCP bind+connect; signal+unix scope
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = check(libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
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
                    check(libc.syscall(445, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule),
                                         ctypes.c_uint32(0)), f"landlock_add_rule {path}")
                finally:
                    os.close(fd)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        check(libc.syscall(446, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi
