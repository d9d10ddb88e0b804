"""The grader's side of one submission's session: a session server of its own (forked from the zygote),
one confined child per run of an exercise (session_server.py, child.py).

    with zygote.session(settings) as s:                 # one submission
        run = s.run(statements, requests, read)         # one exercise: ExerciseRun (read: grader/results.py)

What this side adds to the servers' confinement:

- a **user id of its own** per session when the grader runs as root (slots.py), so "every process of that
  uid" is exactly the submission's processes;
- the **wall-clock limit**: past it, everything below the session and everything of the uid is
  killed; nothing of the submission outlives the exercise, and none of it outlives `close()`;
- **a statement that kills its process** (`os._exit` at import, a segfault, a loop that ignores the
  statement alarm) is found from the child's progress marker and skipped on a retry, so the rest of
  the notebook is still graded;
- **no instructor path reaches a child**: the child is told which system and Python folders it may
  read, never which folders are protected (the reference, the class's submissions, the output);
- **the grader's secret stays out of reach** wherever it lies: the request withholds it (policy.py), and a
  mode that cannot (none) refuses the session.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import select
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...files import read_regular
from ...records import ExerciseRun, messages
from ...settings import DEFAULT_SECRET
from .. import paths, procs, wire
from ..confine import policy
from ..errors import SandboxError
from . import slots, tmpdirs

REPO = Path(__file__).resolve().parents[3]  # the grader's repository: the reference, the checks
NO_CALLS = "no candidate function can be called in this request"


def note_message(note):
    """A policy's Note (policy.py, which cannot import the messages) as the message the report renders."""
    return messages.msg(note.id, **{name: note_message(value) if isinstance(value, policy.Note) else value
                                    for name, value in note.params.items()})


def gpu_present():
    """An NVIDIA driver is loaded: an exercise with CUDA checks runs on it (without RLIMIT_AS, which CUDA cannot
    start under)."""
    return os.path.exists("/dev/nvidiactl")


def protected_paths(settings):
    """What no child may see: the grader's repository and the settings' protected folders."""
    return [str(REPO)] + [str(Path(p).resolve()) for p in settings.protect]


def secret_path(settings):
    """The grader's secret (grader/unseen.py), as a real path: no child may read it, wherever it lies (below
    /etc, a Python folder, /dev/shm...). policy.decide refuses a mode that cannot keep it from them."""
    return os.path.realpath(settings.secret_file or REPO / DEFAULT_SECRET)


_PROTECTED_BY_CHMOD = set()


def protect_by_chmod(paths):
    """Fallback where neither a jail nor Landlock hides files: take away "other" permissions."""
    done = []
    for path in paths:
        if path not in _PROTECTED_BY_CHMOD and os.path.exists(path):
            os.chmod(path, os.stat(path).st_mode & ~0o007)
            _PROTECTED_BY_CHMOD.add(path)
            done.append(path)
    return done


def _write_line(fd, message, deadline):
    """Write one JSON line to a child's request pipe by the deadline; False when it cannot be (the child is
    gone, or reads nothing while the pipe is full)."""
    data = memoryview(wire.frame(message).encode())
    os.set_blocking(fd, False)
    while data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        _, ready, _ = select.select([], [fd], [], remaining)
        if not ready:
            continue
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            continue
        except OSError:  # EPIPE: the child is gone
            return False
    return True


class Shared:
    """What the sessions of one submission share when its exercises run on several at once (grader/lanes.py): the
    statements its later children skip (a statement that ended its process, or outlasted its alarm, is skipped by
    every later child of the submission, whichever session ran it), and the bytes of results its children may still
    send back (the bound holds for the submission, however many sessions it has)."""

    def __init__(self, result_bytes):
        self.lock = threading.Lock()
        self.skipped = {}  # (label, source, line) -> why later children skip the statement
        self.results_left = result_bytes


@dataclass
class Attempt:
    run: ExerciseRun
    outdir: Path | None
    progress: str | None


