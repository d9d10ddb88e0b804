"""The grader's in-process judging and its sandboxed grading, for the self-check tests."""

from __future__ import annotations

import os
import time

PRACTITIONER = "# practitioner-style:"  # the comment that marks an example written as libraries write it


def defined(folder, marked=None):
    """Names defined at the top of the files of `folder` (a submission's exercises; with `marked`: only those whose
    definition has a comment line starting with it right above). An example or a practitioner-style submission
    may lack an exercise (docs/authoring.md: three files make an exercise): the tests grade what it defines."""
    import ast
    from pathlib import Path

    names = set()
    for path in sorted(Path(folder).glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if marked is None or (first > 1 and lines[first - 2].strip().startswith(marked)):
                    names.add(node.name)
    return names


def drawn(check, student="tests"):
    """A main check or twin with its inputs drawn (grader/unseen.py) from the tests' secret for `student`; any
    other check as it is."""
    import os

    from grader import shipped, unseen

    if not check.unseen:
        return check
    secret = unseen.load_secret(os.environ["POSENC_GRADER_SECRET"])
    return unseen.resolve(check, unseen.identity(secret, "course", student), shipped.inputs())


def judge_in_process(ns, check):
    """The grader's verdict on `check` for the definitions in `ns`, probed in this process (trusted test data);
    a main check on inputs drawn as for a submission."""
    from grader import hidden_probes
    from grader.grading import judge
    from posenc_selfcheck import probes

    check = drawn(check)
    return judge(check, probes.run(ns, check.probe, check.params, check.exercise, hidden_probes.catalog()))


def mistake_answers(check):
    """((message, answer), ...) of the known mistakes `check` recognises, computed from the reference."""
    from grader.reference import mistakes

    return mistakes(check)


def boot_ticks():
    """Now, in the clock ticks after boot that /proc/PID/stat's start times count (procs.started)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


class SeenSession:
    """A session that records `closing`, boot_ticks() when its close began: once closed, its uid is free and
    another grader on the machine (another test worker) may take it at once, even while this grader still
    judges; a process of that uid is this session's only when it started before `closing`."""

    def __init__(self, session):
        self.session, self.closing = session, None

    def close(self):
        self.closing = boot_ticks()
        self.session.close()

    def __getattr__(self, name):
        return getattr(self.session, name)


class SessionsSeen:
    """A zygote that keeps the sessions it opens (how a test finds a graded submission's uid and folder)."""

    def __init__(self, zygote):
        self.zygote, self.sessions = zygote, []

    def session(self, settings, shared=None):
        self.sessions.append(SeenSession(self.zygote.session(settings, shared)))
        return self.sessions[-1]

    def __getattr__(self, name):
        return getattr(self.zygote, name)


def grade_in_sandbox(submission, checks):
    """[(check, status, feedback)] of one submission graded by the real grading path (sandbox included)."""
    from tests.conftest import grade

    return [(v.check, v.status, str(v.feedback)) for v in grade(submission, checks).verdicts]
