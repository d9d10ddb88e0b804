"""The sandbox's fork servers. They run in their own interpreter (`python -I`), never inside the grader.

Two levels, so that nothing of one student can reach another:

- the **zygote** imports torch (and matplotlib, and warms up the meta device) once, then waits for
  the grader to ask for a session. It never receives a submission's code or results: a session is
  requested with one command and a socket passed as a file descriptor, nothing else;
- a **session server** is forked from the zygote for one submission and ends with it. It receives
  that submission's definitions and, for each exercise, forks a child that executes them and runs
  the exercise's probes. A later submission gets a fresh session forked from the clean zygote, so
  no process that has held one student's code or results ever forks another student's child.

The children are confined before the first learner statement (see confine.py): their own process
group, a jail with nothing of the grader's files in view (as root), a user id of their own (as
root), Landlock, rlimits, stdin/stdout/stderr on /dev/null, and every file descriptor closed but
one: the write end of the result pipe.

Protocol with the grader (JSON lines, wire.py): the zygote says {"hello": {...capabilities}} on its
control socket, then answers every {"cmd": "session"} (carrying one socket) with {"session": pid}. On a
session socket the grader sends a RunJob (with the read end of a request pipe beside it); the session
server answers Started when the child is forked, ResultReady each time it has stored one of the child's
results, and Ended when the child has ended and everything it started is gone. The child reads its
requests from the request pipe, one line each, and the grader writes the next one only after the
previous one's ResultReady: a child never holds more than the request it is answering (nor, since
public and hidden checks run in separate children, a hidden request while a public one's answer is
still to come). Nothing a child prints reaches these channels.

Results travel over a pipe as lines "<name>\\t<base64>\\n". The session server keeps only lines whose
name is one this exercise expects (the opaque tokens of its probe requests, the execution log, the
progress marker), each decoded and size-capped, and writes them to the exercise's fresh result
folder, which only the server and the grader can reach. A line it cannot parse is dropped, so
garbage a submission writes into the pipe costs nothing but that garbage. Last line wins for a name.

A session server is a child subreaper: whatever a child starts stays below it even after the child
dies, and is killed (with everything of the child's user id, as root) before the server reports the
child's end.
"""

import base64
import binascii
import gc
import json
import os
import re
import select
import signal
import socket
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the copied probes.py / store.py / confine.py live beside this file

import cgroup  # noqa: E402
import confine  # noqa: E402
import policy  # noqa: E402
import probes  # noqa: E402
import procs  # noqa: E402
import store  # noqa: E402
import torch  # noqa: E402  (imported once, before any fork)
import wire  # noqa: E402
from safetensors.torch import save as save_tensors  # noqa: E402

# argv: the control socket's fd, the sandbox mode, then the hidden probe modules copied beside the public
# ones (grader/hidden_probes.MODULE_NAMES)
CONTROL_FD, MODE, UID_BASE = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
CATALOG = probes.catalog(*[__import__(name) for name in sys.argv[4:]])
probes.warm_up()  # the meta device's first use costs about a second: pay it here, once, before any fork

try:  # notebooks import pyplot; load it once here rather than in every child
    import matplotlib  # noqa: E402

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: E402,F401
except ImportError:
    pass

BLOCKED = ("posenc_ref", "grader")
NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")
EXIT_SETUP_FAILED = 97  # the child could not be confined: a grader problem, never the learner's
STMT_GRACE = 1.0  # seconds a top-level statement may run past its alarm before the server ends the child


class _Blocker:
    """A meta-path finder that refuses the reference and the grader."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not available to submissions")
        return None


class StatementTimeout(BaseException):
    """One top-level statement ran past its budget (a training loop left in a cell)."""


def _on_alarm(signum, frame):
    raise StatementTimeout()


# ---- the child ------------------------------------------------------------------------------------
class _ResultWriter:
    """The child's end of the result pipe. A process forked by learner code writes nothing."""

    def __init__(self, fd):
        self.fd, self.pid, self.write = fd, os.getpid(), os.write

    def send(self, name, payload):
        if os.getpid() != self.pid:
            os._exit(0)
        data = memoryview(name.encode() + b"\t" + base64.b64encode(payload) + b"\n")
        while data:
            data = data[self.write(self.fd, data):]

    def send_result(self, token, result):
        tensors, plain = store.split({"r": result})
        self.send(f"{token}.safetensors", save_tensors(tensors))
        self.send(f"{token}.json", json.dumps(plain, sort_keys=True).encode())


