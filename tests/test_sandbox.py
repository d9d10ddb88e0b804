"""The sandbox's confinement, in each mode this machine offers: what a child can see, read, write,
signal and start; user ids; result validation; the notes a report gets when isolation is weaker."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from grader.records import Statement
from grader.results import BadResult, collect, load_result, validated
from grader.sandbox.errors import SandboxError
from grader.sandbox.host import runtime_files, slots
from grader.sandbox.host import session as sandbox_session
from grader.sandbox.host.client import Zygote
from grader.sandbox.wire import Probe
from grader.settings import Settings
from tests.conftest import ROOT

PROBE = [Probe("p0", "call", {"args": []}, "sinusoidal_table")]
# Learner code that reports what it can do (as the message of an exception, the one channel it has).
INSPECT = r'''
import json, os, socket, signal

def _try(fn):
    try:
        return fn()
    except Exception as exc:
        return "refused: " + type(exc).__name__

def sinusoidal_table():
    repo = "__REPO__"
    seen = {
        "uid": os.getuid(),
        "read reference": _try(lambda: open(repo + "/posenc_ref/ch01_sinusoidal.py").read()[:40]),
        "read checks": _try(lambda: open(repo + "/course/01_sinusoidal/exercises.py").read()[:40]),
        "list repository": _try(lambda: os.listdir(repo)),
        "read hidden probes": _try(lambda: [open(os.path.join(d, f)).read()[:10] for d in __import__("sys").path
                                            if os.path.isdir(d) for f in os.listdir(d) if f.startswith("probes_ch")]),
        "write outside": _try(lambda: open(repo + "/pwned", "w").write("x")),
        "write home": _try(lambda: open(os.path.expanduser("~/scratch"), "w").write("x")),
        "connect": _try(lambda: socket.create_connection(("127.0.0.1", 22), timeout=1) and "connected"),
        "signal parent": _try(lambda: os.kill(os.getppid(), 0) or "allowed"),
        "exec": _try(lambda: __import__("subprocess").run(["/bin/true"]).returncode == 0 and "ran"),
        "import numpy": _try(lambda: __import__("numpy").__name__),
        "import reference": _try(lambda: __import__("posenc_ref") and "imported"),
    }
    raise ValueError(json.dumps(seen))
'''.replace("__REPO__", str(ROOT))


def read(outdir, requests, ended):
    return collect(outdir, requests, ended, 1 << 28)


def inspect(mode):
    settings = Settings.from_env(sandbox_mode=mode, limits={"wall_seconds": 20})
    with Zygote.start(settings).session(settings) as session:
        run = session.run([Statement("cell 1", INSPECT)], PROBE, read)
        assert run.ended == "ok", run.ended
        error = run.results["p0"]["error"]
        return session, json.loads(error.split(": ", 1)[1]), run.log


@pytest.mark.parametrize("mode", ["auto", "nojail", "user"])
def test_a_child_cannot_reach_the_grader_in_any_mode(mode):
    """Each mode this machine offers (grader/sandbox/confine/policy.py), or a refusal that says what to do."""
    try:
        session, seen, log = inspect(mode)
    except SandboxError as exc:  # root without a jail and a Python other users cannot read
        assert mode == "nojail" and "It will not" in str(exc) and "POSENC_SANDBOX_MODE=user" in str(exc)
        caps = Zygote.start(Settings.from_env(sandbox_mode=mode)).ready()
        assert caps["root"] and not caps["python_readable"]
        return
    caps = session.caps
    if session.mode == "none":
        pytest.skip("nothing on this machine can hide the grader's files from learner code")
    for what in ("read reference", "read checks", "list repository", "write outside", "import reference"):
        assert str(seen[what]).startswith("refused"), (what, seen[what])
    assert seen["read hidden probes"] == [] or seen["read hidden probes"].startswith("refused")
    assert not (ROOT / "pwned").exists()
    assert seen["import numpy"] == "numpy" and seen["write home"] == 1  # its own working folder is fine
    if caps["landlock"]:
        assert seen["exec"] == "refused: PermissionError"
    if caps["seccomp"] or caps["landlock"] >= 4:
        assert seen["connect"] == "refused: PermissionError"
    assert seen["signal parent"].startswith("refused")  # not the fork server, nor the grader
    if session.uid is not None:
        assert seen["uid"] == session.uid and session.uid != 0 and session.uid != os.getuid()
    notes = [what for where, what in log if where == "sandbox"]
    # weaker isolation is said in the report, full isolation is not
    assert bool(notes) == (session.mode != "root-jail" or not caps["seccomp"] or not caps["cgroup"]
                           or not caps["pidns"])


def test_root_asked_for_user_mode_says_which_mode_applied_in_the_report(tmp_path):
    from grader.checks import chapter_checks
    from grader.grading import grade

    sub = tmp_path / "s.py"
    sub.write_text("def sinusoidal_table(seq_len, d_model, base=10000.0):\n    return None\n")
    checks = [c for c in chapter_checks("ch01") if c.exercise == "sinusoidal_table"][:1]
    caps = Zygote.start(Settings.from_env(sandbox_mode="user")).ready()
    if not caps["root"] or not caps["landlock"]:
        pytest.skip("needs a grader running as root, with Landlock")
    notes = [str(n) for n in grade(sub, Settings.from_env(sandbox_mode="user"), checks).notes]
    if caps["python_readable"]:  # Debian's system Python: a uid of its own is possible, and taken (root-nojail)
        assert any(n.startswith("sandbox: POSENC_SANDBOX_MODE=user asked for no jail; other users can read this "
                                "Python, so learner code need not run as root: learner code ran as uid ")
                   for n in notes), notes
        assert not any("no mount namespaces" in n for n in notes) or not caps["jail"], notes
    else:  # a Python only root can read: uid 0 without capabilities (root-user)
        assert any(n.startswith("sandbox: POSENC_SANDBOX_MODE=user: learner code ran as root (uid 0) without "
                                "capabilities") for n in notes), notes


def test_the_report_names_the_user_id_the_session_took():
    """A second live session takes the next uid; its note names that uid (it once named the first one's,
    POSENC_SANDBOX_UID_BASE, whichever it took). root-nojail's note names it, on any machine as root."""
    settings = Settings.from_env()
    caps = Zygote.start(settings).ready()
    if not caps["root"]:
        pytest.skip("the grader is not running as root")

    class NoJailHere:  # what a machine offers where Python is readable and POSENC_SANDBOX_MODE=nojail
        def ready(self):
            return {**caps, "jail": True, "python_readable": True, "forced": "nojail"}

    with sandbox_session.Session(NoJailHere(), settings) as one, sandbox_session.Session(NoJailHere(), settings) as two:
        assert one.mode == two.mode == "root-nojail" and one.uid != two.uid
        for session in (one, two):
            said = f"ran as uid {session.uid} (a user id of its own)"
            assert [n for n in session.notes if said in str(n)], session.notes


