"""Hostile and broken submissions (tests/hostile/): each scores zero on what it attacks, its honest
exercises are still graded, the grader finishes within its limits, and nothing else is affected.

Each hostile file is appended to the honest chapter-1 solution; see tests/hostile/README.md.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import resource
import socket
import termios
import time
from dataclasses import dataclass, field

import pytest

from grader.checks import chapter_checks
from grader.grading import Grader
from grader.records import Statement
from grader.results import collect
from grader.sandbox import procs
from grader.sandbox.host.client import Zygote
from grader.sandbox.wire import Probe
from tests.conftest import ROOT, settings
from tests.grading_support import SessionsSeen

HOSTILE = ROOT / "tests" / "hostile"
CH01 = chapter_checks("ch01")
EXERCISES = ("sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding")
LIMITS = dict(wall_seconds=5, stmt_seconds=2, memory_mb=768, cpu_seconds=20)
# files a submission must not be able to change
GUARDED = [ROOT / "posenc_ref" / "ch01_sinusoidal.py", ROOT / "course" / "01_sinusoidal" / "exercises.py",
           ROOT / "solutions" / "01_sinusoidal.ipynb"]


def honest_source():
    """The definitions of the chapter-1 solution notebook, as one .py file."""
    nb = json.loads((ROOT / "solutions" / "01_sinusoidal.ipynb").read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"
             and not {"demo", "selfcheck"} & set(c["metadata"].get("tags", []))]
    return "\n\n".join("".join(c["source"]) for c in cells)


def match(check):
    return check.expect == "match"


def returns_a_tensor(check):
    return check.expect != "raises"


@dataclass
class Case:
    zero: str | None = None  # the exercise whose checks must all score zero
    zero_if: object = None  # or: only its checks for which this returns True (the rest must pass)
    note: str | None = None  # words the grading notes must contain
    feedback: str | None = None  # words the attacked exercise's feedback must contain
    never: tuple = ()  # words that must appear nowhere in feedback or notes
    seconds: float = 40.0  # the whole grading must finish within this
    root_only: bool = False  # needs the sandbox's own uid (RLIMIT_NPROC per uid)
    bystander: bool = False  # another submission's sandbox is open meanwhile and must be unharmed
    limits: dict = field(default_factory=dict)


S = "shift_matrix"
# the memory bombs fill a smaller allowance than LIMITS': every check of shift_matrix fills it again, and 256 MB meets
# the limit as surely as 768 MB in a third of the time
BOMB_LIMITS = {"wall_seconds": 20, "memory_mb": 256}
CASES = {
    "sys_exit_at_import": Case(note="sys.exit(0)"),
    "os_exit_at_import": Case(note="this statement ended the process"),
    "exit_like_the_sandbox": Case(note="this statement ended the process and was skipped (the process ended early)"),
    "sys_exit_in_exercise": Case(zero=S, feedback="SystemExit"),
    "os_exit_in_exercise": Case(zero=S, feedback="no result"),
    "infinite_loop_in_exercise": Case(zero=S, feedback="timed out", seconds=30, limits={"wall_seconds": 3}),
    "infinite_loop_at_import": Case(note="this statement ended the process and was skipped (the process was ended: one "
                                         "top-level statement ran", seconds=35),
    "memory_bomb": Case(zero=S, feedback="can't allocate memory", seconds=60, limits=BOMB_LIMITS),
    "fork_outlives_parent": Case(),
    "fork_bomb": Case(zero=S, root_only=True, seconds=30, bystander=True, limits={"wall_seconds": 3}),
    "monkeypatch_comparisons": Case(zero=S),
    "import_reference": Case(zero=S, feedback="BLOCKED", never=("def shift_matrix",)),
    "read_reference_files": Case(zero=S, feedback="BLOCKED", never=("LEAKED", "def shift_matrix", "Check(")),
    "fake_results_file": Case(zero=S, never=("31337", "FAKE-RESULT")),
    "print_fake_results": Case(zero=S, never=("31337", "FAKE-RESULT", "All tests passed")),
    "tensor_subclass": Case(zero=S, feedback="tensor subclass"),
    "pickle_payload": Case(zero=S, feedback="expected a tensor"),
    "nan_output": Case(zero=S),
    "complex_nan": Case(zero=S, zero_if=lambda check: check.expect == "property", feedback="is a complex tensor"),
    "wrong_dtype": Case(zero=S, zero_if=match, feedback="expected dtype float32, got float64"),
    "lying_metadata": Case(zero=S, zero_if=returns_a_tensor, feedback="said to be float32 but holds torch.float64"),
    "kill_the_grader": Case(bystander=True),
    # what Landlock alone misses (the weaker modes' holes), stopped here end to end; tests/test_sandbox_mechanisms.py
    # proves each one in every mode at the mechanism level
    "chmod_home": Case(zero=S, feedback="BLOCKED", never=("CHANGED",)),
    "udp_exfiltrate": Case(zero=S, feedback="BLOCKED", never=("SENT",)),
    "tcp_connect": Case(zero=S, feedback="BLOCKED", never=("SENT",)),
    "unix_socket": Case(zero=S, feedback="BLOCKED", never=("CONNECTED",)),
    "sysv_shm_hoard": Case(zero=S, feedback="BLOCKED", never=("HOARDED",)),
    "memfd_bomb": Case(zero=S, feedback="BLOCKED", never=("FILLED",), seconds=60, limits={"wall_seconds": 20}),
    "mmap_bomb": Case(zero=S, feedback="STOPPED after", never=("FILLED",), seconds=60, limits=BOMB_LIMITS),
    "dev_shm_hoard": Case(zero=S),  # judged by its effects: nothing left on the host (below)
    "read_shadow": Case(zero=S, feedback="BLOCKED as uid", never=("LEAKED",)),
    "read_other_students": Case(zero=S, feedback="BLOCKED", never=("SECRET",)),
    "read_instructor_files": Case(zero=S, feedback="BLOCKED", never=("SECRET",)),
    "write_outside": Case(zero=S),  # judged by its effects: the marker, .bashrc, the host's /tmp
    "fork_flood": Case(zero=S, feedback="STOPPED after", never=("STARTED",), seconds=60, limits={"wall_seconds": 20}),
    # the grader's own processes and terminal (found against the non-root modes)
    "renice_the_grader": Case(zero=S, feedback="BLOCKED", never=("CHANGED",)),
    "terminal_settings": Case(zero=S, feedback="BLOCKED", never=("CHANGED",)),
    "proc_snoop": Case(zero=S, feedback="BLOCKED", never=("LEAKED",)),
}


class Listeners:
    """A TCP, a UDP and a Unix socket (by path and abstract) on this machine that record what reaches them."""

    def __init__(self, folder):
        self.received = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.path = str(folder / "grader.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.path)
        self.unix.listen()
        os.chmod(self.path, 0o777)
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind("\0" + self.path)
        self.abstract.listen()
        for s in (self.tcp, self.udp, self.unix, self.abstract):
            s.setblocking(False)

    def drain(self):
        for s in (self.tcp, self.unix, self.abstract):
            try:
                conn, _ = s.accept()
                self.received.append(conn.recv(1000) or b"(connected)")
                conn.close()
            except (BlockingIOError, OSError):
                pass
        try:
            self.received.append(self.udp.recv(1000))
        except (BlockingIOError, OSError):
            pass
        return self.received

    def close(self):
        for s in (self.tcp, self.udp, self.unix, self.abstract):
            s.close()


def host_leftovers(run):
    """Files the attacks of this test (`run`: the token in their names, __RUN__) try to leave in the host's
    shared folders. Only this test's: another test run on the machine meanwhile (another job, another
    worktree) may leave or remove its own."""
    return sorted(path for folder in ("/dev/shm", "/tmp") for kind in ("hoard", "planted")
                  for path in glob.glob(f"{folder}/posenc-{kind}-{run}-*"))


def home_state(home):
    info = os.stat(home)
    return info.st_mode, info.st_uid, info.st_mtime_ns, (home / ".bashrc").read_bytes()


def sandbox_processes(root, uid, zygote=None, closing=None):
    """Live processes of the sandbox's uid or whose command line names the sandbox's folder, or the
    zygote's (every sandbox process is a fork of it, under its command line) other than the zygote itself.
    (Not "any sandbox uid": other graders may be running on this machine meanwhile. Once the session closed,
    its uid is free, and another grader on the machine may take it at once: a process of that uid counts only
    when it started before `closing`, boot_ticks() when the session's close began: SeenSession.closing.)"""
    found = procs.uid_pids(uid) if uid is not None else []
    if closing is not None:
        found = [pid for pid in found if (procs.started(pid) or closing) < closing]
    names = [str(root).encode()] + ([str(zygote.root).encode()] if zygote is not None else [])
    for pid in procs.descendants(1):
        if zygote is not None and pid == zygote.proc.pid:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if any(name in cmdline for name in names):
            found.append(pid)
    return found


def own_state():
    """What learner code must not change in the grader (this process): limits, priority, CPUs, scheduler."""
    return [resource.getrlimit(resource.RLIMIT_FSIZE), resource.getrlimit(resource.RLIMIT_CPU),
            os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)), os.sched_getscheduler(0)]


