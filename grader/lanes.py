"""A phase's exercises run on lanes: each lane a session of the submission's own (one session server, one user id),
each running one child at a time, the lanes at once (grading.py).

    lanes = Lanes(open_session, settings.lanes_here())          # sessions opened as they are needed
    outcomes = lanes.run(jobs, work)                             # [work(session, job)] in the jobs' order:
                                                                 # session() opens the lane's session, or gives it
    lanes.close()                                                # every session, and its notes

A run of an exercise is mostly the kernel's work of starting and ending a confined process (fork, cgroup, namespaces,
exit) and, in a property test, time the grader pads its answers to: on two cores a second lane takes a third of a
chapter's runs off the wall clock (README, "Measurements"). What the lanes share, so that a grade does not depend
on how the runs were spread (host/session.py's `Shared`): the statements a child's death or the alarm had a run skip,
and the submission's allowance of result bytes.

Which run goes first: a run of statements that no run of this submission has finished yet goes alone, while another
run of the same statements is under way, waits for it (in one lane after the other, a run learns from the runs before
it which statements end the process or outlast their alarm, and skips them: so it does here too); that first run is
the lightest job of those statements, so the others wait as little as can be. Then the heaviest job first (`weight`:
a property test answers its candidates' calls one by one, each padded), so that the longest run does not start
last.
"""

from __future__ import annotations

import threading


class Lanes:
    """Up to `count` sessions of one submission, opened by `open_session()` as lanes need them, kept for both phases."""

    def __init__(self, open_session, count):
        self.open_session, self.count = open_session, max(1, int(count))
        self.opened = {}  # {lane: its session}, opened when a run of that lane first needs one
        self.opening = threading.Lock()  # one at a time: each asks the zygote
        self.settled = set()  # keys of statements a run of this submission has finished

    @property
    def sessions(self):
        return list(self.opened.values())

    def _session(self, lane):
        with self.opening:
            if lane not in self.opened:
                self.opened[lane] = self.open_session()
            return self.opened[lane]

    def run(self, jobs, work, key=lambda job: None, weight=lambda job: 0, started=lambda job: None):
        """[work(session, job)] for `jobs`, in their order, each job on one lane; `session()` gives the lane's session
        (opened the first time). `key(job)`: its statements (jobs of equal keys run the same statements);
        `weight(job)`: the heavier first; `started(job)` when a lane takes it (from the lane's thread, one at a
        time). What a `work` raised is raised here, once every lane has stopped (no lane takes a job after it)."""
        if not jobs:
            return []
        order = sorted(range(len(jobs)), key=lambda n: weight(jobs[n]), reverse=True)  # equal weights: in order
        state = _State(order, self.settled, weight)
        threads = [threading.Thread(target=self._lane, args=(lane, jobs, work, key, started, state), daemon=True)
                   for lane in range(1, min(self.count, len(jobs)))]
        for thread in threads:
            thread.start()
        self._lane(0, jobs, work, key, started, state)
        for thread in threads:
            thread.join()
        if state.error is not None:
            raise state.error
        return [state.out[n] for n in range(len(jobs))]

    def _lane(self, lane, jobs, work, key, started, state):
        while True:
            with state.changed:
                n = state.take(jobs, key)
                while n is False:  # every job left waits for statements under way in another lane
                    state.changed.wait()
                    n = state.take(jobs, key)
                if n is None:
                    return
            try:
                with state.changed:  # one lane at a time
                    started(jobs[n])
                out = work(lambda: self._session(lane), jobs[n])
            except BaseException as exc:  # the grader's failure, or an interrupt: no lane takes another job
                out = None
                with state.changed:
                    state.error = state.error or exc
                    state.order.clear()
            with state.changed:
                state.out[n] = out
                k = key(jobs[n])
                self.settled.add(k)
                state.busy.discard(k)
                state.changed.notify_all()

    def close(self):
        """Close every session (its closing notes stay on it)."""
        for session in self.sessions:
            session.close()


class _State:
    """One `run`: the jobs not taken yet (in the order taken), the keys of statements under way and not yet finished
    by any run, each job's outcome, the first error."""

    def __init__(self, order, settled, weight):
        self.order, self.settled, self.weight = list(order), settled, weight
        self.busy, self.out, self.error = set(), {}, None
        self.changed = threading.Condition()

    def take(self, jobs, key):
        """The index of the next job this lane may run (removed from the order), None when none is left, False
        when every job left must wait for a run under way."""
        if not self.order:
            return None
        for i, n in enumerate(self.order):
            k = key(jobs[n])
            if k in self.settled:
                return self.order.pop(i)
            if k not in self.busy:  # the first run of these statements: the lightest job of them (the first of equals)
                same = [j for j, m in enumerate(self.order) if key(jobs[m]) == k]
                lightest = min(self.weight(jobs[self.order[j]]) for j in same)
                self.busy.add(k)
                return self.order.pop(next(j for j in same if self.weight(jobs[self.order[j]]) == lightest))
        return False