def test_each_session_has_a_user_id_of_its_own():
    settings = Settings.from_env()
    with Zygote.start(settings).session(settings) as one, Zygote.start(settings).session(settings) as two:
        if one.uid is None:
            pytest.skip("the grader is not running as root")
        assert one.uid != two.uid and min(one.uid, two.uid) >= 1000
    # released on close: this process holds no descriptor of either slot's lock file any more (trying the lock
    # instead would fail whenever another grader on the machine took the freed uid meanwhile, as it may)
    held = {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}
    for uid in (one.uid, two.uid):
        assert str((slots.slots_dir() / f"{uid - settings.uid_base}.lock").resolve()) not in held


def test_results_must_be_plain_data():
    good = {"out": torch.zeros(2), "out:dtype": "float32", "out:device": "cpu", "n": 3, "shape": [2, 3],
            "ok": True, "problem": "", "raised": None}
    assert validated(good) is good

    class Sub(torch.Tensor):
        pass

    for bad in ({"out": torch.zeros(2).as_subclass(Sub)},  # a tensor subclass
                {"out": torch.zeros(2, dtype=torch.float64), "out:dtype": "float32"},  # a dtype that lies
                {"out": object()}, {"out": {"nested": 1}}, {"out": ["a", "b"]}, {"x" * 300: 1},
                {"out": "y" * 30000}, ["not", "a", "dict"]):
        with pytest.raises(BadResult):
            validated(bad)


def test_result_files_are_read_without_following_links(tmp_path):
    from posenc_selfcheck import store

    store.save(str(tmp_path / "p0"), {"r": {"out": torch.ones(3), "out:dtype": "float32"}})
    assert torch.equal(load_result(tmp_path, "p0", 1 << 20)["out"], torch.ones(3))
    (tmp_path / "p1.json").symlink_to(tmp_path / "p0.json")
    (tmp_path / "p1.safetensors").symlink_to(tmp_path / "p0.safetensors")
    with pytest.raises(OSError):
        load_result(tmp_path, "p1", 1 << 20)
    with pytest.raises(BadResult):  # larger than allowed
        load_result(tmp_path, "p0", 8)


