"""The one grading path: a submission in, a verdict per check out.

    grader = Grader(settings)                 # starts the sandbox's zygote at once
    grade = grader.grade("submission/")       # Grade: verdicts, notes, seconds

The command line, `batch`, the Gradescope runner and the pytest plugin are thin adapters on this.
Learner code runs only in the sandbox (sessions of the submission's own, children forked from them); the
reference runs here; the verdicts are decided here alone:

- a grade rests on inputs the learner has never seen: every scored check earns its points only when its
  twins (grader/twins.py: the same case, on inputs drawn for this student from the grader's secret,
  grader/unseen.py) are answered as the reference answers them, here; main checks are drawn already.
  Everything the student release holds (public inputs, their answers) is known to a cheater;
- which checks are skipped (only CUDA checks, on a machine without a GPU), whatever a child says;
- what form an answer must have before it is judged: every field the reference's answer has (a
  tensor's dtype, device and shape too), tensors of the reference's shape before any property is
  computed on them (the cost of judging is bounded by the reference's answer, never by the learner's),
  and each judgement under a time limit;
- points only for work done on unseen inputs (`with_twins`).

Children hold one request at a time (sandbox/wire.py), and public and hidden checks run in separate
children: first a child for the visible (public) checks of every exercise, then a child for the hidden
checks, main checks and twins of every exercise, so nothing a child produces while it holds a hidden request can
reach a visible check's feedback or the notes; the hidden children start once every visible one has ended. Within a
phase, the exercises' children run on lanes (grader/lanes.py: `Settings.lanes` sessions of the submission's own, one
child each at a time). What hidden children log goes to `Grade.hidden_notes`,
shown only where hidden checks are. For the same reason `Grade.seconds`, the time every report shows,
counts the visible work only (reading the submission, drawing, the visible children): how long a hidden
child ran would tell what it was asked (a learner's code could sleep for as many seconds as an input's value).

Time is one budget: each exercise has `limits.wall_seconds` for all its children and retries, and the
submission `limits.submission_seconds` for reading and parsing it and all of its exercises.
"""

from __future__ import annotations

import json
import secrets
import signal
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from . import shipped, twins, unseen
from .candidates import Calls, tables
from .checks import all_checks, mistakes
from .lanes import Lanes
from .records import Grade, Status, Verdict, messages, no_result
from .sandbox.host.client import Zygote
from .sandbox.host.session import Shared
from .sandbox.wire import Probe
from .settings import ANSWER, DEFAULT_SECRET
from .submission import defining_file, read_submission

REPO = Path(__file__).resolve().parent.parent
SHAPED = ("match", "property")  # expectations judged on tensors: the reference's answer says their fields and shapes
msg = messages.msg
TWIN = msg("counts once the same case, on inputs drawn for you that no learner has seen, is answered the way the "
           "reference answers it; it is not yet")
NO_STUDENT = msg("graded without a student id (grade --student ID): the inputs drawn for the main checks and twins "
                 "are the same for every submission graded this way")
NO_CUDA = msg("no CUDA device on this machine")
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
    return msg("output") if key == "out" else key


def _form_problem(check, got, expected):
    """Why an answer is not in a form worth judging, or None. `expected` is the reference's answer: the
    answer must describe every tensor the reference returns (its dtype and device, its values or, on the
    meta device, its shape), and a property is computed only on tensors of the reference's shapes."""
    import torch

    for key, value in got.items():
        if isinstance(value, torch.Tensor) and (value.numel() > ANSWER.tensor_numel
                                                or value.dim() > ANSWER.tensor_ndim):
            return msg("{what} has shape {shape}: far larger than this check's inputs call for", what=_label(key),
                       shape=str(tuple(value.shape)))
    if expected is None or "error" in expected or "error" in got:
        return None
    for key, value in expected.items():
        if not isinstance(value, torch.Tensor) and not key.endswith(":shape"):
            continue
        key = key[:-len(":shape")] if key.endswith(":shape") else key
        missing = [w for w in (key, f"{key}:dtype", f"{key}:device", f"{key}:shape") if w in expected and w not in got]
        if missing:
            return msg("the answer does not say {fields}: a result must carry every field the grader asks for",
                       fields=", ".join(missing))
        if check.expect == "property" and isinstance(value, torch.Tensor) and isinstance(got[key], torch.Tensor) \
                and got[key].shape != value.shape:
            return msg("{what}: expected shape {expected}, got {got}", what=_label(key),
                       expected=str(tuple(value.shape)), got=str(tuple(got[key].shape)))
    return None


