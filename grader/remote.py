"""Grading in a process forked from the sandbox's zygote, so that the grader's own process never
imports torch (about two seconds of CPU that would otherwise compete with the zygote's start).

    grader = RemoteGrader(settings)        # starts the zygote, which forks a trusted grading process once torch is in
    grade = grader.grade("submission/")    # the same Grade as grader.grading.Grader gives

The forked process runs the grader's own code (grader.grading.Grader, the reference, the hidden checks)
and is trusted: it asks the zygote for sessions over a control connection of its own and forks no process
that runs learner code (only the parsers of a submission's files, grader/parse.py), so nothing it holds can reach
a sandbox child (every child is forked from a session, every session from the clean zygote). It is the same
grading path, in another process: the command line, the batch workers and the Gradescope runner use it; the
tests and the pytest plugin grade in-process.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .records import Grade, messages
from .sandbox import procs
from .sandbox.errors import SandboxError
from .sandbox.host.client import Zygote, ZygoteClient
from .sandbox.wire import Channel, Graded, GradeFailed, GraderSetup, GradeSubmission, GradingProgress
from .settings import Settings
from .submission import SubmissionError

REPO = Path(__file__).resolve().parent.parent
ERRORS = {"SubmissionError": SubmissionError, "SandboxError": SandboxError}


# ---- in the forked process ----------------------------------------------------------------------------------
def serve(sock, control, hello, setup):
    """Grade what the grader's process asks for (GradeSubmission), one submission at a time, until it hangs up.
    The zygote's bootstrap (grader/sandbox/runtime/bootstrap.py) calls it, as the setup line's "serve" names it;
    `setup`: that GraderSetup line (wire.GraderSetup)."""
    import torch

    from .grading import Grader

    settings = Settings.from_json(setup.settings)
    torch.set_num_threads(1)
    _limit_memory(settings.limits.judge_memory_mb)
    # the grader's temporary folder, not the zygote's: the sandbox's user-id slots are locked there, shared
    # by every grader on the machine (two batch workers must never borrow the same uid)
    tempfile.tempdir = setup.tmp
    channel = Channel(sock)
    from .checks import by_key

    checks = None if setup.checks is None else [by_key()[k] for k in setup.checks]
    grader = Grader(settings, checks, zygote=ZygoteClient(control, settings.sandbox, hello))
    while True:
        request = GradeSubmission.from_wire(channel.receive())
        if request is None:
            return

        def progress(exercise, done, total):
            channel.send(GradingProgress(exercise, done, total))

        try:
            reply = Graded(grader.grade(request.path, progress, request.student or None,
                                        request.assignment or None).to_json())
        except SubmissionError as exc:  # its message crosses as message data (messages.dumps)
            reply = GradeFailed(type(exc).__name__, messages.dumps(exc.message))
        except SandboxError as exc:  # the same
            reply = GradeFailed(type(exc).__name__, messages.dumps(exc.message))
        except Exception as exc:  # the grader itself failed: say what, and keep serving
            reply = GradeFailed("RuntimeError", f"{type(exc).__name__}: {exc}")
        channel.send(reply)


def _limit_memory(megabytes):
    """The trusted grading process judges answers within `megabytes` more than it has mapped now (an address-space
    limit: a judgement that needs more fails its check, never the grader). Not on a machine with an NVIDIA driver:
    CUDA reserves far more address space than it uses. What bounds this process there too: the results it accepts
    from one submission's children are capped (Limits.submission_result_bytes, counted before anything is decoded:
    sandbox/host/session.py), and each answer's tensors before any judgement (grading._form_problem)."""
    import resource

    if os.path.exists("/dev/nvidiactl"):
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = procs.mapped_bytes() + (megabytes << 20)
    if hard == resource.RLIM_INFINITY or limit < hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


# ---- in the grader's process ------------------------------------------------------------------------------------
def start_sandbox(settings):
    """This process's zygote, started (when it is not yet) with a trusted grading process that it forks as soon as
    torch is loaded: the first RemoteGrader on it takes that one. Called first thing, it lets the zygote's start
    overlap whatever this process does before grading (this module imports no check, no torch)."""
    return Zygote.start(settings, early_grader=True)


class RemoteGrader:
    """grader.grading.Grader's interface, the grading done in a trusted fork of the zygote."""

    def __init__(self, settings, checks=None, zygote=None):
        self.settings = settings
        zygote = zygote or start_sandbox(settings)
        sock, self.pid = zygote.fork_grader()
        self.zygote_pid = zygote.proc.pid
        self.channel = Channel(sock)
        self.channel.send(GraderSetup(str(REPO), f"{__name__}:{serve.__name__}", tempfile.gettempdir(),
                                      settings.to_json(), None if checks is None else [c.key for c in checks]))

    def grade(self, submission, progress=None, student=None, assignment=None) -> Grade:
        """`student`, `assignment`: what the draws are keyed on (grading.Grader.grade)."""
        self.channel.send(GradeSubmission(str(Path(submission).absolute()),  # its working folder is not ours
                                          student or "", assignment or ""))
        from .checks import by_key

        by_key()  # the course's checks, which the grade's verdicts name, loaded while the submission is graded
        while True:
            message = self.channel.receive()
            if message is None:
                raise SandboxError(messages.msg("the grading process ended unexpectedly"))
            step = GradingProgress.from_wire(message)
            if step is not None:
                if progress:
                    progress(step.exercise, step.done, step.total)
                continue
            failed = GradeFailed.from_wire(message)
            if failed is not None:
                if failed.error_type in ("SubmissionError", "SandboxError"):  # the grader's own trusted process:
                    # decoded whole
                    raise ERRORS[failed.error_type](messages.from_json(json.loads(failed.message)))
                raise ERRORS.get(failed.error_type, RuntimeError)(failed.message)
            graded = Graded.from_wire(message)
            if graded is None:
                raise SandboxError(messages.msg("the grading process answered with something other than a grade"))
            grade = Grade.from_json(graded.grade, by_key())
            grade.submission = str(submission)
            return grade

    def close(self):
        self.channel.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

