"""The one grading path: a submission in, a verdict per check out.

    with Grader(settings) as grader:          # starts the sandbox's zygote at once
        grade = grader.grade("submission/")    # Grade: verdicts, notes, seconds

The command line, `batch`, the Gradescope runner and the pytest plugin are thin adapters on this.
Learner code runs only in the sandbox (one session per submission, one child per exercise); the
reference runs here; the verdicts are decided here alone:

- which checks are skipped (only CUDA checks, on a machine without a GPU), whatever a child says;
- what form an answer must have before it is judged (sizes are capped; an answer that cannot be
  judged is a failed check with its reason, never a failed run);
- points only for work done: an exercise's other checks (error handling, properties, module facts,
  device placement, inputs whose right answer is trivial) count once it answers one of its main
  inputs (its checks marked `main`) with the reference's answer or with a known mistake's answer
  (real work with a named error), so a stub that raises on everything or returns its input earns
  nothing.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from .checks import all_checks
from .records import Grade, ProbeRequest, Status, Verdict
from .sandbox.anonymize import rename_params, restore_keys
from .sandbox.zygote import Zygote
from .submission import defining_file, read_submission

MAX_NUMEL = 1 << 24  # elements of one tensor in an answer
MAX_PROPERTY_NUMEL = 1 << 20  # ... of an answer judged by a property (computed here, in float64)
MAX_NDIM = 8
GATE = ("counts once {exercise} answers one of its main inputs (the first checks your self-check runs) the way "
        "the exercise asks; it does not yet")


class GraderError(RuntimeError):
    """The grader itself is broken (for example the reference fails a check): never the learner's fault."""


def _cuda_available():
    import torch

    return torch.cuda.is_available()


# ---- judging one answer ---------------------------------------------------------------------------------------
def _form_problem(check, got):
    """Why an answer is not in a form worth judging, or None."""
    import torch

    limit = MAX_PROPERTY_NUMEL if check.expect == "property" else MAX_NUMEL
    for key, value in got.items():
        if isinstance(value, torch.Tensor) and (value.numel() > limit or value.dim() > MAX_NDIM):
            return (f"{'output' if key == 'out' else key} has shape {tuple(value.shape)}: far larger than this "
                    "check's inputs call for")
    return None


def judge(check, got) -> Verdict:
    """The verdict on one answer (a probe result from the sandbox)."""
    import torch

    from posenc_selfcheck.evaluate import evaluate

    from . import reference

    if "skipped" in got:
        return Verdict(check, Status.FAILED, "the exercise's process reported this check as skipped; only the "
                                             "grader skips a check (a CUDA check where there is no GPU)")
    problem = _form_problem(check, got)
    if problem:
        return Verdict(check, Status.FAILED, problem)
    expected = reference.answer(check) if check.needs_reference() else None
    if expected is not None and "skipped" in expected:
        return Verdict(check, Status.SKIPPED, expected["skipped"])
    if expected is not None and "error" in expected:
        raise GraderError(f"the reference fails check {check.key} ({check.name}): {expected['error']}")
    try:
        if check.expect == "property" and "error" not in got:
            # a property compares errors with a tolerance, and NaN > tol is False: never let NaN pass
            nan = [k for k, v in got.items() if isinstance(v, torch.Tensor) and v.is_floating_point()
                   and v.isnan().any()]
            if nan:
                return Verdict(check, Status.FAILED, f"{'output' if nan[0] == 'out' else nan[0]} holds NaN")
        status, feedback = evaluate(check.spec(), got, expected, ())
        if status == Status.FAILED and check.mistakes:
            known = reference.mistakes(check)
            status, feedback = evaluate(check.spec(), got, expected, known)
            named = [m for m, _ in known if feedback.startswith(m)]
            return Verdict(check, Status(status), feedback, named[0] if named else "")
    except Exception as exc:  # an answer of a form no check foresaw: the check fails, the run goes on
        return Verdict(check, Status.FAILED, f"the answer could not be judged ({type(exc).__name__}: "
                                             f"{str(exc)[:200]}): return what the exercise asks for")
    return Verdict(check, Status(status), feedback)


def gate(verdicts):
    """Points only for work done: see the module's docstring."""
    main = [v for v in verdicts if v.check.main and v.status != Status.SKIPPED]
    if not main or any(v.status == Status.PASSED or v.mistake for v in main):
        return verdicts
    exercise = verdicts[0].check.exercise
    return [Verdict(v.check, Status.FAILED, GATE.format(exercise=exercise))
            if v.status == Status.PASSED and v not in main else v for v in verdicts]