def judge(check, got, seconds=None) -> Verdict:
    """The verdict on one answer (a probe result from the sandbox)."""

    from posenc_selfcheck.evaluate import evaluate

    from . import reference

    if "skipped" in got:
        return Verdict(check, Status.FAILED, msg("the exercise's process reported this check as skipped; only the "
                                                 "grader skips a check (a CUDA check where there is no GPU)"))
    expected = reference.answer(check) if check.expect in SHAPED else None
    if expected is not None and "skipped" in expected:
        return Verdict(check, Status.SKIPPED, NO_CUDA if expected["skipped"] == NO_CUDA.id
                       else messages.verbatim(expected["skipped"]))
    if expected is not None and "error" in expected:
        raise GraderError(f"the reference fails check {check.key} ({check.name}): {expected['error']}")
    problem = _form_problem(check, got, expected)
    if problem:
        return Verdict(check, Status.FAILED, problem)
    compared = expected if check.needs_reference() else None
    try:
        # evaluate() decides every kind of check, as the self-check does. It refuses an answer that holds a complex
        # tensor before anything reads it, and for a property it first fails an answer that holds NaN or inf (a
        # property that tested `err > tol` would let NaN through): those rules are written there, once
        with _time_limit(seconds):
            status, feedback = evaluate(check.spec(), got, compared, ())
            if status == Status.FAILED and check.mistakes:
                known = reference.mistakes(check)
                status, feedback = evaluate(check.spec(), got, compared, known)
                named = [m for m, _ in known if feedback.leads_with(m)]
                return Verdict(check, Status(status), feedback, named[0].id if named else "")
    except JudgeTimeout:
        return Verdict(check, Status.FAILED, msg("the answer could not be judged within {seconds:g} s: return what "
                                                 "the exercise asks for, of the size it asks for", seconds=seconds))
    except Exception as exc:  # an answer of a form no check foresaw: the check fails, the run goes on
        return Verdict(check, Status.FAILED, msg("the answer could not be judged ({error}): return what the exercise "
                                                 "asks for", error=messages.verbatim(f"{type(exc).__name__}: "
                                                                                      f"{str(exc)[:200]}")))
    return Verdict(check, Status(status), feedback)


def _twin_failure(verdict):
    """Why a twin's failure voids its check, in words that say nothing of the twin's inputs or its expected
    answer (they stay the student's own until the due date): the named mistake, or the exception's type."""
    if verdict.mistake:  # the known mistake's message (judge), in the context of its name
        name = next(n for n in verdict.check.mistakes if mistakes()[n].message == verdict.mistake)
        return msg("counts once the same case, on inputs drawn for you that no learner has seen, is answered the way "
                   "the reference answers it; there: {mistake}", mistake=msg(verdict.mistake, context=name))
    error = _raised(verdict.feedback)
    if error is None:
        return TWIN
    return msg("counts once the same case, on inputs drawn for you that no learner has seen, is answered the way the "
               "reference answers it; there it raised {error_type}", error_type=messages.verbatim(error.split(":")[0]))


def _raised(feedback):
    """The exception's text ("ValueError: ...") when the feedback says first that the answer raised it, else None."""
    while isinstance(feedback, messages.Message):
        if feedback.id == "raised {error}":
            return feedback.values["error"].text
        head = feedback.id[1:].split("}", 1)[0] if feedback.id.startswith("{") else ""
        feedback = feedback.values.get(head)
    return None


def caught_by(check):
    """The messages of the known mistakes `check` itself fails (their answers to its own inputs, judged): what it
    tests. On a value-free check's twin such a mistake never proves the work; another one does (a sign flipped in a
    bias still depends only on j - i: the property holds, and the flipped bias is work done)."""
    from . import reference

    if check.key not in _CAUGHT:
        _CAUGHT[check.key] = frozenset(message.id for message, answer in reference.mistakes(check)
                                       if judge(check, answer).status == Status.FAILED)
    return _CAUGHT[check.key]


_CAUGHT = {}  # {check key: caught_by(check)}: the course's checks are fixed for the process


@lru_cache(maxsize=None)
def _no_work():
    """The messages of the known mistakes whose answer is their input (Mistake.no_work): never work done."""
    return frozenset(m.message for m in mistakes().values() if m.no_work)


