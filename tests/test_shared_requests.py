"""The checks that run a learner's property test with the same arguments share one request in a child
(grader/grading.py, Grader._run): the test runs once per candidate, and each check is judged on its own
candidates' verdicts only, as it was when it had a request of its own."""

import json

from grader.checks import chapter_checks
from grader.grading import _own_verdicts, _sharing
from grader.records import messages, no_result

CH04, CH08 = chapter_checks("ch04"), chapter_checks("ch08")


def _verdict_checks(checks):
    return [c for c in checks if isinstance(c.params.get("candidates"), list)]


def test_only_property_tests_with_the_same_arguments_share_a_request():
    for checks in (CH04, CH08):
        verdicts = _verdict_checks(checks)
        assert len(verdicts) > 3
        head_dims = {c.params["head_dim"] for c in verdicts}
        # one request per head_dim: the candidates differ, the other arguments do not
        assert len({_sharing(c) for c in verdicts}) == len(head_dims) > 1
        for c in verdicts:
            others = [d for d in verdicts if _sharing(d) == _sharing(c)]
            assert all(d.params["head_dim"] == c.params["head_dim"] for d in others)
        assert all(_sharing(c) is None for c in checks if c not in verdicts)


def test_each_check_gets_its_own_candidates_verdicts_and_nothing_else():
    group = [c for c in _verdict_checks(CH04) if c.params["head_dim"] == 64]
    everyone = [n for c in group for n in c.params["candidates"]]
    # the shared request's result: a verdict for each candidate, an error for one of them
    result = {name: i % 2 == 0 for i, name in enumerate(dict.fromkeys(everyone))}
    failing = group[0].params["candidates"][0]
    del result[failing]
    result[f"{failing}:error"] = "ValueError: no"
    for check in group:
        own = _own_verdicts(result, check, set(everyone))
        names = set(check.params["candidates"])
        assert {key.partition(":")[0] for key in own} == names
        assert all(own[key] == result[key] for key in own)
        assert (f"{failing}:error" in own) == (failing in names)


def test_an_error_of_the_whole_test_reaches_every_check_that_shares_it():
    group = [c for c in _verdict_checks(CH08) if c.params["head_dim"] == group_head_dim()]
    assert len(group) > 1
    for result in ({"error": "not implemented yet", "error_type": "NotImplementedError", "unfinished": "cell 3"},
                   no_result(messages.msg("no result"))):
        for check in group:
            assert _own_verdicts(result, check, {n for c in group for n in c.params["candidates"]}) == result


def group_head_dim():
    return _verdict_checks(CH08)[0].params["head_dim"]


# ---- a property test's hidden requests on the lanes (grading._parts) ----------------------------------------------
def _hidden(checks, student="s"):
    """The hidden checks of a chapter's property test as one grade has them: twins added, draws made for `student`."""
    from grader import twins, unseen

    exercise = _verdict_checks(checks)[0].exercise
    ident = unseen.identity(b"a test secret", "course", student)
    with_twins, _ = twins.with_twins(checks)
    return [unseen.resolve(c, ident) if c.unseen else c for c in with_twins
            if c.exercise == exercise and not c.visible]


def test_a_property_tests_hidden_requests_go_to_runs_of_their_own_each_whole():
    from grader.grading import _parts

    for checks in (CH04, CH08):
        for student in ("s", "t", "u"):  # the main check's head_dim is drawn per student
            hidden = _hidden(checks, student)
            keys = [_sharing(c) for c in hidden]
            assert None not in keys and len(set(keys)) >= 2
            assert _parts(hidden, 1) == [hidden]  # one lane: one run, as before
            parts = _parts(hidden, 2)
            assert len(parts) == 2 and all(parts)
            # every check in exactly one run, and the checks that share a request always in the same one
            assert sorted(c.key for p in parts for c in p) == sorted(c.key for c in hidden)
            assert not {_sharing(c) for c in parts[0]} & {_sharing(c) for c in parts[1]}
            # the heaviest request (candidates called, times the size of each call) has a run to itself
            load = {k: len({n for c, kc in zip(hidden, keys) if kc == k for n in c.params["candidates"]})
                    * json.loads(k[2])["head_dim"] for k in set(keys)}
            assert any({_sharing(c) for c in p} == {max(load, key=load.get)} for p in parts)


def test_checks_of_one_request_and_other_exercises_stay_in_one_run():
    from grader.grading import _parts

    hidden = _hidden(CH04)
    one = [c for c in hidden if _sharing(c) == _sharing(hidden[0])]
    assert _parts(one, 2) == [one]
    other = [c for c in CH04 if _sharing(c) is None and not c.visible]
    assert other and _parts(other, 2) == [other]


def test_the_hidden_requests_run_on_two_lanes_at_once_and_the_visible_ones_in_one_run():
    """A grade of chapter 4's solution with a stand-in for the sandbox that records each run's requests (no child
    runs: every check gets no result). With two lanes, the property test's hidden requests go to two runs, one per
    head_dim, taken by the two lanes at once; with one lane, to one run; its visible requests to one run either way."""
    import threading
    from types import SimpleNamespace

    from grader import grading
    from grader.settings import Settings
    from tests.conftest import ROOT

    exercise = _verdict_checks(CH04)[0].exercise

    def runs_of(lanes):
        runs, changed, inside = [], threading.Condition(), [0, 0]  # [property runs under way, most at once]

        class Session:
            closing_notes = []

            def run(self, statements, requests, read, seconds=None, calls=None):
                mine = [r for r in requests if r.exercise == exercise]
                with changed:
                    runs.append(mine)
                    if mine:
                        inside[0] += 1
                        inside[1] = max(inside)
                        changed.notify_all()
                        if sum(map(bool, runs)) > 1:  # a hidden run lasts until every lane has one (at most 10 s)
                            changed.wait_for(lambda: inside[1] >= lanes, timeout=10.0)
                        inside[0] -= 1
                return SimpleNamespace(results={}, log=[], ended="ok")

            def close(self):
                pass

        class Recorder:
            def session(self, settings, shared=None):
                return Session()

        said = []
        grading.Grader(Settings(lanes=lanes), CH04, zygote=Recorder()).grade(
            str(ROOT / "solutions" / "04_rope.ipynb"), progress=lambda *a: said.append(a), student="s")
        exercises = {c.exercise for c in CH04}
        # the progress still counts each exercise once in each phase
        assert [done for _, done, _ in said] == list(range(2 * len(exercises) + 1))
        return [r for r in runs if r], inside[1]

    one, _ = runs_of(1)
    two, at_once = runs_of(2)
    assert len(one) == 2 and len(two) == 3  # visible, then hidden: one run, or two
    assert [r.probe for r in one[0]] and sorted(r.probe for r in one[0]) == sorted(r.probe for r in two[0])
    head_dims = [{r.params["head_dim"] for r in run} for run in two[1:]]
    assert {64} <= head_dims[0] | head_dims[1] and {16} <= head_dims[0] | head_dims[1]
    assert not (head_dims[0] & head_dims[1])
    assert len(two[1]) + len(two[2]) == len(one[1])  # the same requests, spread
    assert at_once == 2