def _execute(statements, stmt_seconds, channel):
    """Execute top-level statements one by one; a failing one is logged and skipped (a statement cut by
    the alarm is logged with its index, so that the grader skips it in this submission's later children)."""
    ns = {"__name__": "submission", "__builtins__": __builtins__}
    log = []
    signal.signal(signal.SIGALRM, _on_alarm)
    for n, (label, source) in enumerate(statements):
        channel.send("_progress", str(n).encode())
        try:
            code = compile(source, label, "exec")
            signal.setitimer(signal.ITIMER_REAL, stmt_seconds)
            try:
                exec(code, ns)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except StatementTimeout:
            log.append({"where": label, "error": f"skipped: ran longer than {stmt_seconds:g} s at grading time",
                        "timed_out": n})
        except SystemExit as exc:
            log.append({"where": label, "error": f"called sys.exit({exc.code!r}); skipped"})
        except BaseException as exc:  # learner code may raise anything
            log.append({"where": label, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        if os.getpid() != channel.pid:  # a statement forked: the copy stops here
            os._exit(0)
    return ns, log


def _confine(job, keep_fds):
    """Everything between fork and the first learner statement."""
    confine.detach(*keep_fds)  # its own session, no terminal; fds 0-2 on /dev/null, nothing else but its pipes
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    # the operating system's part, in the order policy.py decided for this machine: cgroup, jail, user,
    # Landlock, rlimits, seccomp (confine.apply)
    confine.apply(policy.Policy(**job.policy), GROUP[0] if GROUP else None)
    os.environ.update(HOME=job.workdir, TMPDIR=job.workdir, MPLCONFIGDIR=job.workdir)
    sys.path.insert(0, job.stub)
    sys.meta_path.insert(0, _Blocker())


class _Requests:
    """The grader's requests on the request pipe, one JSON line each, read one at a time (the grader writes the
    next only when this child's answer to the last one is stored)."""

    def __init__(self, fd):
        self.fd, self.buffer = fd, b""

    def next(self):
        """The next request, or None at end of file."""
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)


def _answer_next(requests, ns, channel):
    """Answer one request; False when there is none left. The request lives in this frame alone, so nothing of
    it is left for the next request's learner code to find (not even in a frame's cached locals)."""
    request = requests.next()
    if request is None:
        return False
    signal.setitimer(signal.ITIMER_REAL, 0)
    torch.manual_seed(0)  # each request from the same state, whatever was asked before it (the order is drawn)
    try:
        result = probes.run(ns, request["probe"], request["params"], request["exercise"], CATALOG)
    except BaseException as exc:  # SystemExit raised from inside learner code, and worse
        result = {"error": f"{type(exc).__name__}: {exc}"[:1000], "error_type": type(exc).__name__}
    try:
        channel.send_result(request["token"], result)
    except BaseException as exc:
        channel.send_result(request["token"], {"error": f"could not store the result: {exc}"[:500],
                                               "error_type": "StoreError"})
    return True


def _child(job, result_fd, request_fd):
    try:
        _confine(job, {result_fd, request_fd})
    except BaseException:
        os._exit(EXIT_SETUP_FAILED)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    channel = _ResultWriter(result_fd)
    statements, stmt_seconds = job.statements, job.stmt_seconds
    job = None  # the child keeps nothing of the job but its statements
    ns, log = _execute(statements, stmt_seconds, channel)
    channel.send("_progress", b"probes")
    channel.send("_exec.json", json.dumps(log).encode())
    requests = _Requests(request_fd)
    while _answer_next(requests, ns, channel):
        gc.collect()  # what the last request left in reference cycles (a traceback's frames) goes with it
    channel.send("_progress", b"done")


# ---- the server's side ----------------------------------------------------------------------------
class Receiver:
    """Parse result lines from the pipe; keep the expected ones as files in the result folder."""

    def __init__(self, outdir, allowed, line_bytes, total_bytes, on_result=lambda token: None):
        self.outdir, self.allowed, self.on_result = outdir, allowed, on_result
        self.line_bytes, self.total_left = line_bytes, total_bytes
        self.buffer, self.skipping, self.progress, self.dropped = bytearray(), False, None, 0
        self.progress_at = time.monotonic()

    def feed(self, data):
        self.buffer += data
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > self.line_bytes:  # an endless line: drop it up to its newline
                    self.buffer.clear()
                    self.skipping = True
                return
            line = bytes(self.buffer[:end])
            del self.buffer[:end + 1]
            if self.skipping:
                self.skipping = False
                self.dropped += 1
                continue
            self._line(line)

    def _line(self, line):
        name, _, encoded = line.partition(b"\t")
        try:
            name = name.decode("ascii")
            payload = base64.b64decode(encoded, validate=True)
        except (UnicodeDecodeError, binascii.Error, ValueError):
            self.dropped += 1
            return
        if not NAME.match(name) or name not in self.allowed or len(payload) > self.total_left:
            self.dropped += 1
            return
        if name == "_progress":
            self.progress = payload[:16].decode("ascii", "replace")
            self.progress_at = time.monotonic()
            return
        self.total_left -= len(payload)
        path = os.path.join(self.outdir, name)
        with open(path + ".tmp", "wb") as f:
            f.write(payload)
        os.replace(path + ".tmp", path)
        if name.endswith(".json") and not name.startswith("_"):  # a result is complete with its .json
            self.on_result(name[:-len(".json")])


def _drain(fd, receiver):
    """Read what is available now; False at end of file."""
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        receiver.feed(chunk)


def _overran(receiver, stmt_seconds):
    """True when the child has been executing one top-level statement for longer than its alarm allows (a
    statement that catches the alarm's exception, or blocks it)."""
    return (receiver.progress or "").isdigit() and time.monotonic() - receiver.progress_at > stmt_seconds + STMT_GRACE


def _reap(wake_fd, pid, read_fd, receiver, stmt_seconds):
    """Wait for the child `pid` while reading its results; reap adopted orphans on the way. A statement that
    outlives its alarm is ended here (the statement watchdog), so the exercise can run again without it within
    its time. (status, whether the watchdog ended it)."""
    status, open_, overran = None, True, False
    while status is None:
        ready, _, _ = select.select([wake_fd] + ([read_fd] if open_ else []), [], [], 0.5)
        if not overran and _overran(receiver, stmt_seconds):
            overran = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
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
    if open_:
        _drain(read_fd, receiver)
    return status, overran


def _outlived(uid, group_removed):
    """Verify that nothing of the exercise is left (below this server; of its uid; in its cgroup): a
    sentence for the report when something is."""
    left = procs.survivors(lambda: procs.descendants(os.getpid()) + (procs.uid_pids(uid) if uid is not None else []))
    if not left and group_removed:
        return None
    return (f"{len(left)} process(es) of this exercise outlived it and could not be killed" if left
            else "this exercise's cgroup could not be removed: a process of it outlived its end")


def _clean_up(uid):
    """Kill everything below this server and everything of the sandbox's uid; reap it all."""
    procs.kill_all(lambda: procs.descendants(os.getpid()))
    if uid is not None:
        procs.kill_all(lambda: procs.uid_pids(uid))
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break


CAPS = {}
GROUP = []  # the memory cgroup of the child being forked (the child joins it first thing)


# ---- a session: one submission ----------------------------------------------------------------------
def _group(job, n):
    """A fresh memory cgroup for one child, as the policy asks (None when it asks for none)."""
    rule = job.policy
    GROUP.clear()
    if rule["cgroup_mb"]:
        try:
            GROUP.append(cgroup.Cgroup.create(f"x{n}", rule["cgroup_mb"] << 20, rule["cgroup_pids"]))
        except OSError:
            if rule["memory_mb"] is None:
                return ("no cgroup could be made for this exercise, and it had no address-space limit: it ran "
                        "without a memory limit")
            return "no cgroup could be made for this exercise, so only its address space was limited (RLIMIT_AS)"
    return None


def run_exercise(job, request_fd, out, n):
    """Fork the child for one run (its requests come on `request_fd`, straight from the grader), tell the
    grader as each result is stored, clean up, report."""
    rule = job.policy
    ipc_before = confine.sysv_ipc(os.getuid()) if rule["clean_ipc"] == "new" else set()
    note = _group(job, n)
    read_fd, write_fd = os.pipe()
    gc.freeze()  # what the server holds is out of the child's collections: they scan only what the child made
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read_fd)
            _child(job, write_fd, request_fd)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    os.close(request_fd)  # the child's alone
    os.set_blocking(read_fd, False)  # (no setpgid here: the child's setsid() would fail on a group leader)
    out.send(wire.Started(pid))
    allowed = {f"{token}.{ext}" for token in job.tokens for ext in ("json", "safetensors")}
    receiver = Receiver(job.outdir, allowed | {"_exec.json", "_progress"}, job.line_bytes, job.result_bytes,
                        on_result=lambda token: out.send(wire.ResultReady(token)))
    status, overran = _reap(WAKE[-1], pid, read_fd, receiver, job.stmt_seconds)
    os.close(read_fd)
    _clean_up(job.uid)
    oom = bool(GROUP) and GROUP[0].oom_killed()
    removed = GROUP.pop().kill_and_remove() if GROUP else True
    note = "; ".join(filter(None, [note, _outlived(job.uid, removed)]))
    if rule["clean_ipc"] == "uid":
        confine.remove_sysv_ipc(job.uid)
    elif rule["clean_ipc"] == "new":
        confine.remove_sysv_ipc(os.getuid(), keep=ipc_before)
    if rule["clean_files_of_uid"]:
        confine.remove_files_of(job.uid)
    out.send(wire.Ended(pid, status, receiver.progress, receiver.dropped, oom, note, overran))


