"""grader/lanes.py: a phase's exercises on several sessions at once, and what those sessions share
(grader/sandbox/host/session.py's Shared). The grades themselves: test_snapshot.py grades every bundled and test
submission with the default lanes (two on a machine with two cores) against the record made one run at a time, and
test_hostile.py's statements that end their process or outlast their alarm are skipped across lanes."""

import os
import threading
import time
from types import SimpleNamespace

import pytest

from grader.lanes import Lanes
from grader.sandbox.host.session import Session, Shared
from grader.settings import LANES_AUTO, Settings

WAIT = 10.0  # seconds a test waits for another lane before it fails


class FakeSession:
    def __init__(self, n):
        self.n, self.closed, self.closing_notes = n, False, []

    def close(self):
        self.closed = True


def opener():
    opened = []

    def open_session():
        opened.append(FakeSession(len(opened)))
        return opened[-1]

    return opened, open_session


def test_outcomes_come_in_the_jobs_order_each_job_run_once_on_at_most_count_sessions():
    opened, open_session = opener()
    lanes = Lanes(open_session, 2)
    ran = []

    def work(session, job):
        ran.append(job)
        time.sleep(0.01)
        return job * 10, session().n

    out = lanes.run(list(range(7)), work, key=lambda job: job)
    assert [o for o, _ in out] == [j * 10 for j in range(7)]
    assert sorted(ran) == list(range(7))
    assert len(opened) == 2 and {n for _, n in out} == {0, 1} and len(lanes.sessions) == 2
    lanes.run([7], work, key=lambda job: job)  # the sessions stay for the next phase
    assert len(opened) == 2
    lanes.close()
    assert all(s.closed for s in opened)


def test_one_lane_runs_the_heaviest_job_first_and_equal_weights_in_their_order():
    _, open_session = opener()
    ran = []
    Lanes(open_session, 1).run(["a", "b", "heavy", "c"], lambda s, job: ran.append(job), key=lambda job: job,
                               weight=lambda job: job == "heavy")
    assert ran == ["heavy", "a", "b", "c"]


def test_the_first_run_of_statements_is_their_lightest_job_then_the_heaviest_go_first():
    """The run that settles a submission's statements goes alone: the lightest, so the others wait least."""
    _, open_session = opener()
    ran = []
    weights = {"heavy": 2, "a": 1, "b": 0, "c": 0}
    Lanes(open_session, 1).run(["heavy", "a", "b", "c"], lambda s, job: ran.append(job), key=lambda job: "notebook",
                               weight=weights.get)
    assert ran == ["b", "heavy", "a", "c"]


def test_jobs_of_other_statements_run_at_once():
    _, open_session = opener()
    both = threading.Barrier(2, timeout=WAIT)  # broken (an error) unless two works are under way together
    Lanes(open_session, 2).run(["x", "y"], lambda s, job: both.wait(), key=lambda job: job)


def test_a_run_of_statements_no_run_has_finished_goes_alone_then_the_others_run_at_once():
    """The first run of a submission's statements learns which of them end the process or outlast their alarm; a
    run of the same statements waits for it, as it would one lane after the other. Then they overlap."""
    _, open_session = opener()
    lanes, log, lock = Lanes(open_session, 2), [], threading.Lock()

    def work(session, job):
        with lock:
            log.append(("start", job))
        time.sleep(0.05)
        with lock:
            log.append(("end", job))

    lanes.run(["first", "second"], work, key=lambda job: "notebook")
    assert log == [("start", "first"), ("end", "first"), ("start", "second"), ("end", "second")]
    both = threading.Barrier(2, timeout=WAIT)
    lanes.run(["third", "fourth"], lambda s, job: both.wait(), key=lambda job: "notebook")  # settled: together


def test_while_statements_are_under_way_a_lane_takes_a_job_of_other_statements():
    _, open_session = opener()
    first_running, order = threading.Event(), []

    def work(session, job):
        order.append(job)
        if job == "a1":
            first_running.set()
            assert other_done.wait(WAIT)
        elif job == "b":
            assert first_running.wait(WAIT)
            other_done.set()

    other_done = threading.Event()
    Lanes(open_session, 2).run(["a1", "a2", "b"], work, key=lambda job: job[0])
    assert order.index("b") < order.index("a2")


def test_what_a_run_raised_is_raised_once_every_lane_has_stopped_and_no_job_starts_after_it():
    _, open_session = opener()
    ran = []

    def work(session, job):
        ran.append(job)
        if job == 0:
            raise RuntimeError("the grader is broken")
        time.sleep(0.02)

    with pytest.raises(RuntimeError, match="the grader is broken"):
        Lanes(open_session, 1).run(list(range(5)), work)
    assert ran == [0]


@pytest.mark.parametrize("failing", ["work", "started"])
def test_a_failure_in_another_lanes_thread_leaves_no_lane_waiting(failing):
    """A job whose statements are under way in a lane that fails: the lanes waiting for them stop too."""
    _, open_session = opener()

    def work(session, job):
        if failing == "work" and job == "first":
            raise OSError("the channel is gone")
        time.sleep(0.01)

    def started(job):
        if failing == "started" and job == "first":
            raise OSError("the channel is gone")

    lanes = Lanes(open_session, 2)
    done = []
    runner = threading.Thread(target=lambda: done.append(_raised(lambda: lanes.run(
        ["first", "second", "third"], work, key=lambda job: "notebook", started=started))), daemon=True)
    runner.start()
    runner.join(WAIT)
    assert done and isinstance(done[0], OSError)