def with_twins(verdicts, twin_keys):
    """Points only for work done on inputs the learner has never seen: a check that passed keeps its points only
    when each of its twins (`twin_keys`: {check key: its twins' keys}) passed too (a skipped twin, a CUDA one on a
    machine without a GPU, counts as its check does). The twins' verdicts are folded into their checks' and leave
    the list; each check stands alone."""
    twin_verdicts = {v.check.key: v for v in verdicts if v.check.twin_of}
    out = []
    for v in verdicts:
        if v.check.twin_of:
            continue
        twins = [twin_verdicts[k] for k in twin_keys.get(v.check.key, ()) if k in twin_verdicts]
        failed = [t for t in twins if t.status not in (Status.PASSED, Status.SKIPPED)
                  and not (t.check.proves_work and t.mistake and t.mistake not in caught_by(v.check)
                           and t.mistake not in _no_work())]
        if v.status == Status.PASSED and failed:
            v = Verdict(v.check, Status.FAILED, _twin_failure(failed[0]), failed[0].mistake)
        out.append(v)
    return out


# ---- one submission ---------------------------------------------------------------------------------------------
class Grader:
    """Grades submissions one after the other with one zygote (started at construction, so its
    torch import overlaps whatever the caller does next). Each submission gets fresh sessions (grader/lanes.py)."""

    def __init__(self, settings, checks=None, zygote=None):
        self.settings = settings
        self.zygote = zygote or Zygote.start(settings)  # the process's: closed at exit (or by zygote.close_all())
        checks, self.twin_keys = twins.with_twins(checks if checks is not None else all_checks())
        self.checks = tuple(checks)
        self._secret = None

    def secret(self):
        if self._secret is None:
            self._secret = unseen.load_secret(self.settings.secret_file or REPO / DEFAULT_SECRET)
        return self._secret

    def grade(self, submission, progress=None, student=None, assignment=None) -> Grade:
        """Grade one submission. `progress(exercise, done, total)` is called before each exercise that
        runs, in each of the two phases (visible, then hidden: `total` counts both), and with exercise None at
        the end. `student`: the student's id as the platform records it (batch, nbgrader, Gradescope's user ids;
        `grade --student`), `assignment` the assignment's (default: the settings' assignment, else the course):
        the draws of main checks and twins are keyed on them, never on the submission's bytes. Raises
        SubmissionError when the path holds nothing gradable."""
        start = time.perf_counter()
        budget = _Budget(self.settings.limits)
        # reading and parsing count against the submission's wall clock and against every exercise's, which all rest
        # on what was read: one exercise's budget bounds them too
        begun = time.monotonic()
        files = read_submission(submission, self.settings.read,
                                min(budget.left_submission(), self.settings.limits.wall_seconds))
        budget.spend_submission(time.monotonic() - begun)
        checks = [c for c in self.checks if c.cuda or not self.settings.cuda_only]
        cuda = any(c.cuda for c in checks) and _cuda_available()
        by_exercise = OrderedDict()
        for check in checks:
            by_exercise.setdefault(check.exercise, []).append(check)
        sources = {ex: defining_file(files, ex) for ex in by_exercise}
        runnable = [ex for ex, cs in by_exercise.items()
                    if sources[ex] is not None and any(cuda or not c.cuda for c in cs)]
        # main checks and twins with the inputs drawn for this student (never equal to an input whose answer ships)
        ident = unseen.identity(self.secret(), assignment or self.settings.assignment or "course",
                                student or unseen.NO_STUDENT)
        known = shipped.inputs()
        for ex in runnable:
            by_exercise[ex] = [unseen.resolve(c, ident, known) if c.unseen else c for c in by_exercise[ex]]
        # the reference's answers to visible checks while the zygote may still be importing torch; those of hidden
        # checks, main checks and twins once the visible clock has stopped (their drawn sizes set how long they take),
        # in a thread of their own while the hidden children run
        self._warm_reference(by_exercise, runnable, cuda, visible=True)
        notes = [n for f in files for n in f.notes] + ([] if student else [NO_STUDENT])
        results, logs, hidden_answers = {}, {VISIBLE: [], HIDDEN: []}, None
        # the exercises of a phase run on lanes, each a session of this submission's (grader/lanes.py), sharing the
        # statements its children skip and its allowance of result bytes
        shared = Shared(self.settings.limits.submission_result_bytes)
        lanes = Lanes(lambda: self.zygote.session(self.settings, shared), self.settings.lanes_here())
        taken = {VISIBLE: [], HIDDEN: []}  # exercises the lanes have taken in each phase, in the order they took them

        def started(job, phase):  # a lane takes `job` (one lane at a time)
            _, exercise, _ = job
            if exercise in taken[phase]:  # another run of an exercise already counted (_parts)
                return
            if progress:  # both phases count: an estimate of the time left must include the hidden one
                progress(exercise, len(taken[phase]) + (phase == HIDDEN) * len(runnable), 2 * len(runnable))
            taken[phase].append(exercise)

        tables()  # loaded here, in this thread, before any lane's thread asks for a candidate
        try:
            for phase in (VISIBLE, HIDDEN):
                if phase == HIDDEN:  # the clock the report shows stops here: hidden children's time tells their inputs
                    visible_seconds = time.perf_counter() - start
                    hidden_answers = _Meanwhile(self._warm_reference, by_exercise, runnable, cuda, False, False)
                jobs = [(n, exercise, part) for n, exercise in enumerate(runnable)
                        if (graded := [c for c in by_exercise[exercise] if (cuda or not c.cuda)
                                       and (c.visible if phase == VISIBLE else not c.visible)])
                        for part in (_parts(graded, lanes.count) if phase == HIDDEN else [graded])]
                # jobs of one file run the same statements: the file says which (submission.defining_file)
                outcomes = lanes.run(jobs, lambda session, job: self._run_job(session, job, sources, budget),
                                     key=lambda job: id(sources[job[1]]), weight=_weight,
                                     started=lambda job: started(job, phase))
                for (n, exercise, graded), (run, answers) in zip(jobs, outcomes):
                    if run is None:  # not run: `answers` says why
                        results.update({c.key: no_result(msg("not run: {why}", why=answers)) for c in graded})
                        logs[phase].append(("sandbox", msg("{exercise}: not run: {why}", exercise=exercise,
                                                           why=answers)))
                        continue
                    if run.ended not in ("ok", ""):
                        logs[phase].append((exercise, run.ended))  # a message: "the process ended early", ...
                    logs[phase] += run.log
                    results.update({c.key: answers.get(c.key) or no_result(msg("no result")) for c in graded})
            if progress:
                progress(None, 2 * len(runnable), 2 * len(runnable))
        finally:
            lanes.close()
            if hidden_answers is not None:
                hidden_answers.join()  # before any judgement; what it raised is raised here
                self._warm_reference(by_exercise, runnable, cuda, visible=False, forks=True)
        verdicts = []
        for exercise, exercise_checks in by_exercise.items():
            if exercise not in runnable:
                verdicts += [self._unrunnable(c, cuda) or Verdict(
                    c, Status.MISSING, msg("not implemented yet: no `{exercise}` is defined", exercise=exercise))
                    for c in exercise_checks if not c.twin_of]
                continue
            verdicts += with_twins([self._unrunnable(c, cuda)
                                    or judge(c, results[c.key], self.settings.limits.judge_seconds)
                                    for c in exercise_checks], self.twin_keys)
        notes += _notes(logs[VISIBLE]) + [n for s in lanes.sessions for n in s.closing_notes]
        hidden_notes = [n for n in _notes(logs[HIDDEN]) if n not in notes]
        flags = sorted({flag for f in files for flag in f.flags})
        return Grade(str(submission), verdicts, notes, visible_seconds, flags, hidden_notes)

    @staticmethod
    def _warm_reference(by_exercise, runnable, cuda, visible, forks=None):
        """The reference's answers to the visible checks (`visible`), or to the others, computed ahead of judging.
        `forks`: only the checks whose probe forks a process (True: such a probe says so, `probe.forks`), or only the
        others (False), or all (None). A process forks from its main thread only (grading._Meanwhile)."""
        from . import hidden_probes, reference

        catalog = hidden_probes.catalog()
        for ex in runnable:
            for c in by_exercise[ex]:
                if (cuda or not c.cuda) and c.expect in SHAPED and c.visible == visible and \
                        forks in (None, getattr(catalog.get(c.probe), "forks", False)):
                    reference.answer(c)

    @staticmethod
    def _unrunnable(check, cuda):
        if check.cuda and not cuda:
            # worth nothing here, whether or not the exercise exists: totals stay comparable
            return Verdict(check, Status.SKIPPED, NO_CUDA)
        return None

    def _run_job(self, session, job, sources, budget):
        """One exercise's run of one phase on a lane's session (`session()`): (the run, {check key: its result}), or
        (None, why it was not run) when the exercise or the submission has no time left."""
        _, exercise, graded = job
        seconds = budget.left(exercise)
        if seconds <= 0:
            return None, budget.why(exercise)
        begun = time.monotonic()
        run, answers = self._run(session(), sources[exercise].statements, graded, seconds)
        budget.spend(exercise, time.monotonic() - begun)
        return run, answers

    def _run(self, session, statements, checks, seconds):
        """Run checks in one child, one request at a time, each under a token drawn for this run (the child
        learns neither which check, nor which exercise visibility, nor which candidate a request stands for),
        in an order drawn for this run. (the run, {check key: its result})

        The checks that run the learner's property test with the same arguments on candidates (a verdict check, its
        twin, the main check: grader/checks/mutation.py) share one request, on every candidate any of them names: each
        candidate's verdict is the test's, on that candidate, in this child, whichever check asks, so the test runs
        once per candidate, not once per check that names it (a hidden check and the twin on every hidden candidate
        named the same 18 candidates again). Each check is then judged on its own candidates' verdicts alone."""
        from .results import collect

        ordered = list(checks)
        secrets.SystemRandom().shuffle(ordered)
        shared = _requests(ordered)  # {(probe, its other arguments) or a check's key: [checks]}, in run order
        tokens = {key: "r" + secrets.token_hex(8) for key in shared}
        calls = Calls()  # a property test's candidates are computed here, named by tokens drawn per request
        requests = []
        for key, group in shared.items():
            params = group[0].params
            if len(group) > 1:  # every candidate of the group, once
                params = {**params, "candidates": list(dict.fromkeys(n for c in group for n in c.params["candidates"]))}
            requests.append(Probe(tokens[key], group[0].probe,
                                  calls.params(tokens[key], group[0].probe, _in_run_order(params)), group[0].exercise))
        limit = self.settings.limits.result_bytes
        run = session.run(statements, requests, lambda outdir, reqs, ended: collect(outdir, reqs, ended, limit),
                          seconds, calls)
        run.results = {token: calls.restore(token, result) for token, result in run.results.items()}
        answers = {}
        for key, group in shared.items():
            result = run.results.get(tokens[key])
            everyone = {n for c in group for n in c.params.get("candidates", ())}
            for c in group:
                answers[c.key] = result if len(group) == 1 or result is None else _own_verdicts(result, c, everyone)
        return run, answers


