"""The grader's secret and the grader's terminal, out of learner code's reach, end to end.

- The secret stored outside the repository (below /etc, where the attack found it readable in root-user,
  user-jail and user; in a temporary folder; in the home), graded with `python -m grader grade` (the trusted
  grading process holds the secret) in each mode this machine offers: tests/hostile/read_the_secret.py reads
  it by its path and through /proc/<pid>/{root,fd,environ,mem}; its bytes never reach the report.
- Mode none, which cannot keep the secret from learner code, refuses to grade, in one line naming why.
- The grader runs with a pseudo-terminal as its controlling terminal, stdin and stderr, and a line is typed
  into it: tests/hostile/read_the_terminal.py reads stdin, /dev/tty and every /dev/pts/N and tries TIOCSTI;
  the line is still there for the grader's terminal afterwards, and nothing was typed.

tests/test_sandbox_mechanisms.py proves the same rows mechanism by mechanism in all six modes.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import termios
import time

import pytest

from grader.checks import chapter_checks
from grader.grading import Grader
from grader.sandbox.errors import SandboxError
from grader.sandbox.host.client import Zygote
from grader.sandbox.host.session import Session
from tests.conftest import ROOT, settings
from tests.test_hostile import honest_source

HOSTILE = ROOT / "tests" / "hostile"
KEYS = b"posenc-typed-by-the-instructor\n"
# POSENC_SANDBOX_MODE: words of the report's note on the mode it gives a grader that is root, and one that is not
# (root-jail has none: the strongest mode)
NOTES = {"auto": ("", "ran as your own user, in a private file-system view"),
         "user": ("learner code ran as root (uid 0) without capabilities", "learner code ran as your own user")}


@pytest.fixture(scope="module")
def caps():
    return Zygote.start(settings()).ready()


def _mode_or_skip(forced, caps):
    if forced == "user" and caps["root"] and not caps["landlock"]:
        pytest.skip("POSENC_SANDBOX_MODE=user as root needs Landlock")
    if forced == "user" and not caps["root"] and not caps["landlock"]:
        pytest.skip("no Landlock: mode none, which refuses to grade (test_mode_none_refuses...)")
    if forced == "auto" and not (caps["root"] or caps["userns_jail"] or caps["landlock"]):
        pytest.skip("mode none here")


def _secret_at(place, tmp_path):
    """A fresh secret (32 random bytes, yours, 0600) below /etc, in a temporary folder, or in the home."""
    path = {"etc": f"/etc/posenc-test-secret-{os.getpid()}-{time.monotonic_ns()}",
            "tmp": str(tmp_path / "keys" / "grader-secret"),
            "home": os.path.expanduser(f"~/.posenc-test-secret-{os.getpid()}-{time.monotonic_ns()}")}[place]
    if place == "etc" and not os.access("/etc", os.W_OK):
        pytest.skip("cannot write below /etc here")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    secret = os.urandom(32)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(secret)
    return path, secret


def _grade_under_a_terminal(submission, env, keys=b""):
    """`python -m grader grade` with a pseudo-terminal as its controlling terminal (a session of its own, the
    terminal on stdin and stderr), `keys` typed into it first: (exit status, report and JSON text, what is left
    of `keys` in the terminal's input afterwards)."""
    master, slave = os.openpty()
    out = submission.parent / "grade.json"
    try:
        os.write(master, keys)
        proc = subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(submission), "--json", str(out), "--quiet"],
            cwd=ROOT, env=env, stdin=slave, stdout=subprocess.PIPE, stderr=slave, timeout=600,
            start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.set_blocking(slave, False)
        try:
            left = os.read(slave, 1000)
        except BlockingIOError:
            left = b""
    finally:
        os.close(slave)
        os.close(master)
    text = proc.stdout.decode(errors="replace") + (out.read_text() if out.exists() else "")
    return proc.returncode, text, left


def _env(forced, secret):
    env = {k: v for k, v in os.environ.items() if not k.startswith("POSENC_")}
    return {**env, "POSENC_SANDBOX_MODE": forced, "POSENC_GRADER_SECRET": secret, "OMP_NUM_THREADS": "1"}


def _submission(tmp_path, attack, subs):
    source = (HOSTILE / f"{attack}.py").read_text()
    for key, value in subs.items():
        source = source.replace(key, value)
    path = tmp_path / "submission.py"
    path.write_text(honest_source() + "\n\n" + source)
    return path


def _shift_matrix_feedback(text):
    data = json.loads(text[text.index("{\n"):]) if "{\n" in text else {}
    return [t.get("output", "") for t in data.get("tests", []) if "shift_matrix" in t.get("name", "")]


@pytest.mark.parametrize("forced, place", [("auto", "etc"), ("auto", "tmp"), ("user", "etc"), ("user", "home")])
def test_learner_code_never_reads_the_secret_stored_outside_the_repository(forced, place, tmp_path, caps):
    _mode_or_skip(forced, caps)
    secret_file, secret = _secret_at(place, tmp_path)
    try:
        submission = _submission(tmp_path, "read_the_secret", {"__SECRETS__": secret_file, "__GRADER__": "1"})
        code, text, _ = _grade_under_a_terminal(submission, _env(forced, secret_file))
    finally:
        os.unlink(secret_file)
    assert code == 0, text[-2000:]
    assert NOTES[forced][0 if caps["root"] else 1] in text, text[-2000:]  # the mode it ran in
    feedback = _shift_matrix_feedback(text)
    assert any("BLOCKED" in f for f in feedback), feedback
    assert "LEAKED" not in text and secret.hex() not in text


@pytest.mark.parametrize("forced", ["auto", "user"])
def test_learner_code_never_reads_or_types_into_the_grader_s_terminal(forced, tmp_path, caps):
    _mode_or_skip(forced, caps)
    submission = _submission(tmp_path, "read_the_terminal", {"__TTY__": "/dev/tty"})
    code, text, left = _grade_under_a_terminal(submission, _env(forced, str(tmp_path / "secret")), KEYS)
    assert code == 0, text[-2000:]
    feedback = _shift_matrix_feedback(text)
    assert any("BLOCKED" in f for f in feedback), feedback
    assert "LEAKED" not in text and KEYS.strip().decode() not in text
    assert left == KEYS  # still waiting for the grader's terminal to read it, and nothing typed after it


class _NoneHere:
    """The real zygote, on a machine that offers mode none: not root, no user namespaces, no Landlock."""

    def __init__(self, real):
        self.real = real

    def ready(self):
        return {**self.real.ready(), "root": False, "jail": False, "userns_jail": False, "pidns": False,
                "landlock": 0}

    def session(self, settings_, shared=None):
        return Session(self, settings_, shared=shared)

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_mode_none_refuses_to_grade_with_a_secret_and_says_why(tmp_path):
    secret_file, _ = _secret_at("tmp", tmp_path)
    chosen = settings().replace(secret_file=secret_file)
    grader = Grader(chosen, chapter_checks("ch01"), zygote=_NoneHere(Zygote.start(chosen)))
    submission = tmp_path / "submission.py"
    submission.write_text(honest_source())
    with pytest.raises(SandboxError) as refused:
        grader.grade(submission)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("sandbox mode none cannot keep learner code from reading "
                                                      f"the grader's secret {secret_file}"), message