def _raised(fn):
    try:
        fn()
    except BaseException as exc:
        return exc
    return None


def test_started_is_told_of_each_job_as_a_lane_takes_it():
    _, open_session = opener()
    seen = []
    Lanes(open_session, 2).run(list(range(4)), lambda s, job: None, key=lambda job: job, started=seen.append)
    assert sorted(seen) == list(range(4))


def _session_with(shared, tmp_path, name, size):
    """A bare Session (only what `_within_results_cap` reads) holding one child's results of `size` bytes."""
    session = Session.__new__(Session)
    session.limits, session.shared = SimpleNamespace(submission_result_bytes=shared.results_left), shared
    outdir = tmp_path / name
    outdir.mkdir()
    (outdir / "r.json").write_bytes(b"x" * size)
    return session, SimpleNamespace(outdir=outdir, run=SimpleNamespace(log=[]))


def test_the_submissions_result_allowance_holds_across_its_sessions(tmp_path):
    """Two lanes' children each within the allowance, together over it: the second one's results are not read."""
    shared = Shared(1000)
    first, tried_first = _session_with(shared, tmp_path, "a", 600)
    second, tried_second = _session_with(shared, tmp_path, "b", 600)
    first._within_results_cap(tried_first)
    assert os.listdir(tried_first.outdir) == ["r.json"] and shared.results_left == 400
    second._within_results_cap(tried_second)
    assert os.listdir(tried_second.outdir) == [] and shared.results_left == 400
    assert "results were not read" in tried_second.run.log[0][1].id


def test_lanes_setting(monkeypatch):
    import grader.settings as settings_module

    monkeypatch.setattr(settings_module, "default_jobs", lambda: 2)
    assert Settings().lanes_here() == min(LANES_AUTO, 2)
    assert Settings().lanes_here(jobs=2) == 1  # batch: the cores shared among its workers
    monkeypatch.setattr(settings_module, "default_jobs", lambda: 16)
    assert Settings().lanes_here() == LANES_AUTO
    assert Settings(lanes=3).lanes_here(jobs=8) == 3
    assert Settings.from_env({"POSENC_SANDBOX_LANES": "1"}).lanes == 1
    with pytest.raises(ValueError):
        Settings(lanes=-1)


def test_lanes_option_reaches_the_settings():
    from grader.cli import _settings, parser

    args = parser().parse_args(["grade", "examples/complete", "--lanes", "1"])
    assert _settings(args).lanes == 1
    with pytest.raises(SystemExit):
        parser().parse_args(["grade", "examples/complete", "--lanes", "-1"])


def test_a_lane_opens_its_session_only_when_a_run_needs_one():
    opened, open_session = opener()
    lanes = Lanes(open_session, 2)
    lanes.run(["not run", "not run either"], lambda session, job: None)
    assert opened == [] and lanes.sessions == []


def test_a_gradescope_container_runs_one_child_of_a_submission_at_a_time(tmp_path, monkeypatch):
    """Its memory is sized for one (GRADESCOPE_CONTAINER_MB), and a container's CPU quota need not show in the cores
    its processes may use."""
    import grader.remote
    from grader import gradescope

    seen = []

    class Stop(Exception):
        pass

    def remote_grader(settings, checks=None):
        seen.append(settings)
        raise Stop()

    monkeypatch.setattr(grader.remote, "RemoteGrader", remote_grader)
    monkeypatch.setenv("POSENC_SANDBOX_LANES", "2")
    for name in ("source", "submission", "results"):
        (tmp_path / name).mkdir()
    gradescope.results_payload(tmp_path)
    assert [s.lanes for s in seen] == [1]


def test_progress_counts_the_exercises_taken_in_each_phase_in_the_order_the_lanes_took_them(monkeypatch):
    """The lanes take the heaviest first, so an exercise's place in the course is not its place in time: the count
    said with each exercise rises by one, in the visible phase and then in the hidden one."""
    from grader import grading
    from grader.checks import all_checks
    from tests.conftest import ROOT

    class NoZygote:
        def session(self, settings, shared=None):
            raise AssertionError("no exercise has time left to run")

    monkeypatch.setattr(grading._Budget, "left", lambda self, exercise: 0.0)
    checks = [c for c in all_checks() if c.exercise in ("sinusoidal_table", "shift_matrix",
                                                       "SinusoidalPositionalEncoding")]
    said = []
    grading.Grader(Settings(lanes=2), checks, zygote=NoZygote()).grade(
        str(ROOT / "solutions" / "01_sinusoidal.ipynb"), progress=lambda *a: said.append(a), student="t")
    assert [done for _, done, _ in said] == list(range(7)) and {total for _, _, total in said} == {6}
    assert said[-1][0] is None and sorted(e for e, _, _ in said[:3]) == sorted(e for e, _, _ in said[3:6])
