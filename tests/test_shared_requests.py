"""The checks that run a learner's property test with the same arguments share one request in a child
(grader/grading.py, Grader._run): the test runs once per candidate, and each check is judged on its own
candidates' verdicts only, as it was when it had a request of its own."""

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
