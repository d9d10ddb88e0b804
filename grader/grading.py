"""The one grading path: a submission in, a verdict per check out.

    grader = Grader(settings)                 # starts the sandbox's zygote at once
    grade = grader.grade("submission/")       # Grade: verdicts, notes, seconds

The command line, `batch`, the Gradescope runner and the pytest plugin are thin adapters on this.
Learner code runs only in the sandbox (one session per submission, children forked from it); the
reference runs here; the verdicts are decided here alone:

- a grade rests on inputs the learner has never seen: each exercise's main checks draw their inputs
  for this submission from the grader's secret (grader/unseen.py), and the reference answers them
  here. Everything the student release holds (public inputs, their answers) is known to a cheater;
- which checks are skipped (only CUDA checks, on a machine without a GPU), whatever a child says;
- what form an answer must have before it is judged: every field the reference's answer has (a
  tensor's dtype, device and shape too), tensors of the reference's shape before any property is
  computed on them (the cost of judging is bounded by the reference's answer, never by the learner's),
  and each judgement under a time limit;
- points only for work done (`gate`).

Children hold one request at a time (sandbox/wire.py), and public and hidden checks run in separate
children: first a child for the visible checks (public and main) of every exercise, then a child for
the hidden checks of every exercise, so nothing a child produces while it holds a hidden request can
reach a visible check's feedback or the notes. What hidden children log goes to `Grade.hidden_notes`,
shown only where hidden checks are.

Time is one budget: each exercise has `limits.wall_seconds` for all its children and retries, and the
submission `limits.submission_seconds` for all of its exercises.
"""

from __future__ import annotations

import secrets
import signal
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

from . import unseen
from .candidates import Calls
from .checks import all_checks
from .records import Grade, Status, Verdict
from .sandbox.wire import Probe
from .sandbox.zygote import Zygote
from .settings import ANSWER, DEFAULT_SECRET
from .submission import defining_file, read_submission

REPO = Path(__file__).resolve().parent.parent
MAX_NUMEL = ANSWER.tensor_numel  # elements of one tensor in an answer
MAX_NDIM = ANSWER.tensor_ndim
VALUE_FREE = ("raises", "fields", "ok")  # expectations whose answer does not depend on the input's values
SHAPED = ("match", "property")  # expectations judged on tensors: the reference's answer says their fields and shapes
GATE = ("counts once {exercise} answers its main check (inputs drawn for this submission) the way the reference "
        "does; it does not yet")
GATE_MISTAKE = ("counts once {exercise} answers its main check (inputs drawn for this submission) the way the "
                "reference does; with the named mistake there, only the checks that do not depend on the values "
                "count")
VISIBLE, HIDDEN = "visible", "hidden"


class GraderError(RuntimeError):
    """The grader itself is broken (for example the reference fails a check): never the learner's fault."""


class JudgeTimeout(Exception):
    pass


def _cuda_available():
    import torch

    return torch.cuda.is_available()


# ---- judging one answer ---------------------------------------------------------------------------------------
@contextmanager
def _time_limit(seconds):
    """Raise JudgeTimeout in this block after `seconds` (main thread only: elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or not seconds:
        yield
        return

    def expire(signum, frame):
        raise JudgeTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _label(key):
    return "output" if key == "out" else key


def _form_problem(check, got, expected):
    """Why an answer is not in a form worth judging, or None. `expected` is the reference's answer: the
    answer must describe every tensor the reference returns (its dtype and device, its values or, on the
    meta device, its shape), and a property is computed only on tensors of the reference's shapes."""
    import torch

    for key, value in got.items():
        if isinstance(value, torch.Tensor) and (value.numel() > MAX_NUMEL or value.dim() > MAX_NDIM):
            return f"{_label(key)} has shape {tuple(value.shape)}: far larger than this check's inputs call for"
    if expected is None or "error" in expected or "error" in got:
        return None
    for key, value in expected.items():
        if not isinstance(value, torch.Tensor) and not key.endswith(":shape"):
            continue
        key = key[:-len(":shape")] if key.endswith(":shape") else key
        missing = [w for w in (key, f"{key}:dtype", f"{key}:device", f"{key}:shape") if w in expected and w not in got]
        if missing:
            return (f"the answer does not say {', '.join(missing)}: a result must carry every field the grader "
                    "asks for")
        if check.expect == "property" and isinstance(value, torch.Tensor) and isinstance(got[key], torch.Tensor) \
                and got[key].shape != value.shape:
            return f"{_label(key)}: expected shape {tuple(value.shape)}, got {tuple(got[key].shape)}"
    return None