def session(sock):
    """Serve one submission's runs until the grader closes the socket, then leave nothing behind."""
    confine.prctl(confine.PR_SET_CHILD_SUBREAPER, 1)  # not inherited from the zygote: set it here
    _wake_on_sigchld()  # a wake-up pipe of its own: sessions share nothing, not even wake-ups
    channel, uid, n = wire.Channel(sock), None, 0
    while True:
        job = wire.RunJob.from_wire(channel.receive())
        fds = channel.take_fds()
        if job is None or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            break
        uid, n = job.uid, n + 1
        run_exercise(job, fds[0], channel, n)
    _clean_up(uid)


# ---- the zygote ---------------------------------------------------------------------------------------
WAKE = []


def _wake_on_sigchld():
    """A pipe that receives a byte whenever a child ends (select() on it instead of sleeping)."""
    for fd in WAKE:
        os.close(fd)
    WAKE.clear()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    WAKE.extend((wake_w, wake_r))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)


ENDED = {}  # pid of a session (or grading process) that ended: its wait status, until the grader asks


def _reap_sessions(sessions):
    while sessions:
        try:
            done, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            sessions.clear()
            return
        if done == 0:
            return
        sessions.discard(done)
        ENDED[done] = status
        while len(ENDED) > 1000:  # nobody asked about the oldest
            ENDED.pop(next(iter(ENDED)))


