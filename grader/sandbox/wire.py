"""The one framing between the grader's processes, and their typed messages.

Framing (`frame`, `unframe`): one JSON object per line. On a Unix stream socket (`Channel`: the grader,
the zygote, the session servers, the trusted grading process) file descriptors travel beside a line
(SCM_RIGHTS); between a batch and its workers (grader/batch/scheduling.py, worker.py) the lines go
over the worker's stdin and stdout. Standard library only: the fork servers import this file flat
(server.py, session_server.py), the grader as `grader.sandbox.wire`.

The zygote (runtime/zygote.py) says Hello on its control socket once torch is imported, then answers Fork with Forked
(the new process's pid) and AskEnded with WaitStatus; nothing else crosses that socket.

A session (one submission) speaks these messages, in this order, for each run of a child:

    grader  -> session   RunJob       what to execute and how to confine it; the read end of a
                                      request pipe travels beside it
    session -> grader    Started      the child's pid
    grader  -> child     Probe        one line on the request pipe, the next only after ...
    session -> grader    CallReady    (while a property test runs, for each call of a candidate: the
    grader  -> child     Answer        arguments stored by the session, the value on the request pipe)
    session -> grader    ResultReady  ... the child's result for it has been stored
    session -> grader    Ended        how the child ended, once everything it started is gone

The child holds one request at a time: the grader writes the next one only when the last one's result
is stored, and never the expected answers. Results travel from the child to the session server over
a pipe of their own (session_server.py's Receiver), never through these channels; so do the arguments
of a property test's calls of a candidate (candidate_calls.py), each answered by one Answer line.
"""

import fcntl
import json
import select
import socket
import time
from dataclasses import asdict, dataclass, field, fields

LINE_BYTES = 1 << 16  # one read
PIPE_BYTES = 1 << 20  # a request pipe's and a result pipe's capacity (Linux's default limit for a user)
MAX_FDS = 4  # file descriptors accepted beside one line


def widen_pipe(fd, size=PIPE_BYTES):
    """Let a pipe hold `size` bytes (Linux's F_SETPIPE_SZ, by the pipe's creator, before the child is confined):
    fewer turns between writer and reader for a large line. Where it cannot, the pipe stays as it is."""
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except OSError:
        pass


def frame(message):
    """One message as its line (text, newline included): a typed message as {"kind": ..., **fields}."""
    if hasattr(message, "to_wire"):
        message = message.to_wire()
    return json.dumps(message) + "\n"


