"""A property test's candidates stay out of the learner's process (grader/candidates.py,
grader/sandbox/runtime/candidate_calls.py): the test gets opaque callables computed in the grading process, so
nothing of a candidate but its value reaches learner code: no code, closure, name or attribute, no hidden module, no
time of its own; a call the grader must refuse costs only its check; and visible output never names a hidden candidate.

The attack files live in tests/hostile/ (fingerprint_candidates.py, scan_for_candidates.py, malformed_calls.py).
"""

from __future__ import annotations

import gc
import statistics
import time

import pytest
import torch

from grader.checks import chapter_checks
from grader.grading import Grader
from grader.report import gradescope_json
from tests.conftest import ROOT, settings
from tests.test_hostile import HOSTILE, honest_source

LIMITS = dict(wall_seconds=60, stmt_seconds=5)
CHAPTERS = {"ch04": ("check_relative_property", "relative_property", ROOT / "solutions" / "04_rope.ipynb"),
            "ch08": ("check_axial_property", "axial_property", ROOT / "solutions" / "08_positions_in_2d.ipynb")}


def _code_print(code):
    """What tests/hostile's attacks compute of a function's code: its names and numbers (renaming and
    docstrings change neither)."""
    parts = [code.co_names]
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            parts.append(_code_print(const))
        elif isinstance(const, (int, float)):  # bools too: rows_first=False
            parts.append(const)
    return repr(parts)


def _candidates(probe):
    """{name: function} of every candidate, public and hidden, as the grader holds them."""
    from grader import hidden_probes

    return hidden_probes.catalog()[probe].keywords["table"]


def _correct(chapter):
    from grader.checks import ch04, ch08

    module = {"ch04": ch04, "ch08": ch08}[chapter]
    return {module.GOOD, *module.PUBLIC_ACCEPT, *module.ACCEPT}


def _hidden(chapter):
    from grader.checks import ch04, ch08

    module = {"ch04": ch04, "ch08": ch08}[chapter]
    return {**module.ACCEPT, **module.REJECT}


def fingerprint_table():
    """{fingerprint of a candidate's code: its verdict} for every candidate of both chapters, as an attacker
    builds it from a dump of their code (only fingerprints whose candidates all have the same verdict)."""
    prints = {}
    for chapter, (_, probe, _) in CHAPTERS.items():
        for name, fn in _candidates(probe).items():
            prints.setdefault(_code_print(fn.__code__), set()).add(name in _correct(chapter))
    return {p: verdicts.pop() for p, verdicts in prints.items() if len(verdicts) == 1}


def _property_checks(chapter):
    exercise = CHAPTERS[chapter][0]
    return [c for c in chapter_checks(chapter) if c.exercise == exercise]


# ---- the attacks, graded ---------------------------------------------------------------------------------
@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_recognising_candidates_by_what_they_are_earns_nothing_and_a_real_test_earns_everything(chapter, tmp_path):
    table = fingerprint_table()
    assert len(table) >= 40  # the attack's table tells the candidates apart: against their code it would score
    path = tmp_path / "fingerprint.py"
    path.write_text((HOSTILE / "fingerprint_candidates.py").read_text().replace("__TABLE__", repr(table)))
    checks = _property_checks(chapter)
    grader = Grader(settings(**LIMITS), checks)
    grade = grader.grade(path)
    assert grade.total == 0, [(v.check.key, str(v.feedback)) for v in grade.verdicts if v.score]
    # without the main check (which gates the rest), the hidden checks still earn nothing on their own
    ungated = Grader(settings(**LIMITS), [c for c in checks if not c.main]).grade(path)
    hidden = [v for v in ungated.verdicts if not v.check.visible]
    assert hidden and all(v.score == 0 for v in hidden), [(v.check.key, str(v.feedback)) for v in hidden if v.score]
    # visible output (Gradescope's, before the due date) names and describes no hidden candidate
    payload = gradescope_json(grade)
    visible = "\n".join([payload["output"]] + [t["output"] for t in payload["tests"] if t["visibility"] == "visible"])
    for name, about in _hidden(chapter).items():
        assert name not in visible and about not in visible, name
    # a real property test (the solution's) earns every point of the same checks, by the same path
    solution = grader.grade(CHAPTERS[chapter][2])
    property_verdicts = [v for v in solution.verdicts if v.check.exercise == CHAPTERS[chapter][0]]
    assert property_verdicts and all(v.score == v.max_score for v in property_verdicts), \
        [(v.check.key, str(v.feedback)) for v in property_verdicts if v.score < v.max_score]


def test_no_hidden_candidate_is_anywhere_in_the_learners_process(tmp_path):
    # (not the identities, `x.clone()`: torch has functions of the same names and numbers)
    hidden = {_code_print(fn.__code__) for chapter, (_, probe, _) in CHAPTERS.items()
              for name, fn in _candidates(probe).items() if name in _hidden(chapter) and len(fn.__code__.co_names) > 1}
    assert len(hidden) >= 30
    path = tmp_path / "scan.py"
    path.write_text(honest_source() + "\n\n" + (HOSTILE / "scan_for_candidates.py").read_text().replace(
        "__HIDDEN__", repr(hidden)))
    grade = Grader(settings(**LIMITS), chapter_checks("ch01")).grade(path)
    notes = "\n".join(map(str, grade.notes))
    assert "SCANNED" in notes, notes  # the scan ran (and would say what it found)
    assert "FOUND" not in notes, notes