def test_settings_come_from_defaults_then_the_environment_then_options():
    env = {"POSENC_SANDBOX_MEMORY_MB": "300", "POSENC_SANDBOX_CPU_SECONDS": "7", "POSENC_SANDBOX_MODE": "user",
           "POSENC_SANDBOX_PROTECT": os.pathsep.join(["/a", "/b"])}
    settings = Settings.from_env(env)
    assert settings.limits.memory_mb == 300 and settings.limits.cpu_seconds == 7
    assert settings.limits.wall_seconds == 30.0 and settings.sandbox_mode == "user" and settings.protect == ("/a", "/b")
    assert Settings.from_env(env, limits={"memory_mb": 100, "wall_seconds": None}).limits.memory_mb == 100
    assert Settings.from_json(settings.to_json()) == settings
    assert Settings.from_env({}) == Settings()
    with pytest.raises(ValueError, match="sandbox mode"):
        Settings.from_env({"POSENC_SANDBOX_MODE": "nonsense"})


def test_the_chmod_fallback_takes_away_other_users_access(tmp_path):
    folder = tmp_path / "reference"
    folder.mkdir(mode=0o755)
    assert sandbox_session.protect_by_chmod([str(folder)]) == [str(folder)]
    assert folder.stat().st_mode & 0o777 == 0o750
    assert sandbox_session.protect_by_chmod([str(folder)]) == []  # once per process


def test_two_graders_never_borrow_the_same_user_id(tmp_path):
    """Two batch workers each have a zygote and a grading process forked from it; their sessions take user
    ids from one machine-wide set of locks (a per-zygote folder once let both take 61000, and one worker's
    clean-up killed the other's child)."""
    from grader.checks import chapter_checks
    from grader.remote import RemoteGrader

    settings = Settings.from_env()
    if not Zygote.start(settings).ready()["root"]:
        pytest.skip("the grader is not running as root")
    sub = tmp_path / "uid.py"
    sub.write_text("import os\n\ndef sinusoidal_table(*args, **kwargs):\n    raise ValueError(f'UID {os.getuid()}')\n")
    second = Zygote(settings.sandbox_mode, settings.uid_base, settings.sandbox)  # a second worker's zygote
    try:
        with Zygote.start(settings).session(settings) as mine:
            grader = RemoteGrader(settings, chapter_checks("ch01")[:1], zygote=second)
            feedback = str(grader.grade(sub).verdicts[0].feedback)
            assert "UID " in feedback and f"UID {mine.uid}" not in feedback, (mine.uid, feedback)
    finally:
        second.close()


HOG = r'''
import torch
_hoard = []
try:
    while len(_hoard) < 12:
        _hoard.append(torch.ones(64 << 20, dtype=torch.uint8))  # 64 MB each, touched
except Exception:
    pass
raise RuntimeError(f"HOARDED {len(_hoard) * 64} MB")
'''


class _WithoutCgroup:
    """The real zygote, on a machine where no cgroup can be made (a non-root grader, a GPU box)."""

    def __init__(self, real):
        self.real = real

    def ready(self):
        return {**self.real.ready(), "cgroup": None, "cgroup_reason": "none in this test"}

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.mark.parametrize("cuda", [False, True])
def test_the_report_says_which_memory_limit_applied_without_a_cgroup(cuda, monkeypatch):
    """No cgroup: RLIMIT_AS stops a 768 MB hoard under a 256 MB allowance, and the report says "address space
    only"; an exercise with CUDA checks (on a GPU box: simulated) runs without RLIMIT_AS, hoards it all, and
    the report says it ran without a memory limit (it once claimed the address-space limit there too)."""
    settings = Settings.from_env(limits={"memory_mb": 256, "wall_seconds": 60})
    monkeypatch.setattr(sandbox_session, "gpu_present", lambda: cuda)
    request = Probe("p0", "call", {"args": [], "device": "cuda" if cuda else None}, "sinusoidal_table")
    with sandbox_session.Session(_WithoutCgroup(Zygote.start(settings)), settings) as session:
        run = session.run([Statement("cell 1", HOG)], [request], read)
    log = [(where, str(what)) for where, what in run.log]  # in English (the sandbox's notes are messages)
    hoarded = [int(w.split("HOARDED ")[1].split()[0]) for _, w in log if "HOARDED" in w]
    notes = [w for where, w in log if where == "sandbox"]
    unlimited = [n for n in notes if n.startswith("sinusoidal_table: ") and "ran without a memory limit" in n]
    assert hoarded and (hoarded[0] == 768) == cuda, (hoarded, notes)
    assert bool(unlimited) == cuda, notes
    assert any("memory was limited by address space only (RLIMIT_AS)" in n for n in notes), notes