def unframe(line):
    """The message (a dict) in one line, or None when the line is not a JSON object."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Channel:
    """JSON lines on a socket. `receive` returns one message (a dict) or None, and says why in
    `closed` (the other side is gone) or not (the deadline passed, or a line was not JSON)."""

    def __init__(self, sock):
        self.sock, self.buffer, self.fds, self.closed = sock, bytearray(), [], False
        self.scanned = 0  # bytes of the buffer known to hold no newline

    def send(self, message, fds=()):
        data = frame(message).encode()
        if fds:
            socket.send_fds(self.sock, [data], list(fds))
        else:
            self.sock.sendall(data)

    def receive(self, deadline=None):
        """The next message; None at the deadline (time.monotonic(); None waits for ever) or at end of file."""
        # linear in a line's length: each byte is copied into the buffer once and searched for the newline once (a
        # bytes buffer, copied whole at each read and searched from its start, took minutes for a 100 MB line)
        while (end := self.buffer.find(b"\n", self.scanned)) < 0:
            self.scanned = len(self.buffer)
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([self.sock], [], [], remaining)
                if not ready:
                    return None
            try:
                data, fds, _, _ = socket.recv_fds(self.sock, LINE_BYTES, MAX_FDS)
            except OSError:
                data, fds = b"", []
            self.fds += fds
            if not data:
                self.closed = True
                return None
            self.buffer += data
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        self.scanned = 0
        return unframe(line)

    def take_fds(self):
        fds, self.fds = self.fds, []
        return fds

    def close(self):
        self.sock.close()


class _Message:
    """A dataclass that travels as {"kind": name, **fields}."""

    def to_wire(self):
        return {"kind": type(self).__name__, **asdict(self)}

    @classmethod
    def from_wire(cls, data):
        """The message in `data` (a dict from `unframe`), or None when it is another kind or lacks a field."""
        if not isinstance(data, dict) or data.get("kind") != cls.__name__:
            return None
        try:
            return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})
        except TypeError:
            return None


# ---- the grader and its zygote (host/client.py, runtime/zygote.py) -------------------------------------------
@dataclass
class Hello(_Message):
    """The zygote's first line: what it found the machine allows (probe.capabilities) and its Python's paths."""

    caps: dict


@dataclass
class Fork(_Message):
    """Fork a process from the clean zygote: "session" (a session server; its socket travels beside) or "grader"
    (a trusted grading process; its socket and both ends of its control socket travel beside)."""

    what: str


@dataclass
class Forked(_Message):
    pid: int


@dataclass
class AskEnded(_Message):
    """How did this session server of the zygote end?"""

    pid: int


@dataclass
class WaitStatus(_Message):
    status: object  # os.waitpid's status, or None when unknown


# ---- the grader and a session server (session.py, session_server.py) -----------------------------------------
@dataclass
class RunJob(_Message):
    """Fork one child: execute `statements` [(label, source, first line)], then answer requests one at a time."""

    outdir: str  # where the session server stores the child's results (only it and the grader can reach it)
    workdir: str  # the child's working folder
    statements: list
    tokens: list  # the opaque names its requests will carry (random for each run)
    stmt_seconds: float
    result_bytes: int
    line_bytes: int
    uid: object  # the sandbox's user id, or None
    stub: str  # a folder with the no-op posenc_selfcheck notebooks import
    policy: dict = field(default_factory=dict)  # policy.Policy as a dict
    call_bytes: int = 0  # the largest call of a candidate the session stores (candidate_calls.py)
    calls: int = 0  # calls it stores in all; past that it tells the grader without storing them


@dataclass
class Probe(_Message):
    """One request to a child, on its request pipe: run `probe` on the learner's `exercise` with `params`; store
    the result under `token` (an opaque name drawn for the run: never the check's key)."""

    token: str
    probe: str
    params: dict
    exercise: str


@dataclass
class Started(_Message):
    pid: int


@dataclass
class ResultReady(_Message):
    token: str


@dataclass
class CallReady(_Message):
    """The child called a candidate function: its arguments are stored in the run's result folder as `_call`
    (`stored`), or were not (too large, too many calls). The grader answers either way, so the child never
    waits for an answer that does not come."""

    stored: bool


@dataclass
class Answer(_Message):
    """The grader's answer to one call of a candidate, on the request pipe: the value (safetensors, base64) or
    why there is none."""

    data: object = None
    error: object = None


@dataclass
class Ended(_Message):
    pid: int
    status: object  # os.waitpid's status, or None
    progress: object  # the child's last progress marker: a statement's index, "probes" or "done"
    dropped: int = 0  # result lines it could not parse
    oom: bool = False
    note: object = None  # what the server could not do as asked (no cgroup, ...)
    overran: bool = False  # the server ended it: one top-level statement ran past its alarm


# ---- the grader's process and its trusted grading process (grader/remote.py) ---------------------------------
@dataclass
class GraderSetup(_Message):
    """The first line to a trusted grading process (bootstrap.py reads `repo` and `serve` from it before importing
    the grader)."""

    repo: str  # the grader's repository, to import it from
    serve: str  # "module:function" that the zygote's bootstrap (bootstrap.py) hands the grading process to
    tmp: str  # the grader's temporary folder (where the sandbox's uid slots are locked)
    settings: str  # Settings.to_json()
    checks: object = None  # the keys of the checks to grade; None: all


@dataclass
class GradeSubmission(_Message):
    path: str  # absolute: the grading process's working folder is not the grader's
    student: str = ""  # the student's id as the platform records it ("": none; grader/unseen.py)
    assignment: str = ""  # the assignment's id the draws are keyed on ("": the settings' assignment, or the course)


@dataclass
class GradingProgress(_Message):
    """Before each exercise that runs (exercise None: all done)."""

    exercise: object
    done: int
    total: int


@dataclass
class Graded(_Message):
    grade: dict  # records.Grade.to_json()


@dataclass
class GradeFailed(_Message):
    """Grading could not finish: `error_type` SubmissionError or SandboxError (said to the user as they are), or
    RuntimeError (the grader failed)."""

    error_type: str
    message: str


# ---- a batch and its workers (grader/batch/scheduling.py, worker.py) ----------------------------------------
@dataclass
class GradeJob(_Message):
    """Grade one student's submission and write their result and feedback under `out`."""

    student: str  # the student's id in the batch (grader/batch/discovery.py)
    path: object  # the submission, or None: nothing handed in
    name: str  # what the student handed in, as they named it
    out: str
    sha256: str
    fingerprint: str
    run_id: str
    folder: str
    assignment: str


@dataclass
class WorkerReady(_Message):
    pid: int


@dataclass
class GradeReply(_Message):
    """A worker's answer to one GradeJob (`ok` False: the worker failed, died or overran, and `error` says so)."""

    student: str
    ok: bool
    total: object = None
    max: object = None
    seconds: object = None
    error: str = ""


@dataclass
class Quit(_Message):
    """Stop after the job in hand; answer with WorkerStats."""


@dataclass
class WorkerStats(_Message):
    """A worker's peak memory (MB), and that of its grading process and zygote (None: could not be read)."""

    pid: int
    maxrss_mb: float
    grading_maxrss_mb: object = None
    zygote_maxrss_mb: object = None