def _how_it_ended(pid, sessions, seconds=2.0):
    """The wait status of a session that ended (the grader lost its socket: why?), or None if unknown."""
    deadline = time.monotonic() + seconds
    while True:
        _reap_sessions(sessions)
        if pid in ENDED:
            return ENDED.pop(pid)
        if pid not in sessions or time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def _fork(run, keep_closed, *args):
    """Fork a child of the zygote that runs `run(*args)`; the zygote's own sockets closed in it."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            for sock in keep_closed:
                sock.close()
            run(*args)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    return pid


def trusted_grader(sock, control):
    """A grading process forked from the zygote (torch already loaded): the grader's own code, trusted,
    holding the reference; it asks the zygote for sessions on `control` and forks nothing itself, so
    nothing it holds reaches a sandbox child (grader/remote.py)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
    line = b""
    while not line.endswith(b"\n"):  # byte by byte: what follows the first line is the grader's to read
        byte = sock.recv(1)
        if not byte:
            return
        line += byte
    setup = json.loads(line)  # the repository's path comes here, never through the zygote
    sys.path.insert(0, setup["repo"])
    from grader import remote

    remote.serve(sock, control, dict(CAPS), setup)


def main():
    """The zygote: CONTROL_FD is its socket to the grader. It answers "session" (fork a session server)
    and "grader" (fork a trusted grading process, with a control socket of its own) and reads nothing
    else: no submission's byte ever passes through it."""
    control = socket.socket(fileno=CONTROL_FD)
    os.dup2(2, 1)  # stray prints go where stderr goes, never into a protocol channel
    confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)  # the grader died: so do we
    confine.prctl(confine.PR_SET_DUMPABLE, 0)  # no ptrace, no /proc/<pid>/fd for same-uid processes
    CAPS.update(confine.capabilities(MODE, UID_BASE), python=confine.python_paths())
    _wake_on_sigchld()
    wire.Channel(control).send({"hello": CAPS})
    controls, children = {control: wire.Channel(control)}, set()
    while control in controls:
        ready, _, _ = select.select(list(controls), [], [], 1.0)
        _reap_sessions(children)
        for sock in ready:
            channel = controls[sock]
            command = channel.receive()
            fds = channel.take_fds()
            kind = (command or {}).get("cmd")
            if kind == "session" and len(fds) == 1:
                pid = _fork(lambda fd: session(socket.socket(fileno=fd)), list(controls), fds[0])
                channel.send({"session": pid})
            elif kind == "grader" and len(fds) == 3:  # its socket, and both ends of its control socket
                mine = socket.socket(fileno=os.dup(fds[1]))
                pid = _fork(lambda a, b, theirs: os.close(theirs) or trusted_grader(socket.socket(fileno=a),
                                                                                  socket.socket(fileno=b)),
                            [*controls, mine], fds[0], fds[2], fds[1])
                controls[mine] = wire.Channel(mine)
                channel.send({"grader": pid})
            elif kind == "ended" and isinstance(command.get("pid"), int):
                channel.send({"ended": _how_it_ended(command["pid"], children)})
                pid = None
            else:  # the other side is gone (or speaks nonsense): forget it; the grader's own ends everything
                controls.pop(sock)
                if sock is not control:
                    sock.close()
                pid = None
            for fd in fds:
                os.close(fd)
            if pid:
                children.add(pid)
    procs.kill_all(lambda: procs.descendants(os.getpid()))
    _reap_sessions(children)


if __name__ == "__main__":
    main()