def test_a_session_server_that_dies_is_reported_as_what_happened():
    """The session server killed 2 s into an exercise (by the machine: learner code cannot signal it): the
    report says it ended, how (the zygote reaped it) and after how long; it once read "timed out after
    30 s", whatever had happened and however soon."""
    import signal
    import threading

    settings = Settings.from_env(limits={"wall_seconds": 30, "stmt_seconds": 25})
    with Zygote.start(settings).session(settings) as session:
        killer = threading.Timer(2.0, lambda: os.kill(session.pid, signal.SIGKILL))
        killer.start()
        try:
            run = session.run([Statement("cell 1", "import time\ntime.sleep(20)\n")], PROBE, read)
        finally:
            killer.cancel()
    ended = str(run.ended)  # a message: its English
    assert ended.startswith("the process was lost: the sandbox's session server ended after "), ended
    assert ended.endswith("s (killed by signal 9 (SIGKILL))"), ended
    seconds = float(ended.split("ended after ")[1].split(" s")[0])
    assert 1.0 <= seconds < 20, ended
    assert "timed out" not in ended


# Learner code that reports its collector (on, as in any Python, with the zygote's objects, torch's, frozen) and
# whether torch._dynamo was loaded (the zygote's meta-device warm-up defers it: posenc_selfcheck/dynamo_deferred.py)
COLLECTOR = r'''
import gc, json, sys

def sinusoidal_table():
    raise ValueError(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                                 "dynamo": "torch._dynamo" in sys.modules, "sympy": "sympy" in sys.modules}))
'''


def test_a_childs_collector_runs_never_walks_what_the_zygote_loaded_and_the_zygote_holds_no_dynamo():
    """The zygote imports torch with the collector off (grader/sandbox/runtime/zygote.py): in a child it runs again,
    and what the zygote holds is frozen, out of every collection of the child. The zygote warmed the meta device
    up without importing torch._dynamo (a second and 70 MB that every fork would copy)."""
    settings = Settings.from_env(limits={"wall_seconds": 20})
    with Zygote.start(settings).session(settings) as session:
        run = session.run([Statement("cell 1", COLLECTOR)], PROBE, read)
    assert run.ended == "ok", run.ended
    seen = json.loads(run.results["p0"]["error"].split(": ", 1)[1])
    assert seen["enabled"] is True
    # warmed up (the meta device's first use imports sympy for its type promotion), without torch._dynamo
    assert seen["sympy"] is True and seen["dynamo"] is False, seen
    assert seen["frozen"] > 100_000, seen  # torch's modules, functions and classes


RESEED = """
import sys, traceback
sys.path.insert(0, sys.argv[1])
import torch
import child

def deep(n):  # a learner's request is answered some frames down the child's stack
    return deep(n - 1) if n else child.reseed()

stacks = []
real = traceback.format_stack
traceback.format_stack = lambda *a, **k: stacks.append(1) or real(*a, **k)
torch.rand(5)  # whatever the last request drew
deep(20)
after_reseed, recorded = torch.rand(5), len(stacks)
torch.manual_seed(0)
print(recorded, len(stacks) > recorded, torch.equal(after_reseed, torch.rand(5)), torch.cuda.is_initialized())
"""


def test_each_request_starts_from_seed_0_without_recording_the_stack(tmp_path):
    """child.reseed puts the generators where torch.manual_seed(0) does, without torch's record of the caller's
    stack for each device not yet started (traceback.format_stack: it reads every frame's source; in the jail it
    finds none of the runtime's files and tries again on every call)."""
    runtime_files.copy_into(tmp_path)
    out = subprocess.run([sys.executable, "-c", RESEED, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    stacks, manual_seed_records, same, cuda_started = out.stdout.split()
    assert (stacks, same) == ("0", "True")
    assert manual_seed_records == "True"  # what reseed spares: torch.manual_seed records the stack here
    assert cuda_started == "False"  # (a started CUDA generator is seeded directly: no stack to record either)
