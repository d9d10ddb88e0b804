"""The one framing between the grader's processes, and their typed messages.

Framing (`frame`, `unframe`): one JSON object per line. On a Unix stream socket (`Channel`: the grader,
the zygote, the session servers, the trusted grading process) file descriptors travel beside a line
(SCM_RIGHTS); between a batch and its workers (grader/batch/scheduling.py, worker.py) the lines go
over the worker's stdin and stdout. Standard library only (and the policy's records, which cross as fields, and the
framing's sizes, constants.SANDBOX): the fork servers import this file flat (runtime/zygote.py, session_server.py),
the grader as `grader.sandbox.wire`.

Every message is a dataclass whose annotations are its types: `decode` checks each field (nested records, the
policy and the capabilities, field by field) and refuses a wrong type, an unknown field or a missing one with a
WireError that names it; `from_wire` reads a refusal as None. The child's result pipe has its own line
(`result_line`), and every reader splits lines with `Lines`, which drops a line past its limit.

The zygote (runtime/zygote.py) says Hello on its control socket once torch is imported, then answers Fork with
Forked (the new process's pid) and AskEnded with WaitStatus; nothing else crosses that socket.

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

import base64
import binascii
import fcntl
import json
import select
import socket
import time
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass

try:  # inside the grader's package, or copied flat beside it in the fork server's folder
    from .confine.policy import Caps, Note, Policy
    from .constants import SANDBOX
except ImportError:
    from constants import SANDBOX
    from policy import Caps, Note, Policy

# How a sandbox child's process ends, as its session server and the grader read its wait status
EXIT_OK = 0
EXIT_RAISED = 1  # a forked process's function raised (the zygote's and a session server's forks)
EXIT_SETUP_FAILED = 97  # the child could not be confined: a grader problem, never the learner's

# A JSON value as json.loads returns it: a probe's parameters, a grade's fields
Json = typing.Union[None, bool, int, float, str, list, dict]


class WireError(ValueError):
    """A line that is not the message it claims to be: the message says which field is wrong and how."""


def widen_pipe(fd):
    """Let a pipe hold SANDBOX.pipe_bytes (Linux's F_SETPIPE_SZ, by the pipe's creator, before the child is confined):
    fewer turns between writer and reader for a large line. Where it cannot, the pipe stays as it is."""
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), SANDBOX.pipe_bytes)
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


TOO_LONG = b"\n"  # what Lines.next returns for a line it dropped (no line holds a newline)


class Lines:
    """Newline-framed lines out of a byte stream, each at most `max_bytes` long: a longer one is dropped up to its
    newline, counted in `dropped`, and read as TOO_LONG. Linear in a line's length: each byte is copied into the
    buffer once and searched for the newline once (a bytes buffer, copied whole at each read and searched from its
    start, took minutes for a 100 MB line)."""

    def __init__(self, max_bytes):
        self.max_bytes, self.buffer, self.dropped = max_bytes, bytearray(), 0
        self.scanned = 0  # bytes at the buffer's start known to hold no newline
        self.skipping = False  # inside a line that was too long: drop up to its newline

    def feed(self, data):
        self.buffer += data

    def next(self):
        """The next whole line (without its newline), TOO_LONG for one that was dropped, or None until more data is
        fed."""
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end < 0:
                self.scanned = len(self.buffer)
                if len(self.buffer) > self.max_bytes:  # an endless line: drop it up to its newline
                    self.buffer.clear()
                    self.scanned = 0
                    self.skipping = True
                return None
            line = bytes(self.buffer[:end]) if end <= self.max_bytes and not self.skipping else TOO_LONG
            del self.buffer[:end + 1]
            self.scanned, self.skipping = 0, False
            self.dropped += line is TOO_LONG
            return line


# ---- the child's result pipe: one line "<name>\t<base64 of the payload>\n" per result ------------------------
def result_line(name, payload):
    """One result (or a call of a candidate, name `_call`) as its line on the result pipe."""
    return name.encode("ascii") + b"\t" + base64.b64encode(payload) + b"\n"


def parse_result_line(line):
    """(name, payload) of one result line (without its newline), or None when it is not one."""
    name, _, encoded = line.partition(b"\t")
    try:
        return name.decode("ascii"), base64.b64decode(encoded, validate=True)
    except (UnicodeDecodeError, binascii.Error, ValueError):
        return None


class Channel:
    """JSON lines on a socket. `receive` returns one message (a dict) or None, and says why in
    `closed` (the other side is gone) or not (the deadline passed, or a line was not JSON)."""

    def __init__(self, sock, max_bytes=SANDBOX.frame_bytes):
        self.sock, self.lines, self.fds, self.closed = sock, Lines(max_bytes), [], False

    def send(self, message, fds=()):
        data = frame(message).encode()
        if fds:
            socket.send_fds(self.sock, [data], list(fds))
        else:
            self.sock.sendall(data)

    def receive(self, deadline=None):
        """The next message; None at the deadline (time.monotonic(); None waits for ever), at end of file, or for a
        line that was not JSON or too long (`lines.dropped` counts those)."""
        while (line := self.lines.next()) is None:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([self.sock], [], [], remaining)
                if not ready:
                    return None
            try:
                data, fds, _, _ = socket.recv_fds(self.sock, SANDBOX.read_bytes, SANDBOX.fds_per_line)
            except OSError:
                data, fds = b"", []
            self.fds += fds
            if not data:
                self.closed = True
                return None
            self.lines.feed(data)
        return None if line is TOO_LONG else unframe(line)

    def take_fds(self):
        fds, self.fds = self.fds, []
        return fds

    def close(self):
        self.sock.close()


def _decode(kind, value, where):
    """`value` (from JSON) as type `kind`, or WireError naming `where`: str, int (never a bool), float (an int is
    one), bool, X | None, list[X], tuple[X, ...], tuple[X, Y, ...], dict[str, X], Json, and dataclasses (every
    field present, none unknown, each decoded by its own type)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Json:
        if value is None or isinstance(value, (bool, int, float, str, list, dict)):
            return value
    elif origin in (typing.Union, types.UnionType) and value is None and type(None) in args:
        return None
    elif origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:  # X | None
        return _decode(next(a for a in args if a is not type(None)), value, where)
    elif origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                return _decode(option, value, where)
            except WireError:
                continue
        raise WireError(f"{where}: expected {_name(kind)}, got {type(value).__name__}")
    elif kind is type(None):
        if value is None:
            return None
    elif kind is bool:
        if type(value) is bool:
            return value
    elif kind is int:
        if type(value) is int:
            return value
    elif kind is float:
        if type(value) in (int, float):  # an int is a float (PEP 484), kept as it came: a total of 5 stays 5
            return value
    elif kind is str:
        if type(value) is str:
            return value
    elif origin is list and type(value) is list:
        return [_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif origin is tuple and type(value) is list:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(value) == len(args):
            return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
    elif origin is dict and type(value) is dict:
        return {_decode(args[0], k, f"{where} key"): _decode(args[1], v, f"{where}[{k!r}]") for k, v in value.items()}
    elif is_dataclass(kind) and type(value) is dict:
        return _decode_fields(kind, value, where)
    raise WireError(f"{where}: expected {_name(kind)}, got {type(value).__name__}")


def _name(kind):
    return "JSON" if kind is Json else getattr(kind, "__name__", None) or str(kind).replace("typing.", "")


def _decode_fields(cls, data, where):
    """An instance of the dataclass `cls` from `data` (a dict): every field it declares without a default present,
    none it does not declare, each of its type."""
    hints = typing.get_type_hints(cls)
    declared = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(declared) - ({"kind"} if issubclass(cls, _Message) else set()))
    if unknown:
        raise WireError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    values = {}
    for name, f in declared.items():
        if name in data:
            values[name] = _decode(hints[name], data[name], f"{where}.{name}")
        elif f.default is f.default_factory is MISSING:
            raise WireError(f"{where}: field {name} is missing")
    return cls(**values)


