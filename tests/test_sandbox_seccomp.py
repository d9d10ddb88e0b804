"""The seccomp filter (grader/sandbox/confine/seccomp.py): its numbers against the kernel headers installed here,
its program run through a classic-BPF interpreter written from the kernel's documentation
(Documentation/networking/filter.rst, userspace-api/seccomp_filter.rst), and the installed filter in
forked children: plain Python ones, and one with torch and matplotlib doing what a sandbox child does."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import resource
import socket
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from grader.sandbox.confine import seccomp
from grader.sandbox.runtime.probe import seccomp_works
from tests.conftest import ROOT

HEADERS = {"x86_64": ["/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"],
           "aarch64": ["/usr/include/asm-generic/unistd.h"]}


def header_numbers(arch):
    for path in HEADERS[arch]:
        if os.path.exists(path):
            text = Path(path).read_text()
            return {m[1]: int(m[2]) for m in re.finditer(r"^#define __NR_(\w+)\s+(\d+)\s*$", text, re.M)}
    pytest.skip(f"no kernel headers for {arch} here")


@pytest.mark.parametrize("arch", sorted(seccomp.ARCHES))
def test_numbers_are_the_kernel_headers(arch):
    column = seccomp.ARCHES[arch][0]
    known = header_numbers(arch)
    newest = max(known.values())
    checked = 0
    for name, numbers in seccomp.NUMBERS.items():
        ours = numbers[column]
        if ours is not None and ours > newest:
            continue  # newer than these headers (fchmodat2 is 6.6, the headers may be older)
        if name in known:
            assert ours == known[name], (arch, name, ours, known[name])
            checked += 1
        else:
            assert ours is None, (arch, name, "not in the headers")
    assert checked > 60


def test_every_rule_names_a_known_call():
    names = [r[0] for r in seccomp.RULES + seccomp.NETWORK_RULES]
    assert len(names) == len(set(names))
    assert set(names) <= set(seccomp.NUMBERS)
    brief = {"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
             "utimensat", "futimesat", "socket", "socketpair", "shmget", "shmat", "shmctl", "semget", "semop",
             "semctl", "semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "memfd_create", "memfd_secret",
             "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "unshare",
             "setns", "chroot", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
             "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "init_module",
             "finit_module", "personality", "open_by_handle_at"}
    assert brief <= set(names), brief - set(names)


# ---- a classic-BPF interpreter for seccomp programs ----------------------------------------------------
def evaluate(prog, nr, arch, args=(0,) * 6):
    """Run `prog` on struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]} (little-endian)."""
    args = [a & (2 ** 64 - 1) for a in args] + [0] * (6 - len(args))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    pc, acc = 0, 0
    for _ in range(len(prog) + 1):
        code, jt, jf, k = prog[pc]
        cls = code & 0x07
        if cls == 0x00:  # BPF_LD
            assert code == 0x20, hex(code)  # BPF_W | BPF_ABS only
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif cls == 0x05:  # BPF_JMP
            op = code & 0xF0
            taken = {0x10: acc == k, 0x30: acc >= k, 0x40: bool(acc & k)}[op]  # JEQ, JGE, JSET (BPF_K)
            pc += 1 + (jt if taken else jf)
        elif cls == 0x04:  # BPF_ALU
            assert code == 0x54, hex(code)  # BPF_AND | BPF_K only
            acc &= k
            pc += 1
        elif cls == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        assert pc < len(prog), "ran off the end"
    raise AssertionError("no return")


def errno_of(action):
    return action & 0xFFFF if action & 0xFFFF0000 == seccomp.RET_ERRNO else None


@pytest.mark.parametrize("arch", sorted(seccomp.ARCHES))
def test_the_program_does_what_the_tables_say(arch):
    column, audit = seccomp.ARCHES[arch]
    pid = 4242
    prog = seccomp.program(arch, pid)
    assert len(prog) < 4096  # BPF_MAXINSNS
    number = {n: v[column] for n, v in seccomp.NUMBERS.items()}
    for name, action, _, err in seccomp.RULES + seccomp.NETWORK_RULES:
        if number[name] is not None and action == "deny":
            assert errno_of(evaluate(prog, number[name], audit)) == err, name
    allow = seccomp.RET_ALLOW
    for name in ("read", "write", "openat", "mmap"):  # not in the tables: allowed
        nr = {"read": (0, 63), "write": (1, 64), "openat": (257, 56), "mmap": (9, 222)}[name][column]
        assert evaluate(prog, nr, audit) == allow, name
    # signals: itself and its own process group only
    kill = number["kill"]
    assert evaluate(prog, kill, audit, (pid, 9)) == allow
    assert evaluate(prog, kill, audit, (-pid, 9)) == allow
    for target in (1, pid + 1, -1, 0, -(pid + 1)):
        assert errno_of(evaluate(prog, kill, audit, (target, 9))) == errno.EPERM, target
    assert evaluate(prog, number["tgkill"], audit, (pid, pid + 3, 9)) == allow
    assert errno_of(evaluate(prog, number["tgkill"], audit, (pid + 1, pid + 1, 9))) == errno.EPERM
    # fork and threads, but no namespaces
    clone = number["clone"]
    assert evaluate(prog, clone, audit, (0x11 | 0x01000000 | 0x00200000,)) == allow  # SIGCHLD|CHILD_SETTID|CLEARTID
    assert evaluate(prog, clone, audit, (0x3D0F00,)) == allow  # pthread_create's flags
    for flag in (0x00020000, 0x10000000, 0x40000000, 0x20000000):
        assert errno_of(evaluate(prog, clone, audit, (0x11 | flag,))) == errno.EPERM, hex(flag)
    assert errno_of(evaluate(prog, number["clone3"], audit)) == errno.ENOSYS
    assert evaluate(prog, number["personality"], audit, (0xFFFFFFFF,)) == allow
    assert errno_of(evaluate(prog, number["personality"], audit, (0x0040000,))) == errno.EPERM  # ADDR_NO_RANDOMIZE
    # a foreign convention is killed, never allowed through
    assert evaluate(prog, number["chmod"] or 0, 0x40000003) == seccomp.RET_KILL_PROCESS  # AUDIT_ARCH_I386
    if arch == "x86_64":
        assert evaluate(prog, 0x40000000 | 90, audit) == seccomp.RET_KILL_PROCESS  # x32 chmod
    # limits, priority, scheduling, affinity, I/O priority, memory placement: its own only (0 or its pid)
    for name in ("prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr",
                 "migrate_pages", "move_pages"):
        for target in (0, pid):
            assert evaluate(prog, number[name], audit, (target, 1, 0)) == allow, (name, target)
        for target in (1, pid + 1, pid - 1, -1, pid + (1 << 32) + 1):  # the grader, its parent...
            assert errno_of(evaluate(prog, number[name], audit, (target, 1, 0))) == errno.EPERM, (name, target)
    prio = number["setpriority"]
    for which, who in ((0, 0), (0, pid)):  # PRIO_PROCESS: itself
        assert evaluate(prog, prio, audit, (which, who, 19)) == allow, (which, who)
    for which, who in ((0, 1), (0, pid + 1), (1, 0), (1, pid), (2, 0), (2, 61000), (2, pid)):  # PGRP, USER
        assert errno_of(evaluate(prog, prio, audit, (which, who, 19))) == errno.EPERM, (which, who)
    ioprio = number["ioprio_set"]
    assert evaluate(prog, ioprio, audit, (1, 0, 0)) == allow and evaluate(prog, ioprio, audit, (1, pid, 0)) == allow
    for which, who in ((1, pid + 1), (2, 0), (3, 0), (3, 61000)):  # another process, a group, a user
        assert errno_of(evaluate(prog, ioprio, audit, (which, who, 0))) == errno.EPERM, (which, who)
    # no terminal ioctl on any file (ENOTTY, as on a file that is no terminal); file ioctls go through
    ioctl = number["ioctl"]
    terminal = {"TCGETS": 0x5401, "TCSETS": 0x5402, "TCSETSW": 0x5403, "TCSETSF": 0x5404, "TIOCSCTTY": 0x540E,
                "TIOCSPGRP": 0x5410, "TIOCSTI": 0x5412, "TIOCSWINSZ": 0x5414, "TIOCLINUX": 0x541C,
                "TIOCCONS": 0x541D, "TIOCSETD": 0x5423, "TCSETS2": 0x402C542B, "TIOCSPTLCK": 0x40045431,
                "TIOCGPTPEER": 0x5441}
    for name, cmd in terminal.items():
        assert errno_of(evaluate(prog, ioctl, audit, (1, cmd, 0))) == errno.ENOTTY, name
        assert errno_of(evaluate(prog, ioctl, audit, (1, cmd | (1 << 32), 0))) == errno.ENOTTY, name
    for cmd in (0x541B, 0x5421, 0x5450, 0x5451, 0x5452, 0x5460, 0xC0184800, 0x80086601, 0x4B3A):  # FIO*, others
        assert evaluate(prog, ioctl, audit, (1, cmd, 0)) == allow, hex(cmd)
    # sockets are allowed when the network is
    assert evaluate(seccomp.program(arch, pid, deny_network=False), number["socket"], audit) == allow


# ---- the filter installed ---------------------------------------------------------------------------------
def in_filtered_child(fn):
    """fn() in a forked child after install(); its result (a dict) or the exception it raised."""
    import json

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            seccomp.install()
            os.write(write_fd, json.dumps(fn()).encode())
        except BaseException as exc:
            os.write(write_fd, json.dumps({"raised": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    except termios.error as exc:  # not an OSError: (errno, message)
        return errno.errorcode.get(exc.args[0], str(exc.args[0]))


def test_the_probe_says_it_works_here():
    if os.uname().machine not in seccomp.ARCHES:
        assert not seccomp_works()
        pytest.skip("no table for this architecture")
    assert seccomp_works()


def test_denied_calls_raise_permission_errors_and_ordinary_work_goes_on(tmp_path):
    if not seccomp_works():
        pytest.skip("no seccomp here")
    libc = ctypes.CDLL(None, use_errno=True)

    def libc_call(fn):
        def call():
            if fn() < 0:
                raise OSError(ctypes.get_errno(), "libc")
        return call

    def probe():
        out = {
            "chmod": _outcome(lambda: os.chmod(tmp_path, 0o777)),
            "utime": _outcome(lambda: os.utime(tmp_path, (0, 0))),
            "chown": _outcome(lambda: os.chown(tmp_path, -1, -1)),
            "udp": _outcome(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
            "unix": _outcome(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
            "socketpair": _outcome(socket.socketpair),
            "memfd": _outcome(lambda: os.memfd_create("x")),
            "shmget": _outcome(libc_call(lambda: libc.shmget(0, 4096, 0o1600))),
            "unshare": _outcome(libc_call(lambda: libc.unshare(0x10000000))),
            "kill parent": _outcome(lambda: os.kill(os.getppid(), 0)),
            "kill self": _outcome(lambda: os.kill(os.getpid(), 0)),
            # the grader's limits, priority and CPUs (the parent stands for it): its own only
            "prlimit parent": _outcome(lambda: resource.prlimit(os.getppid(), resource.RLIMIT_FSIZE, (1, 1))),
            "prlimit self": _outcome(lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0))),
            "prlimit own pid": _outcome(lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CORE, (0, 0))),
            "renice parent": _outcome(lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)),
            "renice user": _outcome(lambda: os.setpriority(os.PRIO_USER, os.getuid(), 19)),
            "renice self": _outcome(lambda: os.setpriority(os.PRIO_PROCESS, 0, 1)),
            "affinity parent": _outcome(lambda: os.sched_setaffinity(os.getppid(), {0})),
            "affinity self": _outcome(lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
            "scheduler parent": _outcome(lambda: os.sched_setscheduler(os.getppid(), os.SCHED_IDLE,
                                                                       os.sched_param(0))),
            # terminals: the grader's (a pty here), its settings and input
            "tcsetattr": _outcome(lambda: termios.tcsetattr(tty, termios.TCSANOW, termios.tcgetattr(tty))),
            "tiocsti": _outcome(lambda: fcntl.ioctl(tty, termios.TIOCSTI, b"x")),
            "isatty": os.isatty(tty),
        }
        os.set_inheritable(tty, True)  # FIOCLEX / FIONCLEX: still fine
        out["inheritable"] = os.get_inheritable(tty)
        # what learner code and the probes do: files in its folder, threads, a fork, a signal to itself
        (tmp_path / "f.txt").write_text("x")
        out["file"] = (tmp_path / "f.txt").read_text()
        box = []
        thread = threading.Thread(target=lambda: box.append(1))
        thread.start()
        thread.join()
        out["thread"] = box
        child = os.fork()
        if child == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        return out

    master, tty = os.openpty()
    try:
        got = in_filtered_child(probe)
    finally:
        os.close(master)
        os.close(tty)
    denied = ("chmod", "utime", "chown", "udp", "unix", "socketpair", "memfd", "shmget", "unshare", "kill parent",
              "prlimit parent", "renice parent", "renice user", "affinity parent", "scheduler parent")
    assert {k: got[k] for k in denied} == dict.fromkeys(denied, "EPERM"), got
    assert got["kill self"] == "ok" and got["file"] == "x" and got["thread"] == [1] and got["fork"] == 7, got
    assert got["prlimit self"] == got["prlimit own pid"] == got["renice self"] == got["affinity self"] == "ok", got
    assert (got["tcsetattr"], got["tiocsti"], got["isatty"], got["inheritable"]) == ("ENOTTY", "ENOTTY", False, True)


TORCH_CHILD = r"""
import io, os, sys
sys.path.insert(0, sys.argv[1])
import seccomp
import torch
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