def judge(check, got, seconds=None) -> Verdict:
    """The verdict on one answer (a probe result from the sandbox)."""

    from posenc_selfcheck.evaluate import evaluate

    from . import reference

    if "skipped" in got:
        return Verdict(check, Status.FAILED, "the exercise's process reported this check as skipped; only the "
                                             "grader skips a check (a CUDA check where there is no GPU)")
    expected = reference.answer(check) if check.expect in SHAPED else None
    if expected is not None and "skipped" in expected:
        return Verdict(check, Status.SKIPPED, expected["skipped"])
    if expected is not None and "error" in expected:
        raise GraderError(f"the reference fails check {check.key} ({check.name}): {expected['error']}")
    problem = _form_problem(check, got, expected)
    if problem:
        return Verdict(check, Status.FAILED, problem)
    compared = expected if check.needs_reference() else None
    try:
        # evaluate() decides every kind of check, as the self-check does; for a property it first fails an answer
        # that holds NaN (a property that tested `err > tol` would let NaN through): that rule is written there, once
        with _time_limit(seconds):
            status, feedback = evaluate(check.spec(), got, compared, ())
            if status == Status.FAILED and check.mistakes:
                known = reference.mistakes(check)
                status, feedback = evaluate(check.spec(), got, compared, known)
                named = [m for m, _ in known if feedback.startswith(m)]
                return Verdict(check, Status(status), feedback, named[0] if named else "")
    except JudgeTimeout:
        return Verdict(check, Status.FAILED, f"the answer could not be judged within {seconds:g} s: return what the "
                                             "exercise asks for, of the size it asks for")
    except Exception as exc:  # an answer of a form no check foresaw: the check fails, the run goes on
        return Verdict(check, Status.FAILED, f"the answer could not be judged ({type(exc).__name__}: "
                                             f"{str(exc)[:200]}): return what the exercise asks for")
    return Verdict(check, Status(status), feedback)


def gate(verdicts):
    """Points only for work done on inputs the learner has never seen. An exercise's checks count once
    one of its main checks is answered the way the reference answers it; when its main checks are
    answered only with a named mistake's answer (real work, with a known error), only the checks whose
    answer does not depend on the input's values count (errors raised, module facts, devices); when
    neither, none does."""
    main = [v for v in verdicts if v.check.main and v.status != Status.SKIPPED]
    if not main or any(v.status == Status.PASSED for v in main):
        return verdicts
    mistake = any(v.mistake for v in main)
    exercise = verdicts[0].check.exercise
    why = (GATE_MISTAKE if mistake else GATE).format(exercise=exercise)
    return [Verdict(v.check, Status.FAILED, why)
            if v.status == Status.PASSED and not v.check.main and not (mistake and v.check.expect in VALUE_FREE)
            else v for v in verdicts]


