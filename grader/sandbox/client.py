"""The grader's side of the sandbox: start the fork server, run one exercise, collect plain results."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

import posenc_selfcheck
from posenc_selfcheck import store

SERVER = Path(__file__).with_name("server.py")
# Files the child needs, copied into its private folder: nothing that knows any answer.
_PUBLIC = Path(posenc_selfcheck.__file__).parent
_HIDDEN = Path(__file__).resolve().parent.parent / "hidden_probes"
RUNTIME_FILES = [SERVER, _PUBLIC / "probes.py", _PUBLIC / "store.py", *sorted(_PUBLIC.glob("probes_*.py")),
                 *sorted(_HIDDEN.glob("probes_*.py"))]
KEEP_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")


@dataclass
class Limits:
    """Per exercise: wall clock, CPU time, extra address space; per top-level statement: wall clock."""

    wall_seconds: float = 30.0
    cpu_seconds: int = 60
    memory_bytes: int = 6 << 30
    stmt_seconds: float = 5.0


@dataclass
class ExerciseRun:
    results: dict = field(default_factory=dict)  # check_id -> probe result
    exec_log: list = field(default_factory=list)  # statements that failed or were skipped
    ended: str = ""  # how the child ended: "ok", "timed out after 30 s", "exit status 3", ...


def _plain(value):
    return value is None or isinstance(value, (bool, int, float, str, torch.Tensor)) or (
        isinstance(value, list) and all(isinstance(v, (int, float)) for v in value))


class Sandbox:
    """One fork server per submission; one child per exercise."""

    def __init__(self, limits: Limits | None = None):
        self.limits = limits or Limits()
        self.root = Path(tempfile.mkdtemp(prefix="posenc-sandbox-"))
        self.runtime = self.root / "runtime"
        self.runtime.mkdir()
        for path in RUNTIME_FILES:
            shutil.copy(path, self.runtime / path.name)
        # notebooks import the self-check; at grading time it is a no-op (the grader checks instead)
        (self.runtime / "posenc_selfcheck").mkdir()
        (self.runtime / "posenc_selfcheck" / "__init__.py").write_text(
            "def check(*args, **kwargs):\n    return None\n")
        self.proc = None
        self.count = 0

    # -- server lifecycle ------------------------------------------------------------------------
    def _start(self):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(self.root)}
        env.update({k: os.environ[k] for k in KEEP_ENV if k in os.environ})
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(self.runtime / "server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.root, env=env, start_new_session=True, text=True, bufsize=1,
        )

    def _alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _readline(self, deadline):
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

    def close(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- one exercise ----------------------------------------------------------------------------
    def run(self, statements, probes):
        """Execute `statements` (label, source) in a fresh child, then each (check_id, probe, params)."""
        self.count += 1
        outdir = self.root / f"out{self.count}"
        workdir = self.root / f"work{self.count}"
        outdir.mkdir()
        workdir.mkdir()
        run = ExerciseRun()
        if not self._alive():
            self._start()
        job = {"cmd": "run", "outdir": str(outdir), "workdir": str(workdir), "statements": statements,
               "probes": probes, "stmt_timeout": self.limits.stmt_seconds,
               "cpu_seconds": self.limits.cpu_seconds, "memory_bytes": self.limits.memory_bytes}
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._start()
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        # the first run waits for the server's own start (importing torch) as well
        started = self._readline(time.monotonic() + 120)
        if started is None:
            run.ended = "the sandbox could not start this exercise"
            self.close_server()
            return run
        pid = started["pid"]
        finished = self._readline(time.monotonic() + self.limits.wall_seconds)
        if finished is None:
            run.ended = f"timed out after {self.limits.wall_seconds:g} s"
        else:
            status = finished["status"]
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                run.ended = {signal.SIGXCPU: f"ran out of CPU time ({self.limits.cpu_seconds} s)",
                             signal.SIGKILL: "was killed (out of memory?)"}.get(sig, f"was killed by signal {sig}")
            elif os.WEXITSTATUS(status) != 0:
                run.ended = f"ended early with exit status {os.WEXITSTATUS(status)}"
            else:
                run.ended = "ok"
        # whatever happened, nothing of this child's process group outlives the exercise
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if finished is None:
            self._readline(time.monotonic() + 5)  # the server reports the killed child
            if not self._alive():
                self.close_server()
        run.results, run.exec_log = self._collect(outdir, probes, run.ended)
        shutil.rmtree(workdir, ignore_errors=True)
        return run

    def close_server(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None

    def _collect(self, outdir, probes, ended):
        results = {}
        for check_id, *_ in probes:
            stem = outdir / check_id
            result = None
            if (outdir / f"{check_id}.json").exists() and (outdir / f"{check_id}.safetensors").exists():
                try:
                    result = store.load(str(stem)).get("r")
                except Exception as exc:  # a corrupt file is a missing result
                    result = {"error": f"unreadable result ({type(exc).__name__})", "error_type": "NoResult"}
            if not isinstance(result, dict) or not all(isinstance(k, str) and _plain(v) for k, v in result.items()):
                why = ended if ended != "ok" else "it left no result"
                result = {"error": f"no result: the exercise's process {why}", "error_type": "NoResult"}
            results[check_id] = result
        log = []
        try:
            entries = store.load(str(outdir / "_exec")).get("log", {}).get("entries", "[]")
            log = [e for e in json.loads(entries) if isinstance(e, dict)][:50]
        except Exception:
            pass
        return results, log
