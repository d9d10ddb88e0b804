"""A session server: one submission's fork server (it runs flat in the zygote's interpreter, forked from the
zygote for one submission, and ends with it).

On its socket the grader sends a RunJob per run of an exercise (wire.py), with the read end of a request
pipe beside it. For each, the server makes a memory cgroup where the policy asks for one, forks the child
(child.py) and answers Started; it reads the child's result pipe (`Receiver`), stores each expected result
in the run's result folder and answers ResultReady; it ends a statement that outlives its alarm; once the
child has ended it kills and reaps everything the child started, removes what the policy says to clean up
(cleanup.py), and answers Ended. The requests go from the grader to the child directly: the server never
reads them.

Results travel over a pipe as lines "<name>\\t<base64>\\n" (wire.result_line). The server keeps only lines whose
name is one this exercise expects (the opaque tokens of its probe requests, the execution log, the progress marker),
each decoded and size-capped, and writes them to the exercise's fresh result folder, which only the
server and the grader can reach. A line it cannot parse is dropped, so garbage a submission writes into
the pipe costs nothing but that garbage. Last line wins for a name.

A line named `_call` is a property test's call of a candidate function (candidate_calls.py): the server stores
its arguments as `_call` when they are within the job's bounds (`call_bytes` each, `calls` in all) and tells the
grader with CallReady either way; the grader answers the child on the request pipe.

A session server is a child subreaper: whatever a child starts stays below it even after the child dies,
and is killed (with everything of the child's user id, as root) before the server reports the child's end.

A grader that hangs up during a run (it was killed, or its process ended) is seen at once: the server watches its
socket while the child runs, ends the child there and then, cleans up as after any run, and ends. Without the watch,
learner code ran on unsupervised until it ended by itself (a run blocked in a 25-second sleep outlived a killed
`grader grade` by 24 s, measured): the grader that enforces the wall clock was gone, and the zygote with it.

As root, where the policy gives a child a PID namespace, the session has one (jail.PidNamespace), made at its first
run: its init is forked once, and each child is forked into it, so that a run costs one fork of the torch-laden
server instead of three (a relay and an init per child, which a user namespace's jail still needs).
"""

import gc
import os
import re
import select
import signal
import socket
import time
import traceback

import cgroup
import child
import cleanup
import jail
import kernel
import sigchld
import wire
from constants import SANDBOX
from policy import msg

NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


class Receiver:
    """Parse result lines from the pipe; keep the expected ones as files in the result folder."""

    def __init__(self, outdir, allowed, line_bytes, total_bytes, on_result=lambda token: None, call_bytes=0,
                 calls=0, on_call=lambda stored: None):
        self.outdir, self.allowed, self.on_result, self.on_call = outdir, allowed, on_result, on_call
        self.lines, self.total_left = wire.Lines(line_bytes), total_bytes
        self.call_bytes, self.calls_left = call_bytes, calls
        self.progress, self.refused = None, 0
        self.progress_at = time.monotonic()

    @property
    def dropped(self):
        """Lines not kept: too long, not a result line, or not a result this exercise expects."""
        return self.lines.dropped + self.refused

    def feed(self, data):
        self.lines.feed(data)
        while (line := self.lines.next()) is not None:
            if line is not wire.TOO_LONG:
                self._line(line)

    def _line(self, line):
        parsed = wire.parse_result_line(line)
        if parsed is None:
            self.refused += 1
            return
        name, payload = parsed
        if name == "_call":  # answered whatever it holds: the child waits for that answer
            stored = len(payload) <= self.call_bytes and self.calls_left > 0
            if stored:
                self.calls_left -= 1
                self._store(name, payload)
            self.on_call(stored)
            return
        if not NAME.match(name) or name not in self.allowed or len(payload) > self.total_left:
            self.refused += 1
            return
        if name == "_progress":
            self.progress = payload[:16].decode("ascii", "replace")
            self.progress_at = time.monotonic()
            return
        self.total_left -= len(payload)
        self._store(name, payload)
        if name.endswith(".json") and not name.startswith("_"):  # a result is complete with its .json
            self.on_result(name[:-len(".json")])

    def _store(self, name, payload):
        path = os.path.join(self.outdir, name)
        with open(path + ".tmp", "wb") as f:
            f.write(payload)
        os.replace(path + ".tmp", path)


def _drain(fd, receiver):
    """Read what is available now; False at end of file."""
    while True:
        try:
            chunk = os.read(fd, SANDBOX.pipe_bytes)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        receiver.feed(chunk)


def _overran(receiver, job):
    """True when the child has been executing one top-level statement for longer than its alarm allows, and its
    grace past it (a statement that catches the alarm's exception, or blocks it)."""
    return ((receiver.progress or "").isdigit()
            and time.monotonic() - receiver.progress_at > job.stmt_seconds + job.stmt_grace_seconds)


class Grader:
    """The session's grader, as the server sees it: its channel, and `gone` once it has hung up (end of file on its
    socket during a run, or a message it could not be sent). Nothing is sent after that."""

    def __init__(self, channel):
        self.channel, self.gone = channel, False

    def tell(self, message):
        if self.gone:
            return
        try:
            self.channel.send(message)
        except OSError:
            self.gone = True

    def hung_up(self):
        """True when the grader's end of the socket is closed. A message waiting there is left for `receive` (the
        grader sends nothing during a run, so one would be read after it)."""
        try:
            return self.channel.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True