class _Message:
    """A dataclass that travels as {"kind": name, **fields}; its fields' annotations are what decoding checks."""

    def to_wire(self):
        return {"kind": type(self).__name__, **asdict(self)}

    @classmethod
    def decode(cls, data):
        """The message in `data` (a dict from `unframe`); WireError, saying what is wrong, when it is another kind,
        lacks a field, has one it does not declare or one of another type."""
        kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
        if kind != cls.__name__:
            raise WireError(f"not a {cls.__name__}: {kind!r}")
        return _decode_fields(cls, data, cls.__name__)

    @classmethod
    def from_wire(cls, data):
        """The message in `data`, or None when `decode` refuses it (a process's loop reads a refusal as a line of
        another kind, never as an exception)."""
        try:
            return cls.decode(data)
        except WireError:
            return None


# ---- the grader and its zygote (host/client.py, runtime/zygote.py) -------------------------------------------
@dataclass
class Hello(_Message):
    """The zygote's first line: what it found the machine allows (probe.capabilities) and its Python's paths."""

    caps: Caps
    python: list[str]  # the folders its Python imports from (paths.python_paths)


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
    """How did this session server of the zygote end? (waiting up to `ended_seconds` for it to end)"""

    pid: int
    ended_seconds: float  # grader.settings.SandboxTimings


