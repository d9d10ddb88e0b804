"""The grader's side of the sandbox: start the fork server, run one exercise, collect plain results.

One fork server per submission (`Sandbox`); one confined child per exercise. What this side adds to
the server's confinement (server.py, confine.py):

- a **user id of its own** for the submission when the grader runs as root (uids from
  POSENC_SANDBOX_UID_BASE, default 61000, one per live sandbox, taken with a lock file, never one
  that /etc/passwd knows), so "every process of that uid" is exactly the submission's processes;
- the **wall-clock limit**: past it, everything below the server and everything of the uid is
  killed; nothing of the submission outlives the exercise, and none of it outlives `close()`;
- **a statement that kills its process** (`os._exit` at import, a segfault, a loop that ignores
  the statement alarm) is found from the child's progress marker and skipped on a retry, so the
  rest of the notebook is still graded;
- **results as data only**: files that the server wrote from the pipe, read without following
  links, size-capped, parsed as JSON + safetensors (nothing is unpickled), and checked: plain
  values, exact `torch.Tensor`s only, dtypes as reported. Anything else is a missing result,
  and a missing result is a zero.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import pwd
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import load as load_tensors

from posenc_selfcheck import probes as public_probes
from posenc_selfcheck import store

from .. import hidden_probes
from . import procs

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
REPO = HERE.parent.parent  # the grader's repository: the reference, the checks, the solutions
# Files the server needs, copied into the sandbox's runtime folder: nothing that knows any answer.
_PROBE_MODULES = (public_probes, *public_probes.CHAPTER_MODULES, *hidden_probes.MODULES)
HIDDEN_MODULE_NAMES = ",".join(m.__name__.rsplit(".", 1)[-1] for m in hidden_probes.MODULES)
RUNTIME_FILES = [SERVER, HERE / "confine.py", HERE / "procs.py", Path(store.__file__),
                 *[Path(m.__file__) for m in _PROBE_MODULES]]
# they are copied flat into one folder: two files of one name would silently replace each other
_names = [p.name for p in RUNTIME_FILES]
if len(set(_names)) != len(_names):
    raise RuntimeError(f"sandbox runtime files share a name: {sorted(n for n in _names if _names.count(n) > 1)}; "
                       "name hidden probe files probes_chNN_hidden.py")
KEEP_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
            "POSENC_SANDBOX_MODE")
EXIT_SETUP_FAILED = 97  # server.py: the child could not be confined
JSON_BYTES = 4 << 20
N_SLOTS = 1000


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass
class Limits:
    """Per exercise: wall clock, CPU time, extra address space, file sizes, processes; per top-level
    statement: wall clock. POSENC_SANDBOX_MEMORY_MB and POSENC_SANDBOX_CPU_SECONDS set the defaults."""

    wall_seconds: float = 30.0
    cpu_seconds: int = field(default_factory=lambda: _env_int("POSENC_SANDBOX_CPU_SECONDS", 60))
    memory_bytes: int = field(default_factory=lambda: _env_int("POSENC_SANDBOX_MEMORY_MB", 6144) << 20)
    stmt_seconds: float = 5.0
    file_bytes: int = 256 << 20  # largest file the child may write (RLIMIT_FSIZE)
    work_bytes: int = 256 << 20  # size of its working folder, where it is a tmpfs (the jail)
    result_bytes: int = 512 << 20  # all results of one exercise together
    nproc: int = 64  # processes of the sandbox's uid (as root)
    retries: int = 2  # statements that kill their process, skipped one per retry


@dataclass
class ExerciseRun:
    results: dict = field(default_factory=dict)  # check_id -> probe result
    exec_log: list = field(default_factory=list)  # statements that failed or were skipped
    ended: str = ""  # how the child ended: "ok", "timed out after 30 s", "exit status 3", ...


def protected_paths():
    """What no child may see: the repository, plus POSENC_SANDBOX_PROTECT (os.pathsep-separated)."""
    extra = [p for p in os.environ.get("POSENC_SANDBOX_PROTECT", "").split(os.pathsep) if p]
    return [str(REPO)] + [str(Path(p).resolve()) for p in extra]


# ---- reading results ------------------------------------------------------------------------------
class BadResult(ValueError):
    pass


def _read(path, limit):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise BadResult("not a regular file of a sensible size")
        chunks, left = [], info.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def validated(result):
    """A probe result as the grader accepts it: str keys; None, bool, int, float, str, lists of
    numbers, and exact torch.Tensors whose dtype matches what the result says about them."""
    if not isinstance(result, dict) or len(result) > 500:
        raise BadResult("not a dict of results")
    for key, value in result.items():
        if not isinstance(key, str) or len(key) > 200:
            raise BadResult("a key is not a short string")
        if type(value) is torch.Tensor or value is None or isinstance(value, (bool, int, float)):
            continue
        if isinstance(value, str) and len(value) <= 20000:
            continue
        if isinstance(value, list) and len(value) <= 100000 and all(isinstance(v, (bool, int, float)) for v in value):
            continue
        raise BadResult(f"{key} holds a {type(value).__name__}")
    for key, value in result.items():
        claimed = result.get(f"{key}:dtype")
        if type(value) is torch.Tensor and claimed is not None and claimed != str(value.dtype).replace("torch.", ""):
            raise BadResult(f"{key} is said to be {claimed} but holds {value.dtype}")
    return result


def load_result(outdir, check_id, tensor_limit):
    plain = json.loads(_read(outdir / f"{check_id}.json", JSON_BYTES))
    tensors = load_tensors(_read(outdir / f"{check_id}.safetensors", tensor_limit))
    if not isinstance(plain, dict) or not all(isinstance(v, dict) for v in plain.values()):
        raise BadResult("malformed")
    return validated(store.join(tensors, plain).get("r"))


# ---- user ids -------------------------------------------------------------------------------------
def _slots_dir():
    path = Path(tempfile.gettempdir()) / "posenc-sandbox-slots"
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
        raise RuntimeError(f"{path} is not a private root-owned folder; remove it and grade again")
    return path


def acquire_uid():
    """(lock fd, uid): a uid no account and no other live sandbox uses, held while the fd is open."""
    base = _env_int("POSENC_SANDBOX_UID_BASE", 61000)
    folder = _slots_dir()
    for n in range(N_SLOTS):
        uid = base + n
        try:
            pwd.getpwuid(uid)
            continue  # a real account: never borrow it
        except KeyError:
            pass
        fd = os.open(folder / f"{n}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        procs.kill_all(lambda: procs.uid_pids(uid))  # left over by a grader that was killed
        return fd, uid
    raise RuntimeError("no free sandbox user id (all lock files are held)")


_PROTECTED_BY_CHMOD = set()


def _protect_by_chmod(paths):
    """Fallback where neither a jail nor Landlock hides files: take away "other" permissions."""
    done = []
    for path in paths:
        if path not in _PROTECTED_BY_CHMOD and os.path.exists(path):
            os.chmod(path, os.stat(path).st_mode & ~0o007)
            _PROTECTED_BY_CHMOD.add(path)
            done.append(path)
    return done


_SWEPT = []


def _own(folder):
    """Mark a temporary folder with the pid of the process that must remove it; once per process,
    remove the folders of graders that were killed before they could (SIGKILL, a batch stopped)."""
    (folder / ".owner").write_text(str(os.getpid()))
    if _SWEPT:
        return
    _SWEPT.append(True)
    for other in Path(tempfile.gettempdir()).glob("posenc-s*-*"):
        try:
            if other.stat().st_uid == os.getuid() and not procs.alive(int((other / ".owner").read_text())):
                shutil.rmtree(other, ignore_errors=True)
        except (OSError, ValueError):
            continue


# ---- the fork server ------------------------------------------------------------------------------
class ForkServer:
    """The fork server process (`python -I`, torch imported once). It never runs learner code, so one
    server may serve many submissions in turn: batch workers share one (POSENC_SANDBOX_SHARED=1)."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="posenc-server-"))
        _own(self.root)
        for path in RUNTIME_FILES:
            shutil.copy(path, self.root / path.name)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(self.root)}
        env.update({k: os.environ[k] for k in KEEP_ENV if k in os.environ})
        env["POSENC_HIDDEN_PROBES"] = HIDDEN_MODULE_NAMES
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(self.root / "server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.root, env=env, start_new_session=True, text=True, bufsize=1,
        )
        hello = self.readline(time.monotonic() + 120)
        if not hello or "hello" not in hello:
            self.close()
            raise RuntimeError("the sandbox's fork server did not start")
        self.caps = hello["hello"]

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def send(self, job):
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def readline(self, deadline):
        """One protocol line, or None on timeout or when the server died."""
        buffer = ""
        fd = self.proc.stdout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            line = fd.readline()
            if not line:
                return None
            buffer += line
            if buffer.endswith("\n"):
                try:
                    return json.loads(buffer)
                except json.JSONDecodeError:
                    return None

    def kill_children(self):
        """Everything below the server (a subreaper: orphans of its children stay below it)."""
        if self.alive():
            procs.kill_all(lambda: procs.descendants(self.proc.pid))

    def close(self):
        if self.proc is not None:
            self.kill_children()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.root, ignore_errors=True)