def digest(paths):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def grade(submission, limits, keep=()):
    """(verdicts, notes, seconds, processes of the submission still alive afterwards; `keep`: another
    submission's session, open meanwhile)."""
    start = time.monotonic()
    chosen = settings(**limits)
    grader = Grader(chosen, CH01, zygote=SessionsSeen(Zygote.start(chosen)))
    result = grader.grade(submission)
    session = grader.zygote.sessions[-1] if grader.zygote.sessions else None
    left = sandbox_processes(session.root, session.uid, grader.zygote, session.closing) if session else []
    left = [pid for pid in left if pid not in keep]
    if session:
        assert session.left_behind == [] and not session.closing_notes, session.closing_notes
    return result.verdicts, [str(n) for n in result.notes], time.monotonic() - start, left


def by_exercise(results):
    out = {}
    for r in results:
        out.setdefault(r.check.exercise, []).append(r)
    return out


def full_marks(rs):
    top = sum(r.max_score for r in rs)
    return top > 0 and sum(r.score for r in rs) == top


@pytest.fixture(scope="module")
def caps():
    return Zygote.start(settings()).ready()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_submission(name, tmp_path, caps):
    case = CASES[name]
    if case.root_only and not (caps["root"] and (caps["jail"] or caps["python_readable"])):
        pytest.skip("needs the sandbox's own uid (grader running as root)")
    if name == "kill_the_grader" and not (caps["root"] or caps["seccomp"] or caps["landlock"] >= 6):
        pytest.skip("without a uid of its own or Landlock signal scoping, a child can signal the grader")
    marker, target, home, others = tmp_path / "marker", tmp_path / "results", tmp_path / "home", tmp_path / "class"
    for folder in (target, home, others):
        folder.mkdir()
        os.chmod(folder, 0o777)  # writable by anyone: only the sandbox can keep a submission out
    os.chmod(tmp_path, 0o777)
    (home / ".bashrc").write_text("# SECRET shell start-up\n")
    (home / "id_ed25519").write_text("SECRET key\n")
    (others / "alice.py").write_text("SECRET = 'a classmate's answer'\n")
    listeners = Listeners(tmp_path)
    run = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    home_before, leftovers_before = home_state(home), host_leftovers(run)
    tty_master, tty = os.openpty()  # stands for the terminal the instructor grades from (the grader's uid owns it)
    os.set_blocking(tty, False)
    tty_before, grader_before = termios.tcgetattr(tty), own_state()
    attack = (HOSTILE / f"{name}.py").read_text()
    for key, value in (("__REPO__", str(ROOT)), ("__MARKER__", str(marker)), ("__TARGET__", str(target)),
                       ("__HOME__", str(home)), ("__OTHERS__", str(others)), ("__PORT__", str(listeners.port)),
                       ("__SOCKET__", listeners.path), ("__RUN__", run), ("__GRADER__", str(os.getpid())),
                       ("__TTY__", os.ttyname(tty)), ("__TOP__", str(tmp_path))):
        attack = attack.replace(key, value)
    submission = tmp_path / "submission.py"
    submission.write_text(honest_source() + "\n\n" + attack)
    before = digest(GUARDED)
    bystander = Zygote.start(settings(**LIMITS)).session(settings(**LIMITS)) if case.bystander else None
    try:
        if bystander:
            bystander._open()
        keep = [bystander.pid, *procs.descendants(bystander.pid)] if bystander else []
        results, notes, seconds, left = grade(submission, {**LIMITS, **case.limits}, keep)
        if bystander:  # the other submission's session survived and still grades
            check = next(c for c in CH01 if c.exercise == "sinusoidal_table" and c.expect == "match")
            request = Probe("p0", check.probe, check.params, check.exercise)
            other = bystander.run([Statement("cell", honest_source())], [request],
                                  lambda outdir, reqs, ended: collect(outdir, reqs, ended, 1 << 28))
            assert other.ended == "ok" and "error" not in other.results["p0"]
    finally:
        if bystander:
            bystander.close()
        received = listeners.drain()
        listeners.close()
        try:
            typed = os.read(tty, 100)
        except BlockingIOError:
            typed = b""
        tty_after = termios.tcgetattr(tty)
        os.close(tty)
        os.close(tty_master)

    assert (tty_after, typed) == (tty_before, b"")  # the grader's terminal: settings, input
    assert own_state() == grader_before  # the grader's limits, priority, CPUs
    assert received == [], received  # nothing reached a socket on this machine
    assert home_state(home) == home_before  # the grading user's home: mode, owner, times, .bashrc
    assert host_leftovers(run) == leftovers_before

    assert seconds < case.seconds, f"grading took {seconds:.1f} s"
    assert digest(GUARDED) == before
    assert not marker.exists() and not list(target.iterdir())
    assert not left, "a process of the submission outlived grading"
    text = "\n".join(notes + [str(r.feedback) for r in results])
    for word in case.never:
        assert word not in text
    if case.note:
        assert case.note in "\n".join(notes), notes
    groups = by_exercise(results)
    assert set(groups) == set(EXERCISES)
    for exercise, rs in groups.items():
        if exercise != case.zero:
            assert full_marks(rs), (exercise, [(r.check.name, str(r.feedback)) for r in rs if r.score < r.max_score])
            continue
        attacked = [r for r in rs if case.zero_if is None or case.zero_if(r.check)]
        assert attacked and all(r.score == 0 for r in attacked), [(r.check.name, r.status) for r in attacked]
        # the rest passed; or, when no reference check of the exercise passed, earn nothing (grading.gate)
        assert all(r.status == "passed" or "counts once" in str(r.feedback) for r in rs if r not in attacked)
        if case.feedback:
            assert any(case.feedback in str(r.feedback) for r in attacked), [str(r.feedback) for r in attacked]