# ---- one submission ---------------------------------------------------------------------------------------------
class Grader:
    """Grades submissions one after the other with one zygote (started at construction, so its
    torch import overlaps whatever the caller does next). Each submission gets a fresh session."""

    def __init__(self, settings, checks=None, zygote=None):
        self.settings = settings
        self.zygote = zygote or Zygote.start(settings)
        self.checks = tuple(checks) if checks is not None else all_checks()
        self.last_session = None  # the session of the latest submission (its uid and folder: for tests)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        pass  # the zygote is the process's; it is closed at exit (or by zygote.close_all())

    def grade(self, submission, progress=None) -> Grade:
        """Grade one submission. `progress(exercise, done, total)` is called before each exercise that
        runs (and with exercise None at the end). Raises SubmissionError when the path holds nothing
        gradable."""
        from . import reference

        start = time.perf_counter()
        files = read_submission(submission)
        checks = [c for c in self.checks if c.cuda or not self.settings.cuda_only]
        cuda = any(c.cuda for c in checks) and _cuda_available()
        by_exercise = OrderedDict()
        for check in checks:
            by_exercise.setdefault(check.exercise, []).append(check)
        sources = {ex: defining_file(files, ex) for ex in by_exercise}
        runnable = [ex for ex, cs in by_exercise.items()
                    if sources[ex] is not None and any(cuda or not c.cuda for c in cs)]
        # the reference's answers while the zygote may still be importing torch (two processes, in parallel)
        for ex in runnable:
            for c in by_exercise[ex]:
                if c.needs_reference() and (cuda or not c.cuda):
                    reference.answer(c)
        notes, verdicts, seen, session = [n for f in files for n in f.notes], [], set(), None
        try:
            for exercise, exercise_checks in by_exercise.items():
                if exercise not in runnable:
                    verdicts += [self._unrunnable(c, cuda) or Verdict(
                        c, Status.MISSING, f"not implemented yet: no `{exercise}` is defined") for c in exercise_checks]
                    continue
                if progress:
                    progress(exercise, runnable.index(exercise), len(runnable))
                graded = [c for c in exercise_checks if cuda or not c.cuda]
                session = session or self.zygote.session(self.settings)
                self.last_session = session
                run, tokens = self._run(session, sources[exercise].statements, graded)
                if run.ended not in ("ok", ""):
                    notes.append(f"{exercise}: the process running it {run.ended}")
                for where, what in run.log:
                    if (where, what) not in seen:
                        seen.add((where, what))
                        notes.append(f"{where}: {what}")
                results = {c.key: run.results.get(tokens[c.key], {"error": "no result", "error_type": "NoResult"})
                           for c in graded}
                verdicts += gate([self._unrunnable(c, cuda) or judge(c, results[c.key]) for c in exercise_checks])
            if progress:
                progress(None, len(runnable), len(runnable))
        finally:
            if session is not None:
                session.close()
        flags = sorted({flag for f in files for flag in f.flags})
        return Grade(str(submission), verdicts, notes, time.perf_counter() - start, flags)

    @staticmethod
    def _unrunnable(check, cuda):
        if check.cuda and not cuda:
            # worth nothing here, whether or not the exercise exists: totals stay comparable
            return Verdict(check, Status.SKIPPED, "no CUDA device on this machine")
        return None

    def _run(self, session, statements, checks):
        """Run one exercise's checks in one child: public checks' probes first (so nothing a hidden probe
        shows the learner's code can reach a public check's feedback), each under an opaque token."""
        from .sandbox.results import collect

        ordered = sorted(checks, key=lambda c: not c.public)
        tokens = {c.key: f"p{n}" for n, c in enumerate(ordered)}
        names = self.zygote.anonymous  # candidate functions are anonymous in the sandbox (anonymize.py)
        requests = [ProbeRequest(tokens[c.key], c.probe, rename_params(c.params, names), c.exercise) for c in ordered]
        limit = self.settings.limits.result_bytes
        run = session.run(statements, requests, lambda outdir, reqs, ended: collect(outdir, reqs, ended, limit))
        run.results = {token: restore_keys(result, names) for token, result in run.results.items()}
        return run, tokens


def grade(submission, settings, checks=None, progress=None) -> Grade:
    """Grade one submission with a grader of its own (the zygote is the process's and is reused)."""
    with Grader(settings, checks) as grader:
        return grader.grade(submission, progress)
