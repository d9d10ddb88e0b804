"""The sandbox child: the one process that runs learner code (it runs flat in the zygote's interpreter,
forked by a session server for one exercise).

Between fork and the first learner statement it is confined (`_confine`: confine.py carries out the
policy). Then it executes the submission's top-level statements one by one, each under an alarm, and
answers the grader's probe requests from the request pipe, one at a time, running each probe (probes.py)
against what the statements defined. Every result goes back over the result pipe as one line
(wire.result_line, `ResultPipe`): nothing a child prints reaches the grader. A process that learner
code forks writes nothing there. A property test's candidates are callables whose values the grader computes
(candidate_calls.py): their calls go out on the result pipe and are answered on the request pipe.
"""

import ast
import gc
import json
import os
import signal
import sys

import candidate_calls
import confine
import probes
import store
import torch
import wire
from constants import SANDBOX
from safetensors.torch import save as save_tensors

BLOCKED = ("posenc_ref", "grader")


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


class ResultPipe:
    """The child's end of the result pipe. A process forked by learner code writes nothing."""

    def __init__(self, fd):
        self.fd, self.pid, self.write = fd, os.getpid(), os.write

    def send(self, name, payload):
        if os.getpid() != self.pid:
            os._exit(0)
        data = memoryview(wire.result_line(name, payload))
        while data:
            data = data[self.write(self.fd, data):]

    def send_result(self, token, result):
        """A probe's result, under the request's opaque token: its tensors and its plain values."""
        tensors, plain = store.split({"r": result})
        self.send(f"{token}.safetensors", save_tensors(tensors))
        self.send(f"{token}.json", json.dumps(plain, sort_keys=True).encode())


def _execute(statements, stmt_seconds, channel):
    """Execute top-level statements one by one; a failing one is logged and skipped (a statement cut by
    the alarm is logged with its index, so that the grader skips it in this submission's later children)."""
    ns = {"__name__": "submission", "__builtins__": __builtins__}
    log = []
    signal.signal(signal.SIGALRM, _on_alarm)
    for n, (label, source, line) in enumerate(statements):
        channel.send("_progress", str(n).encode())
        try:
            # compiled at the line it starts on in the learner's cell or file (its tracebacks show that line)
            tree = compile(source, label, "exec", ast.PyCF_ONLY_AST)
            code = compile(ast.increment_lineno(tree, line - 1), label, "exec")
            signal.setitimer(signal.ITIMER_REAL, stmt_seconds)
            try:
                exec(code, ns)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except StatementTimeout:
            log.append({"where": label, "timed_out": n})  # the grader's note says it (host/session.py)
        except SystemExit as exc:
            log.append({"where": label, "exit": repr(exc.code)[:300]})  # (grader/results.py words the note)
        except BaseException as exc:  # learner code may raise anything
            log.append({"where": label, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        if os.getpid() != channel.pid:  # a statement forked: the copy stops here
            os._exit(0)
    return ns, log


def _confine(job, keep_fds, group):
    """Everything between fork and the first learner statement."""
    confine.detach(*keep_fds)  # its own session, no terminal; fds 0-2 on /dev/null, nothing else but its pipes
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    # the operating system's part, in the order policy.py decided for this machine: cgroup, jail, user,
    # Landlock, rlimits, seccomp (confine.apply)
    confine.apply(job.policy, group)
    os.environ.update(HOME=job.workdir, TMPDIR=job.workdir, MPLCONFIGDIR=job.workdir)
    sys.path.insert(0, job.stub)
    sys.meta_path.insert(0, _Blocker())


class _Requests:
    """The grader's lines on the request pipe, read one at a time: a wire.Probe per request (the grader writes the
    next only when this child's answer to the last one is stored), and while a request runs, a wire.Answer per call
    of a candidate (candidate_calls.py)."""

    def __init__(self, fd):
        self.fd, self.lines = fd, wire.Lines(SANDBOX.frame_bytes)

    def _line(self):
        """The next line, or None at end of file."""
        while True:
            line = self.lines.next()
            if line is None:
                chunk = os.read(self.fd, SANDBOX.pipe_bytes)
                if not chunk:
                    return None
                self.lines.feed(chunk)
            elif line is not wire.TOO_LONG:  # a line too long is no request: passed over
                return line

    def next(self):
        """The next request, or None at end of file (or at a line that is neither a request nor an answer that
        came late: the grader's own). An answer left over (a call the learner's code made behind its test's
        back) is passed over."""
        while True:
            line = self._line()
            if line is None:
                return None
            message = wire.unframe(line)
            if wire.Answer.from_wire(message) is None:
                return wire.Probe.from_wire(message)

    def answer(self):
        """The grader's answer to the call just made (wire.Answer), or None."""
        line = self._line()
        return None if line is None else candidate_calls.answer_of(line)


def reseed():
    """torch.manual_seed(0) without its cost: for each device not yet started (CUDA, XPU), torch.manual_seed queues
    the seed with a record of the whole stack (traceback.format_stack, which reads every frame's source file; in the
    jail, where the runtime's files cannot be read, it tries each again on every call: 0.3 ms a call, and a child
    answers hundreds of requests). `run` queued the seed once already; a started device is seeded here at once."""
    torch.default_generator.manual_seed(0)
    for device in (torch.cuda, torch.xpu):
        if device.is_initialized():
            device.manual_seed_all(0)


def _answer_next(requests, ns, channel, catalog):
    """Answer one request; False when there is none left. The request lives in this frame alone, so nothing of
    it is left for the next request's learner code to find (not even in a frame's cached locals)."""
    request = requests.next()
    if request is None:
        return False
    signal.setitimer(signal.ITIMER_REAL, 0)
    reseed()  # each request from the same state, whatever was asked before it (the order is drawn)
    params = request.params
    uses_candidates = getattr(catalog.get(request.probe), "candidate_table", None)
    table = candidate_calls.table(params.get("candidates") if uses_candidates else [])  # earlier ones answer no more
    if uses_candidates:  # a property test: run on the grader's candidates, by token
        params = {**params, "table": table}
    try:
        result = probes.run(ns, request.probe, params, request.exercise, catalog)
    except BaseException as exc:  # SystemExit raised from inside learner code, and worse
        result = {"error": f"{type(exc).__name__}: {exc}"[:1000], "error_type": type(exc).__name__}
    try:
        channel.send_result(request.token, result)
    except BaseException as exc:
        channel.send_result(request.token, {"error": f"could not store the result: {exc}"[:500],
                                               "error_type": "StoreError"})
    return True


def run(job, result_fd, request_fd, group, catalog):
    """The child, from fork to its end: confine it (into `group`, its memory cgroup, when there is one),
    execute the job's statements, then answer requests until the grader closes the request pipe."""
    try:
        _confine(job, {result_fd, request_fd}, group)
    except BaseException:
        os._exit(wire.EXIT_SETUP_FAILED)
    torch.set_num_threads(1)
    torch.manual_seed(0)  # every generator, a device's queued until the device starts (once: see reseed)
    channel = ResultPipe(result_fd)
    statements, stmt_seconds = job.statements, job.stmt_seconds
    job = None  # the child keeps nothing of the job but its statements
    ns, log = _execute(statements, stmt_seconds, channel)
    channel.send("_progress", b"probes")
    channel.send("_exec.json", json.dumps(log).encode())
    requests = _Requests(request_fd)
    candidate_calls.connect(channel.send, requests.answer)
    while _answer_next(requests, ns, channel, catalog):
        gc.collect()  # what the last request left in reference cycles (a traceback's frames) goes with it
    channel.send("_progress", b"done")