@dataclass
class Session:
    """One submission: a session server of its own, one confined child per exercise."""

    zygote: object  # a zygote.ZygoteClient
    settings: object
    notes: list = field(default_factory=list)  # how this machine confines learner code, when it is less
    shared: Shared | None = None  # the submission's, when it has other sessions (grader/lanes.py)

    def __post_init__(self):
        self.limits = self.settings.limits
        self.root = tmpdirs.make("posenc-sandbox-")
        # notebooks import the self-check; at grading time it is a no-op (the grader checks instead)
        self.stub = self.root / "stub"
        (self.stub / "posenc_selfcheck").mkdir(parents=True)
        (self.stub / "posenc_selfcheck" / "__init__.py").write_text(
            "def check(*args, **kwargs):\n    return None\n\n\ndef demo(fn):\n    return fn\n")
        (self.root / "jail").mkdir()
        self.sock = self.pid = self.channel = None
        self.uid = self.gid = self.slot_fd = None
        # the statements later children skip, and the bytes of results this submission's children may still send
        # back (all its exercises): the session server stores no more, and the grader reads no more (checked by size,
        # before anything is decoded)
        self.shared = self.shared or Shared(self.limits.submission_result_bytes)
        self._cuda = False
        self.count = 0
        # close(): (pid, start) of what it killed, verified gone; what was not, and the report's sentence for it
        self.killed, self.left_behind, self.closing_notes = set(), [], []
        self.caps = self.zygote.ready()
        self._configure(self.caps)

    def _configure(self, caps):
        """Decide this machine's policy once (policy.py: a pure function) to learn its mode: take a user id
        of the session's own where the mode runs learner code under one; keep the report's notes."""
        self.capabilities = policy.Caps(**{f.name: caps[f.name] for f in dataclasses.fields(policy.Caps)})
        try:
            probe = policy.decide(self.capabilities, self._request(uid=self.settings.uid_base))
        except policy.Refused as exc:
            raise SandboxError(note_message(exc.note)) from None
        if probe.uid is not None:
            self.slot_fd, self.uid = slots.acquire_uid(self.settings.uid_base, self.settings.sandbox.uid_slots)
            self.gid = self.uid
            probe = policy.decide(self.capabilities, self._request([], uid=self.uid))  # its notes name this uid
            os.chmod(self.root, 0o711)
            for path in (self.stub, self.stub / "posenc_selfcheck"):
                os.chmod(path, 0o755)
        if probe.chmod_protect:
            protect_by_chmod(list(probe.chmod_protect))
        self.notes += [note_message(n) for n in probe.notes]
        self.mode, self.jailed = probe.mode, probe.jail is not None

    def _request(self, cuda=False, workdir="", uid=None):
        lim = self.limits
        gpus = tuple(glob.glob("/dev/nvidia*") + glob.glob("/dev/dri"))  # CUDA opens its devices read-write
        cuda = cuda and gpu_present()
        return policy.Request(workdir=str(workdir), stub=str(self.stub), jail_dir=str(self.root / "jail"),
                              system=tuple(paths.readable_paths(protected_paths(self.settings), self.caps["python"])),
                              protect=tuple(protected_paths(self.settings)),
                              withhold=(secret_path(self.settings),), uid=uid, gid=uid, cuda=cuda,
                              gpu_devices=gpus, memory_mb=lim.memory_mb, nproc=lim.nproc,
                              cpu_seconds=lim.cpu_seconds, file_bytes=lim.file_bytes, work_bytes=lim.work_bytes,
                              cgroup_headroom_mb=self.settings.sandbox.cgroup_headroom_mb)

    # -- the session server ----------------------------------------------------------------------------
    def _alive(self):
        return self.pid is not None and procs.alive(self.pid)

    def _open(self):
        self.sock, self.pid = self.zygote.fork_session()
        self.channel = wire.Channel(self.sock)

    def _kill_submission(self):
        """Everything the submission started: below the session server, and (as root) of its uid."""
        if self.pid is not None:
            procs.kill_all(lambda: procs.descendants(self.pid))
        if self.uid is not None:
            procs.kill_all(lambda: procs.uid_pids(self.uid))

    def _close_server(self):
        """The session server is unresponsive or gone: end it and everything of the submission."""
        if self.pid is not None:
            self.killed.update(procs.stamped(procs.descendants(self.pid) + [self.pid]))
        if self.uid is not None:
            self.killed.update(procs.stamped(procs.uid_pids(self.uid)))
        self._kill_submission()
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            procs.kill_all(lambda: [self.pid] if procs.alive(self.pid) else [])
        if self.sock is not None:
            self.sock.close()
        self.sock = self.pid = self.channel = None
        if self.uid is not None:  # children of a dead server were adopted elsewhere: sweep again
            procs.kill_all(lambda: procs.uid_pids(self.uid))

    def close(self):
        """End the session and verify that every process of it is gone: `left_behind` lists any that is
        not (a sentence for the report in `closing_notes`)."""
        self._close_server()
        gone = self.settings.sandbox.gone_seconds
        self.left_behind = procs.gone_within(sorted(self.killed), gone) + (
            procs.survivors(lambda: procs.uid_pids(self.uid), gone) if self.uid is not None else [])
        if self.left_behind:
            self.closing_notes.append(messages.nmsg(
                "{n} process of this submission was still alive after grading ended and could not be killed",
                "{n} processes of this submission were still alive after grading ended and could not be killed",
                n=len(self.left_behind)))
        self.killed.clear()
        if self.slot_fd is not None:
            os.close(self.slot_fd)
            self.slot_fd = None
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- one exercise --------------------------------------------------------------------------------------
    def run(self, statements, requests, read, seconds=None, calls=None):
        """Execute `statements` [Statement] in a fresh child, then answer each wire.Probe, one at a time;
        `read(outdir, requests, ended)` turns the result folder into (results, log, timed_out) (grader/results.py,
        which needs torch). Everything, retries included, within `seconds` of wall clock (default: the
        exercise's limit). `calls` answers a property test's calls of a candidate while a request runs
        (grader/candidates.py: `answer(request, data)` -> wire.Answer, `call_bytes`, `calls`); without it, every
        call is refused."""
        statements = [(s.label, s.source, s.line) for s in statements]
        deadline = time.monotonic() + (self.limits.wall_seconds if seconds is None else seconds)
        skipped, lock = self.shared.skipped, self.shared.lock
        for attempt in range(self.limits.retries + 1):
            with lock:
                kept = [s for s in statements if s not in skipped]
            tried = self._attempt(kept, requests, deadline, calls)
            try:
                self._within_results_cap(tried)
                tried.run.results, log, timed_out = read(tried.outdir, requests, tried.run.ended)
                tried.run.log += log
            finally:
                if tried.outdir is not None:
                    shutil.rmtree(tried.outdir, ignore_errors=True)
            # a statement the alarm cut here would be cut again: later children of this submission skip it
            with lock:
                for index in timed_out:
                    if 0 <= index < len(kept):
                        skipped.setdefault(kept[index], messages.msg("skipped: ran longer than {seconds:g} s at "
                                                                     "grading time", seconds=self.limits.stmt_seconds))
            progress = tried.progress or ""
            if not progress.isdigit() or int(progress) >= len(kept):
                break
            # the child died while executing statement `progress`: this submission's later children skip it, and
            # this one runs again without it while its time lasts
            with lock:
                skipped[kept[int(progress)]] = messages.msg("this statement ended the process and was skipped ({why})",
                                                            why=tried.run.ended)
            if attempt == self.limits.retries or time.monotonic() >= deadline:
                break
        run = tried.run
        here = set(statements)
        with lock:
            said = [(key[0], why) for key, why in skipped.items() if key in here]
        run.log = [("sandbox", n) for n in self.notes] + said + run.log
        return run

    def _within_results_cap(self, tried):
        """Count the results one child left against the submission's allowance (by their sizes, nothing read);
        past it they are removed unread, with a note, and its checks have no result."""
        if tried.outdir is None:
            return
        files = [e for e in os.scandir(tried.outdir) if e.is_file(follow_symlinks=False)]
        size = sum(e.stat(follow_symlinks=False).st_size for e in files)
        with self.shared.lock:
            over = size > self.shared.results_left
            self.shared.results_left -= 0 if over else size
        if over:
            for entry in files:
                os.unlink(entry.path)
            tried.run.log.append(("sandbox", messages.msg("results were not read: together they were over the {mb} MB "
                                                          "of results the grader accepts from one submission",
                                                          mb=self.limits.submission_result_bytes >> 20)))

    def _job(self, statements, tokens, outdir, workdir, calls):
        """What the session server needs for one child: nothing that names a protected folder reaches the
        child (the policy lists what it may read, never what it may not), and no request."""
        lim = self.limits
        decided = policy.decide(self.capabilities, self._request(self._cuda, workdir, self.uid))
        rule = dataclasses.replace(decided, chmod_protect=())  # done here, once (_configure): the child never hears of
        # those folders
        with self.shared.lock:  # what the submission has left to send
            result_bytes = max(0, min(lim.result_bytes, self.shared.results_left))
        return wire.RunJob(outdir=str(outdir), workdir=str(workdir), statements=statements, tokens=tokens,
                           stmt_seconds=lim.stmt_seconds, result_bytes=result_bytes,
                           line_bytes=result_bytes * 4 // 3 + 1024, uid=self.uid, stub=str(self.stub),
                           policy=rule, stmt_grace_seconds=self.settings.sandbox.stmt_grace_seconds,
                           gone_seconds=self.settings.sandbox.gone_seconds,
                           call_bytes=calls.call_bytes if calls else 0, calls=calls.calls if calls else 0)

    @staticmethod
    def _answer_call(calls, request, stored, outdir, write_end, deadline):
        """Answer one call of a candidate on the request pipe: its arguments (stored by the session server as
        `_call`, read once, at most `calls.call_bytes`) go to `calls`, which computes the value."""
        data = None
        if stored and calls is not None:
            data = read_regular(outdir / "_call", calls.call_bytes)
            try:
                os.unlink(outdir / "_call")
            except FileNotFoundError:
                pass
        answer = calls.answer(request, data) if calls is not None else wire.Answer(error=NO_CALLS)
        _write_line(write_end, answer, deadline)

    def _attempt(self, statements, requests, deadline, calls=None):
        if not self._alive():
            self._open()
        self.count += 1
        outdir = self.root / f"out{self.count}"
        outdir.mkdir(mode=0o700)
        workdir = self.root / f"work{self.count}"
        if not self.jailed:  # in a jail the working folder is a tmpfs of its own
            workdir.mkdir(mode=0o700)
            if self.uid is not None:
                os.chown(workdir, self.uid, self.gid)
        run, begun = ExerciseRun(), time.monotonic()
        self._cuda = any(str(r.params.get("device", "")).startswith("cuda") for r in requests)
        job = self._job(statements, [r.token for r in requests], outdir, workdir, calls)
        read_end, write_end = os.pipe()
        wire.widen_pipe(write_end)  # an answer to a call (a few hundred KB) in one write, not one per 64 KB read
        try:
            # what this exercise's confinement says beyond the session's (no memory limit for a CUDA one, ...)
            own = [n for n in map(note_message, job.policy.notes) if n not in self.notes]
            run.log += [("sandbox", messages.msg("{exercise}: {note}", exercise=requests[0].exercise, note=n)
                         if requests else n) for n in own]
            self.channel.send(job, fds=[read_end])
            started = wire.Started.from_wire(self.channel.receive(min(deadline, time.monotonic()
                                                                      + self.settings.sandbox.started_seconds)))
        except OSError:
            started = None
        finally:
            os.close(read_end)
        if started is None:
            os.close(write_end)
            run.ended = messages.msg("the sandbox could not start this exercise")
            self._close_server()
            shutil.rmtree(workdir, ignore_errors=True)
            return Attempt(run, outdir, None)
        ended = None
        try:
            for request in requests:  # one at a time: the next only once the last one's result is stored
                if not _write_line(write_end, request, deadline):
                    break
                ended = self._until(deadline, lambda m: wire.ResultReady.from_wire(m) is not None
                                    and m["token"] == request.token,
                                    lambda stored: self._answer_call(calls, request, stored, outdir, write_end,
                                                                     deadline))
                if ended is not None:
                    break
        finally:
            os.close(write_end)  # end of file: the child returns
        if ended is None:
            ended = self._until(deadline, lambda m: False)
        if ended == "late":
            run.ended = messages.msg("the process timed out after {seconds:.1f} s, the time left of its wall-clock "
                                     "budget ({exercise_seconds:g} s per exercise, {submission_seconds:g} s per "
                                     "submission)", seconds=time.monotonic() - begun,
                                     exercise_seconds=self.limits.wall_seconds,
                                     submission_seconds=self.limits.submission_seconds)
            self._kill_submission()
            # the server reports the killed child
            ended = self._until(time.monotonic() + self.settings.sandbox.killed_seconds, lambda m: False)
        if ended == "gone" or ended == "late":
            run.ended = run.ended or self._server_ended(time.monotonic() - begun)
            self._close_server()
            ended = None
        elif not run.ended:
            run.ended = (messages.msg("the process was killed by the kernel: out of memory (its cgroup's limit)")
                         if ended.oom else
                         messages.msg("the process was ended: one top-level statement ran past {seconds:g} s, "
                                      "ignoring the statement's alarm", seconds=self.limits.stmt_seconds)
                         if ended.overran else
                         self._ended(ended.status, time.monotonic() - begun, started.pid, ended.progress))
        if ended is not None:
            run.log += [("sandbox", note_message(note)) for note in ended.notes]
        if ended is not None and ended.dropped:
            run.log.append(("sandbox", messages.msg("{n} result line(s) were not accepted: not a result the grader "
                                                    "asked for, or over the results it accepts ({exercise_mb} MB per "
                                                    "exercise, {submission_mb} MB per submission)", n=ended.dropped,
                                                    exercise_mb=self.limits.result_bytes >> 20,
                                                    submission_mb=self.limits.submission_result_bytes >> 20)))
        shutil.rmtree(workdir, ignore_errors=True)
        return Attempt(run, outdir, ended.progress if ended is not None else None)

    def _until(self, deadline, wanted, on_call=None):
        """Read the session's messages until one that `wanted(message)` accepts (then None), or the child's
        Ended (returned); "late" at the deadline, "gone" when the session server is. A call of a candidate
        (CallReady) meanwhile goes to `on_call(stored)`; with no request in hand, none is answered."""
        while True:
            message = self.channel.receive(deadline)
            if message is None:
                if self.channel.closed:
                    return "gone"
                if time.monotonic() >= deadline:
                    return "late"
                continue  # a line that was not JSON
            ended = wire.Ended.from_wire(message)
            if ended is not None:
                return ended
            call = wire.CallReady.from_wire(message)
            if call is not None:
                if on_call is not None:
                    on_call(call.stored is True)
                continue
            if wanted(message):
                return None

    def _server_ended(self, seconds):
        """Why the session server is gone (the zygote reaped it and says how), with the time it had run."""
        status = self.zygote.how_it_ended(self.pid) if self.pid is not None else None
        how = messages.msg("for a reason the grader could not learn") if status is None else describe_status(status)
        return messages.msg("the process was lost: the sandbox's session server ended after {seconds:.3g} s ({how})",
                            seconds=seconds, how=how)

    def _ended(self, status, seconds=None, pid=None, progress=None):
        seconds = -1.0 if seconds is None else seconds  # a negative time: not measured, not said
        if os.WIFSIGNALED(status):
            if os.WTERMSIG(status) == signal.SIGXCPU:
                return (messages.msg("the process ran out of CPU time ({limit} s) after {seconds:.3g} s",
                                     limit=self.limits.cpu_seconds, seconds=seconds) if seconds >= 0 else
                        messages.msg("the process ran out of CPU time ({limit} s)", limit=self.limits.cpu_seconds))
            how = describe_status(status)
            if self.capabilities.cgroup:
                return (messages.msg("the process was {how} after {seconds:.3g} s", how=how, seconds=seconds)
                        if seconds >= 0 else messages.msg("the process was {how}", how=how))
            return (messages.msg("the process was {how} after {seconds:.3g} s, perhaps by the kernel for want of "
                                 "memory (no cgroup here says)", how=how, seconds=seconds) if seconds >= 0 else
                    messages.msg("the process was {how}, perhaps by the kernel for want of memory (no cgroup here "
                                 "says)", how=how))
        code = os.WEXITSTATUS(status)
        if code == wire.EXIT_SETUP_FAILED and progress is None:  # before the first statement: the grader's problem
            raise SandboxError(messages.msg("the sandbox could not confine a child (see grader/sandbox/confine/"
                                            "confine.py); set POSENC_SANDBOX_MODE=user to grade with weaker isolation"))
        # the exit status is the learner's to choose: not shown
        return "ok" if code == 0 else messages.msg("the process ended early")


def describe_status(status):
    """A wait status in words: "killed by signal 9 (SIGKILL)", "exited with status 3"."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "unknown"
        return messages.msg("killed by signal {signal} ({name})", signal=sig, name=name)
    if os.WIFEXITED(status):
        return messages.msg("exited with status {status}", status=os.WEXITSTATUS(status))
    return messages.msg("ended (wait status {status})", status=status)