@dataclass
class WaitStatus(_Message):
    status: int | None  # os.waitpid's status, or None when unknown


# ---- the grader and a session server (session.py, session_server.py) -----------------------------------------
@dataclass
class RunJob(_Message):
    """Fork one child: execute `statements` [(label, source, first line)], then answer requests one at a time."""

    outdir: str  # where the session server stores the child's results (only it and the grader can reach it)
    workdir: str  # the child's working folder
    statements: list[tuple[str, str, int]]
    tokens: list[str]  # the opaque names its requests will carry (random for each run)
    stmt_seconds: float
    result_bytes: int
    line_bytes: int
    uid: int | None  # the sandbox's user id, or None
    stub: str  # a folder with the no-op posenc_selfcheck notebooks import
    policy: Policy  # how the child is confined (confine/policy.py decided it)
    stmt_grace_seconds: float  # how long a statement may run past its alarm (grader.settings.SandboxTimings)
    gone_seconds: float  # how long killed processes may take to be gone (the same)
    call_bytes: int = 0  # the largest call of a candidate the session stores (candidate_calls.py)
    calls: int = 0  # calls it stores in all; past that it tells the grader without storing them


@dataclass
class Probe(_Message):
    """One request to a child, on its request pipe: run `probe` on the learner's `exercise` with `params`; store
    the result under `token` (an opaque name drawn for the run: never the check's key)."""

    token: str
    probe: str
    params: dict[str, Json]
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

    data: str | None = None
    error: str | None = None


@dataclass
class Ended(_Message):
    pid: int
    status: int | None  # os.waitpid's status, or None
    progress: str | None  # the child's last progress marker: a statement's index, "probes" or "done"
    dropped: int = 0  # result lines it could not parse
    oom: bool = False
    notes: list[Note] = field(default_factory=list)  # what the server could not do as asked (no cgroup, ...)
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
    checks: list[str] | None = None  # the keys of the checks to grade; None: all


@dataclass
class GradeSubmission(_Message):
    path: str  # absolute: the grading process's working folder is not the grader's
    student: str = ""  # the student's id as the platform records it ("": none; grader/unseen.py)
    assignment: str = ""  # the assignment's id the draws are keyed on ("": the settings' assignment, or the course)


@dataclass
class GradingProgress(_Message):
    """Before each exercise that runs (exercise None: all done)."""

    exercise: str | None
    done: int
    total: int


@dataclass
class Graded(_Message):
    grade: dict[str, Json]  # records.Grade.to_json()


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
    path: str | None  # the submission, or None: nothing handed in
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
    total: float | None = None
    max: float | None = None
    seconds: float | None = None
    error: str = ""
    message: Json = None  # the error as message data (messages.to_json), rendered in the gradebook's language


@dataclass
class Quit(_Message):
    """Stop after the job in hand; answer with WorkerStats."""


@dataclass
class WorkerStats(_Message):
    """A worker's peak memory (MB), and that of its grading process and zygote (None: could not be read)."""

    pid: int
    maxrss_mb: float
    grading_maxrss_mb: float | None = None
    zygote_maxrss_mb: float | None = None
