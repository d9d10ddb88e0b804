"""As root, a session's PID namespace (grader/sandbox/confine/jail.py, PidNamespace): the runs of one submission live
in one namespace of its own, each as a pid other than 1, below an init named posenc-init, and see nothing else in
/proc; another submission's session has another namespace. (The grader's kill of a run that ran out of time, which
takes the init with it, and the fresh namespace of the run after it: test_hostile.py's fork bomb.)"""

from __future__ import annotations

import json

import pytest

from grader.records import Statement
from grader.results import collect
from grader.sandbox.host.client import Zygote
from grader.sandbox.wire import Probe
from grader.settings import Settings

PROBE = [Probe("p0", "call", {"args": []}, "sinusoidal_table")]
# learner code that reports where it runs, as the message of an exception (the one channel it has)
REPORT = r'''
import json, os

def sinusoidal_table():
    with open("/proc/1/comm") as f:
        init = f.read().strip()
    raise ValueError(json.dumps({"pid": os.getpid(), "ns": os.readlink("/proc/self/ns/pid"), "init": init,
                                 "proc": sorted(int(n) for n in os.listdir("/proc") if n.isdigit())}))
'''


def _seen(session):
    run = session.run([Statement("cell 1", REPORT)], PROBE, lambda out, requests, ended: collect(out, requests, ended,
                                                                                                 1 << 20))
    assert run.ended == "ok", run.ended
    return json.loads(run.results["p0"]["error"].split(": ", 1)[1])


def test_the_runs_of_a_session_share_its_namespace_below_its_init_and_another_session_has_its_own():
    settings = Settings.from_env(limits={"wall_seconds": 20})
    zygote = Zygote.start(settings)
    with zygote.session(settings) as session:
        if session.mode != "root-jail" or not session.caps["pidns"]:
            pytest.skip(f"no PID namespace made by the session here (mode {session.mode})")
        first, second = _seen(session), _seen(session)
    with zygote.session(settings) as session:
        other = _seen(session)
    for seen in (first, second, other):
        assert seen["pid"] != 1 and seen["init"] == "posenc-init", seen
        assert seen["proc"] == [1, seen["pid"]], seen  # nothing of the machine, nor of an earlier run
    assert first["ns"] == second["ns"] and first["pid"] != second["pid"]
    assert other["ns"] != first["ns"]