def _weight(job):
    """Which run of a phase goes first (grader/lanes.py): a property test's (its candidates' calls are answered one by
    one, each padded: the longest run of a chapter), then the one with the most checks."""
    _, _, graded = job
    return any(c.probe in tables() for c in graded), len(graded)


def _parts(graded, count):
    """One exercise's hidden checks as the runs they take, at most `count` (the lanes): one run, unless they run the
    learner's property test in more than one request (_sharing: one per head_dim). That test's hidden run answers the
    calls of every hidden candidate one by one, each at a padded time (grader/candidates.py): the longest run of its
    chapter, longer than the others together. Its requests then get runs of their own, the heaviest first onto the
    lightest run (_load), and the lanes run them at once. A request is the same wherever it runs (the test runs once
    per candidate of it, in one child), so each verdict is too; any other check goes with the lightest run. The
    visible phase keeps one run per exercise: there the property test's run is no longer than the others together,
    and a second run would only add a child."""
    groups = [g for g in _requests(graded).values() if _sharing(g[0])]
    rest = [c for c in graded if not _sharing(c)]
    if count < 2 or len(groups) < 2:
        return [graded]
    parts = [[] for _ in range(min(count, len(groups)))]
    load = [0] * len(parts)
    for group in sorted(groups, key=_load, reverse=True):
        lightest = load.index(min(load))
        parts[lightest] += group
        load[lightest] += _load(group)
    parts[load.index(min(load))] += rest
    return parts


