"""A bounded, seeded fuzz of process-level attacks on the grader (tests/test_trust_boundary.py fuzzes what a
submission's files and results look like): each generated submission is the honest chapter-1 solution plus
a few fragments, at import or inside `shift_matrix`, that aim at the grader's processes: their limits,
priority, CPUs and scheduler (prlimit64, setpriority, sched_*), its terminal (opened by path, terminal
ioctls), /proc (other processes' command lines), daemons that outlive their parent, signals, sessions,
exits. Whatever the mix, grading ends within its time, the grader's limits, priority and terminal are
unchanged, no process of the submission is left (checked from outside, and by the session's own
verification), and the exercises no fragment touched keep full marks."""

from __future__ import annotations

import os
import random
import termios
import time

import pytest

from grader.checks import chapter_checks
from grader.grading import Grader
from grader.sandbox.host.client import Zygote
from grader.settings import Settings
from tests.grading_support import SessionsSeen
from tests.test_hostile import by_exercise, full_marks, honest_source, own_state, sandbox_processes

CH01 = chapter_checks("ch01")
LIMITS = dict(wall_seconds=10, stmt_seconds=3, memory_mb=768, cpu_seconds=20)
GRADER, TTY = "__GRADER__", "__TTY__"

# Each fragment is a few statements, safe to run as uid 0 on the test machine where the sandbox works: no
# PRIO_USER (as root it would renice every root process), targets only the grader's and the child's own pids.
FRAGMENTS = [
    "import resource\nresource.prlimit({pid}, resource.{res}, ({n}, {n}))\n",
    "import os\nos.setpriority(os.{which}, {pid}, 19)\n",
    "import os\nos.sched_setaffinity({pid}, {{min(os.sched_getaffinity(0))}})\n",
    "import os\nos.sched_setscheduler({pid}, os.SCHED_IDLE, os.sched_param(0))\n",
    "import os, fcntl, termios\n_fd = os.open('{tty}', os.O_RDONLY | os.O_NOCTTY)\n"
    "_a = termios.tcgetattr(_fd)\n_a[3] &= ~(termios.ECHO | termios.ICANON)\n"
    "termios.tcsetattr(_fd, termios.TCSANOW, _a)\nfcntl.ioctl(_fd, termios.{ioctl}, b'x' * 8)\n",
    "import os\nos.open('/dev/tty', os.O_RDWR)\n",
    "import os\n_seen = [open(f'/proc/{{p}}/cmdline').read() for p in os.listdir('/proc') if p.isdigit()]\n",
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(300)\n"
    "    os._exit(0)\n",
    "import os\nos.setsid()\n",
    "import os, signal\nos.kill({pid}, signal.{sig})\n",
    "import os, signal\nos.kill(-1, signal.{sig})\n",
    "import os\nos._exit({n})\n",
]


def _fragment(rng, grader_pid, text=None):
    text = text or rng.choice(FRAGMENTS)
    return text.format(pid=rng.choice([GRADER, GRADER, GRADER, "os.getppid()", "1", "0", str(grader_pid + 1)]),
                       res=rng.choice(["RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_AS"]),
                       n=rng.choice([0, 1, 3]), which=rng.choice(["PRIO_PROCESS", "PRIO_PGRP"]), tty=TTY,
                       ioctl=rng.choice(["TIOCSTI", "TIOCSWINSZ", "TIOCSCTTY", "TCFLSH"]),
                       sig=rng.choice(["SIGKILL", "SIGSTOP", "SIGTERM", "SIGXCPU"]))


def _submission(rng, grader_pid):
    """(source, touched): fragments at import (each in a try, or not) or in a new shift_matrix."""
    top, inside = [], []
    aimed = rng.choice(FRAGMENTS[:4]).replace("{pid}", GRADER)  # at least one aimed at the grader's pid
    for n in range(rng.randint(2, 5)):
        body = _fragment(rng, grader_pid, aimed if n == 0 else None).replace(GRADER, str(grader_pid))
        if rng.random() < 0.5:
            guarded = rng.random() < 0.7
            top.append("try:\n" + "".join("    " + line + "\n" for line in body.splitlines())
                       + "except BaseException:\n    pass\n" if guarded else body)
        else:
            inside.append(body)
    source = honest_source() + "\n\n" + "\n".join(top)
    if inside:
        source += "\n_honest = shift_matrix\n\n\ndef shift_matrix(k, d_model, base=10000.0):\n"
        source += "".join("    " + line + "\n" for part in inside for line in part.splitlines())
        source += "    return _honest(k, d_model, base)\n"
    return source


@pytest.mark.parametrize("mode", ["auto", "user"])
def test_seeded_process_attacks_leave_the_grader_and_the_machine_as_they_were(mode, tmp_path):
    settings = Settings.from_env(sandbox_mode=mode, limits=LIMITS)
    caps = Zygote.start(settings).ready()
    if not caps["seccomp"] or (mode == "user" and not (caps["root"] and caps["landlock"] >= 6)):
        pytest.skip("these fragments are safe to run only where seccomp (and, as uid 0, Landlock 6) confine them")
    rng = random.Random(20261201)
    tty_master, tty = os.openpty()  # stands for the terminal the instructor grades from
    os.set_blocking(tty, False)
    before_tty, before = termios.tcgetattr(tty), own_state()
    grader = Grader(settings, CH01, zygote=SessionsSeen(Zygote.start(settings)))
    try:
        for n in range(6):
            source = _submission(rng, os.getpid()).replace(TTY, os.ttyname(tty))
            path = tmp_path / f"s{n}.py"
            path.write_text(source)
            start = time.monotonic()
            grade = grader.grade(path)
            session = grader.zygote.sessions[-1]
            assert time.monotonic() - start < 120, n
            assert own_state() == before, (n, source)  # the grader's limits, priority, CPUs, scheduler
            assert termios.tcgetattr(tty) == before_tty, (n, source)
            assert not sandbox_processes(session.root, session.uid, grader.zygote, session.closing), (n, source)
            assert session.left_behind == [] and not session.closing_notes, (n, session.closing_notes)
            groups = by_exercise(grade.verdicts)
            touched = "os._exit" in source or "SIGSTOP" in source or "SIGKILL" in source
            if not touched:  # exits and signals at import may cost a statement's definitions; nothing else may
                assert full_marks(groups["sinusoidal_table"]), (n, source)
        try:
            typed = os.read(tty, 100)
        except BlockingIOError:
            typed = b""
        assert typed == b""  # nothing was pushed into the terminal's input
    finally:
        os.close(tty)
        os.close(tty_master)