torch.randn(64, 64) @ torch.randn(64, 64)  # the server's state: torch loaded and used, OMP_NUM_THREADS=1
pid = os.fork()
if pid == 0:
    code = 1
    try:
        assert len(os.listdir("/proc/self/task")) == 1, "more than one thread at install: TSYNC matters"
        seccomp.install()
        import fractions, statistics  # imports after the fork, as learner code does
        torch.manual_seed(0)
        torch.set_num_threads(2)  # intra-op threads started under the filter
        x = torch.randn(256, 256, requires_grad=True)
        layer = torch.nn.Linear(256, 64)
        loss = layer(x @ x.T).softmax(-1).sum()
        loss.backward()
        buffer = io.BytesIO()
        torch.save({"w": layer.weight.detach()}, buffer)
        fig, ax = plt.subplots()
        ax.plot(range(10))
        fig.savefig(io.BytesIO(), format="png")
        assert x.grad is not None and buffer.tell() > 0
        code = 0
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_torch_and_matplotlib_need_nothing_the_filter_denies(tmp_path):
    """What a sandbox child does after fork (import, torch ops with threads, autograd, torch.save,
    matplotlib with Agg) runs under the filter. A fresh interpreter: this test process stays torch-free."""
    if not seccomp_works():
        pytest.skip("no seccomp here")
    done = subprocess.run([sys.executable, "-I", "-c", TORCH_CHILD, str(ROOT / "grader" / "sandbox" / "confine")],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": os.environ.get("PATH", ""), "MPLCONFIGDIR": str(tmp_path),
                               "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"})  # as host/client.py starts the zygote
    assert done.returncode == 0, done.stderr[-3000:]