def _end(pid):
    """Kill the child's process group (it is the leader of its own session); the clean-up after the run takes what
    left it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _reap(wake_fd, pid, read_fd, receiver, job, namespace, grader):
    """Wait for the child `pid` while reading its results; reap adopted orphans on the way. A statement that
    outlives its alarm is ended here (the statement watchdog), so the exercise can run again without it within
    its time; so is the child of a grader that hangs up meanwhile (`grader.gone`). (status, whether the watchdog
    ended it)."""
    status, open_, overran, watch = None, True, False, True
    sock = grader.channel.sock
    while status is None:
        watched = [wake_fd] + ([read_fd] if open_ else []) + ([sock] if watch else [])
        ready, _, _ = select.select(watched, [], [], SANDBOX.watchdog_seconds)
        if not overran and _overran(receiver, job):
            overran = True
            _end(pid)
        if sock in ready:
            watch = False  # hung up: nothing more to see; a message: it waits for the run's end
            if grader.hung_up():
                grader.gone = True
                _end(pid)
        if wake_fd in ready:
            try:
                os.read(wake_fd, 4096)
            except BlockingIOError:
                pass
        if read_fd in ready:
            open_ = _drain(read_fd, receiver)
        while True:
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                done = 0
            if done == 0:
                break
            if done == pid:
                status = st
            namespace.reaped(done)
    if open_:
        _drain(read_fd, receiver)
    return status, overran


def _group(job, n):
    """(a fresh memory cgroup for one child as the policy asks, or None; a note for the report (a policy.Note) when
    it asked for one that could not be made)."""
    rule = job.policy
    if not rule.cgroup_mb:
        return None, None
    try:
        return cgroup.Cgroup.create(f"x{n}", rule.cgroup_mb << 20, rule.cgroup_pids,
                                    gone_seconds=job.gone_seconds), None
    except OSError:
        if rule.memory_mb is None:
            return None, msg("no cgroup could be made for this exercise, and it had no address-space limit: it ran "
                             "without a memory limit")
        return None, msg("no cgroup could be made for this exercise, so only its address space was limited "
                         "(RLIMIT_AS)")


def run_exercise(job, request_fd, grader, n, catalog, wake_fd, namespace):
    """Fork the child for one run (its requests come on `request_fd`, straight from the grader), tell the
    `grader` (a Grader) as each result is stored, clean up, report."""
    rule = job.policy
    ipc_before = cleanup.sysv_ipc(os.getuid()) if rule.clean_ipc == "new" else set()
    group, note = _group(job, n)
    if rule.pidns and rule.jail == "root":
        namespace.enter()  # (jail.PidNamespace)
    read_fd, write_fd = os.pipe()
    wire.widen_pipe(read_fd)  # a call of a candidate (a few hundred KB) in one write
    gc.freeze()  # what the server holds is out of the child's collections: they scan only what the child made
    pid = os.fork()
    if pid == 0:
        code = wire.EXIT_OK
        try:
            os.close(read_fd)
            child.run(job, write_fd, request_fd, group, catalog)
        except BaseException:
            traceback.print_exc()
            code = wire.EXIT_RAISED
        finally:
            os._exit(code)
    os.close(write_fd)
    os.close(request_fd)  # the child's alone
    os.set_blocking(read_fd, False)  # (no setpgid here: the child's setsid() would fail on a group leader)
    grader.tell(wire.Started(pid))
    allowed = {f"{token}.{ext}" for token in job.tokens for ext in ("json", "safetensors")}
    receiver = Receiver(job.outdir, allowed | {"_exec.json", "_progress"}, job.line_bytes, job.result_bytes,
                        on_result=lambda token: grader.tell(wire.ResultReady(token)), call_bytes=job.call_bytes,
                        calls=job.calls, on_call=lambda stored: grader.tell(wire.CallReady(stored)))
    status, overran = _reap(wake_fd, pid, read_fd, receiver, job, namespace, grader)
    os.close(read_fd)
    cleanup.kill_and_reap(job.uid, keep=namespace.init)
    oom = group is not None and group.oom_killed()
    removed = group.kill_and_remove(job.gone_seconds) if group is not None else True
    notes = [n for n in (note, cleanup.outlived(job.uid, removed, job.gone_seconds, keep=namespace.init))
             if n is not None]
    if rule.clean_ipc == "uid":
        cleanup.remove_sysv_ipc(job.uid)
    elif rule.clean_ipc == "new":
        cleanup.remove_sysv_ipc(os.getuid(), keep=ipc_before)
    if rule.clean_files_of_uid:
        cleanup.remove_files_of(job.uid)
    grader.tell(wire.Ended(pid, status, receiver.progress, receiver.dropped, oom, notes, overran))


def serve(sock, catalog):
    """Serve one submission's runs until the grader closes the socket, then leave nothing behind."""
    kernel.prctl(kernel.PR_SET_CHILD_SUBREAPER, 1)  # not inherited from the zygote: set it here
    wake_fd = sigchld.wake_up_pipe()
    channel, uid, n, namespace = wire.Channel(sock), None, 0, jail.PidNamespace()
    grader = Grader(channel)
    while not grader.gone:
        job = wire.RunJob.from_wire(channel.receive())
        fds = channel.take_fds()
        if job is None or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            break
        uid, n = job.uid, n + 1
        run_exercise(job, fds[0], grader, n, catalog, wake_fd, namespace)
    cleanup.kill_and_reap(uid)  # the namespace's init too