def _load(checks):
    """What the run of a request shared by `checks` takes, in proportion: its candidates (the test calls each) times
    its head_dim (each call's arguments, and so its padded time, grow with it)."""
    return len({n for c in checks for n in c.params["candidates"]}) * checks[0].params.get("head_dim", 1)


def _requests(checks):
    """{what they share (_sharing), or a check's own key: [checks]}: the requests the checks make of one child, in
    their order."""
    requests = OrderedDict()
    for c in checks:
        requests.setdefault(_sharing(c) or c.key, []).append(c)
    return requests


def _sharing(check):
    """What a check that runs the learner's property test on candidates shares a request with another on: its probe
    and its other arguments (head_dim); None for any other check."""
    if check.probe not in tables() or not isinstance(check.params.get("candidates"), list):
        return None
    return check.exercise, check.probe, json.dumps({k: v for k, v in check.params.items() if k != "candidates"},
                                                   sort_keys=True)


def _own_verdicts(result, check, everyone):
    """One check's part of a shared request's result: the verdicts on its own candidates ("name", "name:error"), and
    what is no candidate's (`everyone`: the group's candidates; an error of the whole test: it raised
    NotImplementedError, the child gave no result)."""
    own = set(check.params["candidates"])
    return {key: value for key, value in result.items()
            if key.partition(":")[0] in own or key.partition(":")[0] not in everyone}