_SHARED = []


def shared_server():
    """This process's shared fork server, started (again) when needed; closed at exit."""
    if _SHARED and _SHARED[0].alive():
        return _SHARED[0]
    if _SHARED:
        _SHARED.pop().close()
    else:
        atexit.register(lambda: _SHARED and _SHARED.pop().close())
    _SHARED.append(ForkServer())
    return _SHARED[0]


# ---- the sandbox ----------------------------------------------------------------------------------
class Sandbox:
    """One submission: its own fork server (or the process's shared one), one child per exercise."""

    def __init__(self, limits: Limits | None = None):
        self.limits = limits or Limits()
        self.shared = os.environ.get("POSENC_SANDBOX_SHARED") == "1"
        self.root = Path(tempfile.mkdtemp(prefix="posenc-sandbox-"))
        _own(self.root)
        # notebooks import the self-check; at grading time it is a no-op (the grader checks instead)
        self.stub = self.root / "stub"
        (self.stub / "posenc_selfcheck").mkdir(parents=True)
        (self.stub / "posenc_selfcheck" / "__init__.py").write_text(
            "def check(*args, **kwargs):\n    return None\n")
        (self.root / "jail").mkdir()
        self.server = None
        self.caps = None
        self.uid = self.gid = self.slot_fd = None
        self.notes = []  # how this machine confines learner code, when it is less than everything
        self.fatal = {}  # (label, source) -> why the statement is skipped
        self.count = 0

    # -- server lifecycle ------------------------------------------------------------------------
    def _start(self):
        self.server = shared_server() if self.shared else ForkServer()
        if self.caps is None:
            self._configure(self.server.caps)

    def _configure(self, caps):
        self.caps = caps
        if caps["drop"]:
            self.slot_fd, self.uid = acquire_uid()
            self.gid = self.uid
            os.chmod(self.root, 0o711)
            for path in (self.stub, self.stub / "posenc_selfcheck"):
                os.chmod(path, 0o755)
        hidden = "Landlock" if caps["landlock"] else None
        if caps["jail"]:
            return
        if not caps["root"]:
            self.notes.append("the grader is not running as root, so learner code ran as your own user"
                              + (f"; Landlock (ABI {caps['landlock']}) kept it to the system and Python folders"
                                 if hidden else ", able to read whatever you can read")
                              + ". Grade as root (a container, Gradescope) for the full sandbox")
        elif caps["drop"]:
            if not hidden:
                done = _protect_by_chmod(protected_paths())
                hidden = f"chmod o-rwx on {', '.join(done) or 'the protected folders'}"
            self.notes.append(f"no mount namespaces here: learner code ran as uid {self.uid} with {hidden} "
                              "keeping it from the grader's files, not in a private file-system view")
        else:
            self.notes.append("no mount namespaces here and Python lives in a folder other users cannot read, "
                              "so learner code ran as root" + (" under Landlock" if hidden else ""))

    def _alive(self):
        return self.server is not None and self.server.alive()

    def _readline(self, deadline):
        return self.server.readline(deadline)

    def _kill_submission(self):
        """Everything the submission started: below the server, and (as root) of its uid."""
        if self.server is not None:
            self.server.kill_children()
        if self.uid is not None:
            procs.kill_all(lambda: procs.uid_pids(self.uid))

    def close_server(self):
        """The server is unresponsive or gone: end it (shared or not) and all of the submission."""
        self._kill_submission()
        if self.server is not None:
            self.server.close()
            self.server = None
        if self.uid is not None:  # children of a dead server were adopted elsewhere: sweep again
            procs.kill_all(lambda: procs.uid_pids(self.uid))

    def close(self):
        if self.shared:
            self._kill_submission()
        else:
            self.close_server()
        self.server = None
        if self.slot_fd is not None:
            os.close(self.slot_fd)
            self.slot_fd = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- one exercise ----------------------------------------------------------------------------
    def run(self, statements, probes):
        """Execute `statements` (label, source) in a fresh child, then each (check_id, probe, params)."""
        statements = [tuple(s) for s in statements]
        for attempt in range(self.limits.retries + 1):
            kept = [s for s in statements if s not in self.fatal]
            run, progress = self._attempt(kept, probes)
            if not (progress or "").isdigit() or int(progress) >= len(kept) or attempt == self.limits.retries:
                break
            # the child died while executing statement `progress`: skip it and run the exercise again
            self.fatal[kept[int(progress)]] = f"this statement ended the process ({run.ended}); it was skipped"
        fatal = [{"where": key[0], "error": why} for key, why in self.fatal.items() if key in statements]
        run.exec_log = [{"where": "sandbox", "error": n} for n in self.notes] + fatal + run.exec_log
        return run

    def _attempt(self, statements, probes):
        """One child: (ExerciseRun, its last progress marker)."""
        if not self._alive():
            self._start()
        self.count += 1
        outdir = self.root / f"out{self.count}"
        outdir.mkdir(mode=0o700)
        workdir = self.root / f"work{self.count}"
        if not self.caps["jail"]:  # in the jail the working folder is a tmpfs of its own
            workdir.mkdir(mode=0o700)
            if self.uid is not None:
                os.chown(workdir, self.uid, self.gid)
        lim = self.limits
        memory = lim.memory_bytes
        if os.path.exists("/dev/nvidiactl") and any(str(p[2].get("device", "")).startswith("cuda") for p in probes):
            # CUDA reserves far more address space than it uses: RLIMIT_AS would fail its initialisation.
            # Wall clock and CPU time still apply to this child.
            memory = 0
        job = {"cmd": "run", "outdir": str(outdir), "workdir": str(workdir), "statements": statements,
               "probes": probes, "stmt_timeout": lim.stmt_seconds, "cpu_seconds": lim.cpu_seconds,
               "memory_bytes": memory, "file_bytes": lim.file_bytes, "work_bytes": lim.work_bytes,
               "result_bytes": lim.result_bytes, "line_bytes": lim.result_bytes * 4 // 3 + 1024,
               "nproc": lim.nproc, "uid": self.uid, "gid": self.gid, "jail": str(self.root / "jail"),
               "stub": str(self.stub), "protect": protected_paths()}
        run = ExerciseRun()
        try:
            self.server.send(job)
            started = self._readline(time.monotonic() + 60)
        except (BrokenPipeError, OSError):
            started = None
        if started is None or "pid" not in started:
            run.ended = "the sandbox could not start this exercise"
            self.close_server()
            return run, None
        finished = self._readline(time.monotonic() + lim.wall_seconds)
        if finished is None:
            run.ended = f"timed out after {lim.wall_seconds:g} s"
            self._kill_submission()
            finished = self._readline(time.monotonic() + 10)  # the server reports the killed child
            if finished is None:
                self.close_server()
        else:
            run.ended = self._ended(finished["status"])
        progress = finished.get("progress") if finished else None
        run.results, run.exec_log = self._collect(outdir, probes, run.ended)
        shutil.rmtree(outdir, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
        return run, progress

    def _ended(self, status):
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            return {signal.SIGXCPU: f"ran out of CPU time ({self.limits.cpu_seconds} s)",
                    signal.SIGKILL: "was killed (out of memory?)"}.get(sig, f"was killed by signal {sig}")
        code = os.WEXITSTATUS(status)
        if code == EXIT_SETUP_FAILED:
            raise RuntimeError("the sandbox could not confine a child (see grader/sandbox/confine.py); "
                               "set POSENC_SANDBOX_MODE=user to grade with weaker isolation")
        return "ok" if code == 0 else f"ended early with exit status {code}"

    def _collect(self, outdir, probes, ended):
        results = {}
        for check_id, *_ in probes:
            try:
                result = load_result(outdir, check_id, self.limits.result_bytes)
            except FileNotFoundError:
                why = ended if ended != "ok" else "it left no result"
                result = {"error": f"no result: the exercise's process {why}", "error_type": "NoResult"}
            except Exception as exc:  # whatever a hostile child managed to send: a missing result
                result = {"error": f"no result: what came back was not a plain result ({str(exc)[:200]})",
                          "error_type": "NoResult"}
            results[check_id] = result
        log = []
        try:
            entries = json.loads(_read(outdir / "_exec.json", JSON_BYTES))
            log = [{"where": str(e.get("where"))[:200], "error": str(e.get("error"))[:400]}
                   for e in entries if isinstance(e, dict)][:50]
        except Exception:
            pass
        return results, log