# ---- broken files ---------------------------------------------------------------------------------
def _folder_with_honest(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "a_honest.py").write_text(honest_source())
    return folder


def test_a_notebook_that_is_not_json_is_a_note_and_the_rest_is_graded(tmp_path):
    folder = _folder_with_honest(tmp_path)
    (folder / "b_broken.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "def sinusoidal_table(')
    results, notes, seconds, _ = grade(folder, LIMITS)
    assert any("b_broken.ipynb is not a readable notebook" in n for n in notes)
    assert all(full_marks(rs) for rs in by_exercise(results).values())
    alone, notes, _, _ = grade(folder / "b_broken.ipynb", LIMITS)
    assert sum(r.score for r in alone) == 0 and any("not a readable notebook" in n for n in notes)


def test_a_100_mb_notebook_is_refused_quickly_and_the_rest_is_graded(tmp_path):
    folder = _folder_with_honest(tmp_path)
    big = folder / "b_huge.ipynb"
    padding = "x" * (1 << 20)
    with open(big, "w") as f:  # a valid notebook: one code cell with 100 MB of output
        f.write('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", '
                '"metadata": {}, "source": "def sinusoidal_table(*a):\\n    return 0", "outputs": '
                '[{"output_type": "stream", "name": "stdout", "text": "')
        for _ in range(100):
            f.write(padding)
        f.write('"}]}]}')
    assert big.stat().st_size > 100e6
    results, notes, seconds, _ = grade(folder, LIMITS)
    assert any("b_huge.ipynb is 100 MB" in n for n in notes), notes
    assert all(full_marks(rs) for rs in by_exercise(results).values())
    assert seconds < 30
