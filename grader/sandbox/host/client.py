"""The grader's client of the zygote: starting the zygote process (runtime/zygote.py, in its runtime folder:
runtime_files.py) and asking it for sessions and trusted grading processes.

    zygote = Zygote.start(settings)        # early: its torch import overlaps the grader's own
    with zygote.session(settings) as s:    # one submission (host/session.py)
        run = s.run(statements, requests, read)

    zygote = Zygote.start(settings, early_grader=True)   # a trusted grading process forked once torch is loaded
    sock, pid = zygote.fork_grader()                      # that one (grader/remote.py)

This module imports no torch, so a grader can start the zygote before loading torch itself. The zygote never
sees a submission: every session is a fresh fork of it, and is killed with everything it started when the
submission is done.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from ... import hidden_probes
from ...records import messages
from .. import procs, wire
from ..errors import SandboxError
from . import runtime_files, tmpdirs
from .session import Session

KEEP_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")


class ZygoteClient:
    """A control connection to a zygote: asks it for sessions (and, for the process that started it, for
    trusted grading processes). `timings` (Settings.sandbox) says how long to wait for its answers; `hello` is what
    the zygote found (wire.Hello), when another process read it."""

    def __init__(self, sock, timings, hello=None):
        self.channel, self.timings, self.hello = wire.Channel(sock), timings, hello
        # one question at a time on this connection, with its answer: a submission's lanes (grader/lanes.py) ask
        # from threads
        self.asking = threading.RLock()

    def ready(self):
        """Its capabilities, once it has imported torch (waits for its hello the first time): policy.Caps's fields
        and "python", the folders its Python imports from."""
        with self.asking:
            if self.hello is None:
                self.hello = wire.Hello.from_wire(self.channel.receive(time.monotonic() + self.timings.start_seconds))
                if self.hello is None:
                    self.close()
                    raise SandboxError(messages.msg("the sandbox's fork server did not start"))
        return {**dataclasses.asdict(self.hello.caps), "python": self.hello.python}

    def _fork(self, what, fds):
        """The pid of a `what` ("session" or "grader") the zygote forked, handed `fds`."""
        with self.asking:
            self.ready()
            try:
                self.channel.send(wire.Fork(what), fds=fds)
            except OSError:
                raise SandboxError(messages.msg("the sandbox's fork server is gone")) from None
            forked = wire.Forked.from_wire(self.channel.receive(time.monotonic() + self.timings.fork_seconds))
            if forked is None:
                self.close()
                raise SandboxError(messages.msg("the sandbox's fork server did not start a {what}", what=what))
            return int(forked.pid)

    def fork_session(self):
        """(socket, pid) of a fresh session server, forked from the clean zygote."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            return ours, self._fork("session", [theirs.fileno()])
        except SandboxError:
            ours.close()
            raise
        finally:
            theirs.close()

    def session(self, settings, shared=None):
        """A fresh session for one submission; `shared`: what it shares with the submission's other sessions
        (session.Shared, grader/lanes.py)."""
        return Session(self, settings, shared=shared)

    def how_it_ended(self, pid):
        """The wait status of a session server of this zygote that has ended, or None when unknown."""
        with self.asking:
            try:
                self.channel.send(wire.AskEnded(int(pid), self.timings.ended_seconds))
            except OSError:
                return None
            reply = wire.WaitStatus.from_wire(self.channel.receive(time.monotonic() + self.timings.ask_seconds))
            return reply.status if reply else None

    def close(self):
        self.channel.sock.close()


class Zygote(ZygoteClient):
    """The zygote process (`python -I`, torch imported once, never a submission's code). It may serve
    every submission a grading process handles, each in a fresh session forked from it."""

    def __init__(self, mode, uid_base, timings, early_grader=False):
        self.mode = mode
        self.root = tmpdirs.make("posenc-server-")
        runtime_files.copy_into(self.root)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8",
               "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(self.root)}
        env.update({k: os.environ[k] for k in KEEP_ENV if k in os.environ})
        tmpdirs.seed_fonts(self.root)  # pyplot's font list, built once per machine rather than at each start
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # early_grader: the sockets of a trusted grading process, which the zygote forks once torch is loaded
        self.early, early = self._grader_sockets() if early_grader else (None, [])
        self.early_expected, self.early_pid = early_grader, None  # its pid, once the zygote said it (before its hello)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(self.root / "zygote.py"), str(theirs.fileno()), mode, str(uid_base),
             ",".join(str(sock.fileno()) for sock in early) or "-", *hidden_probes.MODULE_NAMES],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=self.root, env=env, start_new_session=True,
            pass_fds=(theirs.fileno(), *(sock.fileno() for sock in early)),
        )
        for sock in (theirs, *early):
            sock.close()
        super().__init__(ours, timings)

    @classmethod
    def start(cls, settings, early_grader=False):
        """This process's zygote for the settings' sandbox mode, started (again) when needed; `early_grader`: one
        that forks a trusted grading process as soon as torch is loaded (`fork_grader` returns it)."""
        zygote = _ZYGOTES.get(settings.sandbox_mode)
        if zygote is not None and zygote.alive():
            return zygote
        if zygote is not None:
            zygote.close()
        if not _ZYGOTES:
            atexit.register(close_all)
        _ZYGOTES[settings.sandbox_mode] = zygote = cls(settings.sandbox_mode, settings.uid_base, settings.sandbox,
                                                       early_grader)
        return zygote

    @staticmethod
    def _grader_sockets():
        """(our end of a trusted grading process's socket, [its end, both ends of its control socket]): the three
        sockets a Fork("grader") carries."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        zygote_end, grader_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        return ours, [theirs, zygote_end, grader_end]

    def _early_forked(self):
        """The early grading process's pid, read the first time (the zygote says it before its hello)."""
        if self.early_pid is None:
            forked = wire.Forked.from_wire(self.channel.receive(time.monotonic() + self.timings.start_seconds))
            if forked is None:
                self.close()
                raise SandboxError("the sandbox's fork server did not start")
            self.early_pid = int(forked.pid)
        return self.early_pid

    def ready(self):
        if self.early_expected:
            self._early_forked()  # its Forked comes first on the control socket
        return super().ready()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def fork_grader(self):
        """(socket, pid) of a trusted grading process forked from the zygote (grader/remote.py), with a
        control connection of its own to the zygote for its sessions: the early one the first time, where the
        zygote was started with one."""
        if self.early is not None:
            ours, self.early = self.early, None
            try:
                return ours, self._early_forked()
            except SandboxError:
                ours.close()
                raise
        ours, (theirs, zygote_end, grader_end) = self._grader_sockets()
        try:
            return ours, self._fork("grader", [theirs.fileno(), zygote_end.fileno(), grader_end.fileno()])
        except SandboxError:
            ours.close()
            raise
        finally:
            for sock in (theirs, zygote_end, grader_end):
                sock.close()

    def close(self):
        if self.early is not None:  # never asked for
            self.early.close()
            self.early = None
        if self.proc is not None:
            procs.kill_all(lambda: procs.descendants(self.proc.pid))
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None
            self.channel.sock.close()
        tmpdirs.keep_fonts(self.root)  # the font list this zygote built, if it had none to read
        shutil.rmtree(self.root, ignore_errors=True)


_ZYGOTES = {}


def close_all():
    while _ZYGOTES:
        _ZYGOTES.popitem()[1].close()
