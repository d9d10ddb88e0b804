"""grader/progress.py: the time left is never shown as 0 while work remains (issue 28: "~0:00:00 left" 12 s early)."""

from __future__ import annotations

import io

from grader import progress


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def bar(monkeypatch, total):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    stream = io.StringIO()
    return progress.Progress("grading", total, stream, every=0.0), clock, stream


def test_a_time_left_under_a_second_is_rounded_up(monkeypatch):
    p, clock, stream = bar(monkeypatch, 3)
    for _ in range(2):
        clock.now += 0.6  # two steps of 0.6 s: one left, about 0.6 s
        p.step()
    assert stream.getvalue().splitlines()[-1].endswith("2/3  0:00:01 elapsed, ~0:00:01 left")


def test_once_the_step_runs_past_the_estimate_no_time_left_is_claimed(monkeypatch):
    p, clock, stream = bar(monkeypatch, 3)
    for _ in range(2):
        clock.now += 2.0
        p.step()
    clock.now += 12.0  # the last step takes far longer than the others
    p.show()
    last = stream.getvalue().splitlines()[-1]
    assert "2/3" in last and "left" not in last and "0:00:16 elapsed" in last
    clock.now += 1.0
    p.step()
    assert stream.getvalue().splitlines()[-1].endswith("3/3  0:00:17 elapsed")  # done: no estimate
