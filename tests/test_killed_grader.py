"""A grader killed in the middle of a run leaves no learner code running: the session server watches its socket
while the child runs (grader/sandbox/runtime/session_server.py), ends the child when the grader hangs up, cleans up
and ends. Before, a run blocked in a long call outlived a killed `grader grade` until the call returned (24 s of a
25-second sleep, measured), unsupervised: the grader that enforces the wall clock was gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from grader.sandbox import procs
from tests.conftest import ROOT

SLEEP = 120  # seconds in the learner's call: far longer than the bound below, far shorter than the suite's patience

# ch01's sinusoidal_table, blocked in its first call
SLOW = f"""import time

import torch


def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    time.sleep({SLEEP})
    return torch.zeros(seq_len, d_model)
"""


def _until(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_a_grader_killed_mid_run_leaves_no_learner_code_running(tmp_path):
    submission = tmp_path / "slow.py"
    submission.write_text(SLOW)
    progress = tmp_path / "progress.txt"
    with open(progress, "w") as err:
        grader = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(submission), "--assignment", "ch01",
                                   "--wall-seconds", str(2 * SLEEP)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=err)
    try:
        # the progress line names the exercise once its run has started; a second later its first call is asleep
        assert _until(lambda: "sinusoidal_table" in progress.read_text(), 120), progress.read_text()
        time.sleep(1.0)
        # the zygote, the grading process, the session server, the child, ...
        below = procs.stamped(procs.descendants(grader.pid))
        assert len(below) >= 3, progress.read_text()
    finally:
        os.kill(grader.pid, signal.SIGKILL)  # no chance to clean up: what is below must end of itself
        grader.wait()
    # a generous bound for a loaded machine (it takes about 0.1 s on an idle one), far below the call's sleep
    assert not procs.gone_within(below, 30)