def _in_run_order(params):
    """Candidates a property test is asked to judge, in an order drawn for this run (their place says nothing)."""
    if isinstance(params.get("candidates"), list):
        params = {**params, "candidates": list(params["candidates"])}
        secrets.SystemRandom().shuffle(params["candidates"])
    return params


class _Meanwhile:
    """`fn(*args)` in a thread of its own, from now until `join()`, which raises what it raised. Only the reference
    runs there (the hidden checks' answers, while their children run in the sandbox), never a probe that forks (a
    fork from a thread could inherit a lock the main thread holds): the lanes meanwhile (the main thread and threads
    of grader/lanes.py) only drive their sessions and compute the candidates' values, never a probe of the
    reference."""

    def __init__(self, fn, *args):
        from . import hidden_probes

        hidden_probes.catalog()  # loaded here first, never by two threads at once
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self.thread.start()

    def _run(self, fn, args):
        try:
            fn(*args)
        except BaseException as exc:
            self.error = exc

    def join(self):
        self.thread.join()
        if self.error is not None:
            raise self.error


class _Budget:
    """Wall-clock seconds left to one exercise (all its children and retries) and to the submission."""

    def __init__(self, limits):
        self.limits, self.used, self.total, self.shared = limits, {}, 0.0, 0.0
        self.lock = threading.Lock()  # lanes spend from threads of their own

    def left(self, exercise):
        with self.lock:
            return min(self.limits.wall_seconds - self.shared - self.used.get(exercise, 0.0),
                       self.limits.submission_seconds - self.total)

    def why(self, exercise):
        """Why `exercise` has no time left (a message)."""
        if self.limits.submission_seconds - self.total <= 0:
            return msg("the submission used up its {seconds:g} s of wall clock", seconds=self.limits.submission_seconds)
        return msg("the exercise used up its {seconds:g} s of wall clock", seconds=self.limits.wall_seconds)

    def spend(self, exercise, seconds):
        """`seconds` of one run of `exercise`: runs on lanes at once each count in full (the submission's budget is
        the sum of its runs' wall clocks, however they were spread)."""
        with self.lock:
            self.used[exercise] = self.used.get(exercise, 0.0) + seconds
            self.total += seconds

    def left_submission(self):
        return self.limits.submission_seconds - self.total

    def spend_submission(self, seconds):
        """Time spent on what every exercise rests on (reading and parsing the submission): it counts against the
        submission and against each exercise."""
        self.total += seconds
        self.shared += seconds


def _notes(log):
    """'where: what' for each distinct entry of a run log, in order, as a message: `where` a statement's label (the
    submission's file and cell) or the grader's part, `what` the grader's message or what the learner's code said."""
    seen, out = set(), []
    for where, what in log:
        if (where, what) not in seen:
            seen.add((where, what))
            out.append(messages.msg("{where}: {what}", where=messages.verbatim(where),
                                    what=what if isinstance(what, messages.Message) else messages.verbatim(what)))
    return out


def grade(submission, settings, checks=None, progress=None, student=None) -> Grade:
    """Grade one submission with a grader of its own (the zygote is the process's and is reused)."""
    return Grader(settings, checks).grade(submission, progress, student)