def test_a_call_the_grader_must_refuse_is_refused_and_costs_only_its_check(tmp_path):
    path = tmp_path / "malformed.py"
    path.write_text((HOSTILE / "malformed_calls.py").read_text())
    checks = [c for c in _property_checks("ch04") if c.public]
    begun = time.monotonic()
    grade = Grader(settings(**LIMITS), checks).grade(path)
    assert time.monotonic() - begun < 60
    attacked = [v for v in grade.verdicts if v.check.params["head_dim"] == 16]
    rest = [v for v in grade.verdicts if v not in attacked]
    assert attacked and all(v.score == 0 for v in attacked)
    assert rest and all(v.score == v.max_score for v in rest), [(v.check.key, str(v.feedback))
                                                                 for v in rest if not v.score]
    said = str(attacked[0].feedback)  # the first 32 characters of each answer (the feedback keeps 300 of the error)
    for words in ("the call's arguments could not b",  # garbage, a pickle
                  "no candidate function can be cal",  # a token of no candidate in this request
                  "the call's arguments were not re",  # 17 MB: refused by the session, unread
                  "x has dtype torch.complex64: a c", "x is a _Sub: a candidate takes p",  # refused before sending
                  "x (2097152, 2) with position_ids",  # too large, refused before sending
                  "a check's candidates were called"):  # call 97 of a check of 3 candidates
        assert words in said, (words, said)
    assert "ANSWERED" not in said and "NO ANSWER" not in said


# ---- the callables and the answers, one by one -----------------------------------------------------------
def test_a_candidate_callable_carries_nothing_of_its_candidate():
    from grader.sandbox.runtime import candidate_calls

    table = candidate_calls.table(["c1", "c2", "c3"])
    fns = list(table.values())
    for fn in fns:
        for attribute in ("__code__", "__closure__", "__defaults__", "__kwdefaults__", "__wrapped__", "__name__",
                          "__qualname__", "__dict__", "__globals__", "__self__"):
            assert not hasattr(fn, attribute), attribute
        assert dir(fn) == dir(fns[0]) and type(fn) is type(fns[0])
        # what refers to it: the table handed to the test, and the tokens of the request in hand (drawn per
        # request by the grader: they say nothing)
        referrers = [r for r in gc.get_referrers(fn) if isinstance(r, dict)]
        assert all(set(r) <= {"c1", "c2", "c3"} or set(r.values()) <= {"c1", "c2", "c3"} for r in referrers)
    candidate_calls.table([])  # a later request: the callables of this one answer no more
    with pytest.raises(RuntimeError, match="belongs to another check"):
        fns[0](torch.zeros(1, 2), torch.arange(1))


def _answer_seconds(calls, request, data, repeat=4):
    best = float("inf")
    for _ in range(repeat):
        begun = time.monotonic()
        answer = calls.answer(request, data)
        best = min(best, time.monotonic() - begun)
        assert answer.error is None, answer.error
    return best


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_candidate_answers_after_the_same_time(chapter):
    """On the arguments of the reference's own test, every candidate answers after pad(x, position_ids), never
    sooner; the cheapest (the identity) and the costliest (computed in float64) alike (the shortest of a few
    calls: the machine's load only adds)."""
    from grader import candidates
    from grader.sandbox.runtime.candidate_calls import pack
    from grader.sandbox.wire import Probe

    _, probe, _ = CHAPTERS[chapter]
    names = sorted(_candidates(probe))
    calls = candidates.Calls()
    params = calls.params("r0", probe, {"candidates": names, "head_dim": 64})
    request = Probe("r0", probe, params, CHAPTERS[chapter][0])
    tokens = dict(zip(names, params["candidates"]))
    if chapter == "ch04":
        x, ids = torch.randn(4, 1, 256, 64), torch.arange(256)
    else:
        rows, cols = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
        x, ids = torch.randn(4, 1, 144, 64), torch.stack((rows.flatten(), cols.flatten()), dim=-1)
    body = pack({"x": x, "position_ids": ids})
    seconds = {name: _answer_seconds(calls, request, tokens[name].encode() + b"\n" + body) for name in names}
    pad = candidates.pad(x, ids)
    assert all(s >= pad for s in seconds.values()), (pad, min(seconds.items(), key=lambda kv: kv[1]))
    assert statistics.median(seconds.values()) < 1.25 * pad, (pad, statistics.median(seconds.values()))
    cheap = next(n for n in names if n.endswith("identity"))
    costly = next(n for n in names if "float64" in n)
    ends = [_answer_seconds(calls, request, tokens[n].encode() + b"\n" + body, repeat=8) for n in (cheap, costly)]
    assert abs(ends[0] - ends[1]) < 0.2 * pad, (pad, ends)