# ---- one submission ---------------------------------------------------------------------------------------------
class Grader:
    """Grades submissions one after the other with one zygote (started at construction, so its
    torch import overlaps whatever the caller does next). Each submission gets a fresh session."""

    def __init__(self, settings, checks=None, zygote=None):
        self.settings = settings
        self.zygote = zygote or Zygote.start(settings)  # the process's: closed at exit (or by zygote.close_all())
        self.checks = tuple(checks) if checks is not None else all_checks()
        self._secret = None

    def secret(self):
        if self._secret is None:
            self._secret = unseen.load_secret(self.settings.secret_file or REPO / DEFAULT_SECRET)
        return self._secret

    def grade(self, submission, progress=None) -> Grade:
        """Grade one submission. `progress(exercise, done, total)` is called before each exercise that
        runs (and with exercise None at the end). Raises SubmissionError when the path holds nothing
        gradable."""
        start = time.perf_counter()
        files = read_submission(submission, self.settings.read)
        checks = [c for c in self.checks if c.cuda or not self.settings.cuda_only]
        cuda = any(c.cuda for c in checks) and _cuda_available()
        by_exercise = OrderedDict()
        for check in checks:
            by_exercise.setdefault(check.exercise, []).append(check)
        sources = {ex: defining_file(files, ex) for ex in by_exercise}
        runnable = [ex for ex, cs in by_exercise.items()
                    if sources[ex] is not None and any(cuda or not c.cuda for c in cs)]
        # main checks with the inputs drawn for this submission's code
        for ex in runnable:
            ident = unseen.identity(sources[ex].statements)
            by_exercise[ex] = [unseen.resolve(c, self.secret(), ident) if c.unseen else c for c in by_exercise[ex]]
        self._warm_reference(by_exercise, runnable, cuda)
        notes = [n for f in files for n in f.notes]
        results, logs, session = {}, {VISIBLE: [], HIDDEN: []}, None
        budget = _Budget(self.settings.limits)
        try:
            for phase in (VISIBLE, HIDDEN):
                for n, exercise in enumerate(runnable):
                    graded = [c for c in by_exercise[exercise] if (cuda or not c.cuda)
                              and (c.visible if phase == VISIBLE else not c.visible)]
                    if not graded:
                        continue
                    if progress and phase == VISIBLE:
                        progress(exercise, n, len(runnable))
                    seconds = budget.left(exercise)
                    if seconds <= 0:
                        why = budget.why(exercise)
                        results.update({c.key: {"error": f"not run: {why}", "error_type": "NoResult"} for c in graded})
                        logs[phase].append(("sandbox", f"{exercise}: not run: {why}"))
                        continue
                    session = session or self.zygote.session(self.settings)
                    begun = time.monotonic()
                    run, tokens = self._run(session, sources[exercise].statements, graded, seconds)
                    budget.spend(exercise, time.monotonic() - begun)
                    if run.ended not in ("ok", ""):
                        logs[phase].append((exercise, f"the process running it {run.ended}"))
                    logs[phase] += run.log
                    results.update({c.key: run.results.get(tokens[c.key], {"error": "no result",
                                                                            "error_type": "NoResult"})
                                    for c in graded})
            if progress:
                progress(None, len(runnable), len(runnable))
        finally:
            if session is not None:
                session.close()
        verdicts = []
        for exercise, exercise_checks in by_exercise.items():
            if exercise not in runnable:
                verdicts += [self._unrunnable(c, cuda) or Verdict(
                    c, Status.MISSING, f"not implemented yet: no `{exercise}` is defined") for c in exercise_checks]
                continue
            verdicts += gate([self._unrunnable(c, cuda) or judge(c, results[c.key], self.settings.limits.judge_seconds)
                              for c in exercise_checks])
        notes += _notes(logs[VISIBLE]) + (session.closing_notes if session is not None else [])
        hidden_notes = [n for n in _notes(logs[HIDDEN]) if n not in notes]
        flags = sorted({flag for f in files for flag in f.flags})
        return Grade(str(submission), verdicts, notes, time.perf_counter() - start, flags, hidden_notes)

    @staticmethod
    def _warm_reference(by_exercise, runnable, cuda):
        """The reference's answers while the zygote may still be importing torch (two processes, in parallel)."""
        from . import reference

        for ex in runnable:
            for c in by_exercise[ex]:
                if (cuda or not c.cuda) and c.expect in SHAPED:
                    reference.answer(c)

    @staticmethod
    def _unrunnable(check, cuda):
        if check.cuda and not cuda:
            # worth nothing here, whether or not the exercise exists: totals stay comparable
            return Verdict(check, Status.SKIPPED, "no CUDA device on this machine")
        return None

    def _run(self, session, statements, checks, seconds):
        """Run checks in one child, one request at a time, each under a token drawn for this run (the child
        learns neither which check, nor which exercise visibility, nor which candidate a request stands for),
        in an order drawn for this run."""
        from .sandbox.results import collect

        ordered = list(checks)
        secrets.SystemRandom().shuffle(ordered)
        tokens = {c.key: "r" + secrets.token_hex(8) for c in ordered}
        calls = Calls()  # a property test's candidates are computed here, named by tokens drawn per request
        requests = [Probe(tokens[c.key], c.probe, calls.params(tokens[c.key], c.probe, _in_run_order(c.params)),
                          c.exercise) for c in ordered]
        limit = self.settings.limits.result_bytes
        run = session.run(statements, requests, lambda outdir, reqs, ended: collect(outdir, reqs, ended, limit),
                          seconds, calls)
        run.results = {token: calls.restore(token, result) for token, result in run.results.items()}
        return run, tokens


def _in_run_order(params):
    """Candidates a property test is asked to judge, in an order drawn for this run (their place says nothing)."""
    if isinstance(params.get("candidates"), list):
        params = {**params, "candidates": list(params["candidates"])}
        secrets.SystemRandom().shuffle(params["candidates"])
    return params


class _Budget:
    """Wall-clock seconds left to one exercise (all its children and retries) and to the submission."""

    def __init__(self, limits):
        self.limits, self.used, self.total = limits, {}, 0.0

    def left(self, exercise):
        return min(self.limits.wall_seconds - self.used.get(exercise, 0.0),
                   self.limits.submission_seconds - self.total)

    def why(self, exercise):
        if self.limits.submission_seconds - self.total <= 0:
            return f"the submission used up its {self.limits.submission_seconds:g} s of wall clock"
        return f"the exercise used up its {self.limits.wall_seconds:g} s of wall clock"

    def spend(self, exercise, seconds):
        self.used[exercise] = self.used.get(exercise, 0.0) + seconds
        self.total += seconds


def _notes(log):
    """'where: what' for each distinct entry of a run log, in order."""
    seen, out = set(), []
    for where, what in log:
        if (where, what) not in seen:
            seen.add((where, what))
            out.append(f"{where}: {what}")
    return out


def grade(submission, settings, checks=None, progress=None) -> Grade:
    """Grade one submission with a grader of its own (the zygote is the process's and is reused)."""
    return Grader(settings, checks).grade(submission, progress)
