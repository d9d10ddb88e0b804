"""A grade rests on answers to inputs the learner has never seen, checked in the trusted process.

grader/unseen.py draws the inputs of main checks and twins from the grader's secret, the assignment and the
student; grader.grading.with_twins counts a check only once its twins are answered as the reference answers
them (tests/test_twins.py proves the twins themselves). The attacks here were each found against the grader;
tests/hostile/ holds their files.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import torch

from grader import unseen
from grader.checks import all_checks, chapter_checks, exercises
from grader.grading import Grader
from grader.records import Statement, Status
from grader.report import gradescope_json, text_report
from grader.spec import SEED, Check, draw_among, draw_choice, draw_int, has_draws, same, shuffled
from posenc_selfcheck.runner import public_checks
from tests.conftest import settings
from tests.test_hostile import HOSTILE, honest_source

CH01 = chapter_checks("ch01")
CH03 = chapter_checks("ch03")
LIMITS = dict(wall_seconds=20, stmt_seconds=5)
SECRET = bytes(range(32))


def _ident(student):
    return unseen.identity(SECRET, "course", student)


# ---- the draws ----------------------------------------------------------------------------------------------
def test_every_exercise_has_a_main_check_on_drawn_inputs_and_no_public_check_is_main():
    checks = all_checks()
    for exercise in exercises():
        mine = [c for c in checks if c.exercise == exercise]
        assert any(c.unseen for c in mine), exercise
    assert not [c.key for c in checks if c.main and (c.public or not c.unseen)]


def test_draws_are_the_same_for_the_same_student_and_differ_for_another_student_or_secret():
    check = Check("x", "drawn", "call", {"args": [draw_int(1, 10 ** 6, name="n"), same("n", times=2, plus=1),
                                                   {"t": "randn", "shape": [draw_choice(2, 3)], "seed": SEED}]},
                  main=True, id="drawn")
    a = unseen.resolve(check, _ident("alice"))
    assert a.params == unseen.resolve(check, _ident("alice")).params  # a regrade, or a resubmission: the same inputs
    assert a.params != unseen.resolve(check, _ident("bob")).params
    assert a.params != unseen.resolve(check, unseen.identity(bytes(32), "course", "alice")).params
    n, twice, tensor = a.params["args"]
    assert 1 <= n <= 10 ** 6 and twice == 2 * n + 1 and tensor["shape"][0] in (2, 3)
    assert not has_draws(a.params) and has_draws(check.params) and check.unseen and not a.unseen


def test_resalted_or_renamed_files_of_one_student_get_the_same_draws(tmp_path):
    """Fishing: the same student resubmitting other bytes under other names draws the same inputs (the draws are
    keyed on the student, never on the code); another student draws others."""
    drawn = {}
    for n, (name, student) in enumerate([("a.py", "alice"), ("b.py", "alice"), ("c.py", "bob")]):
        path = tmp_path / name
        path.write_text(honest_source() + f"\nSALT = {n}\n")
        grader = Grader(settings(**LIMITS), CH01)
        seen = []
        original = unseen.resolve

        def spy(check, ident, shipped=frozenset()):
            resolved = original(check, ident, shipped)
            seen.append((check.key, unseen.canonical(resolved.params)))
            return resolved

        unseen.resolve = spy
        try:
            grader.grade(path, student=student)
        finally:
            unseen.resolve = original
        drawn[name] = sorted(seen)
    assert drawn["a.py"] and drawn["a.py"] == drawn["b.py"]
    assert drawn["a.py"] != drawn["c.py"]


def test_a_shuffle_is_a_permutation_and_its_order_varies():
    check = Check("x", "drawn", "call", {"candidates": shuffled(*"abcdef")}, main=True, id="drawn")
    orders = {tuple(unseen.resolve(check, _ident(str(n))).params["candidates"]) for n in range(20)}
    assert all(sorted(o) == list("abcdef") for o in orders) and len(orders) > 10


def test_draw_among_draws_what_draw_choice_draws_and_makes_its_options_only_for_a_draw():
    made = []

    def options():
        made.append(1)
        return [{"n": n, "base": {"draw": "float", "lo": 10.0, "hi": 1e4, "digits": 4, "log": True}} for n in range(50)]

    lazy = Check("x", "drawn", "call", {"args": [draw_among(options), draw_int(1, 9)]}, main=True, id="drawn")
    assert not made and lazy.unseen  # declaring the check made nothing
    eager = Check("x", "drawn", "call", {"args": [draw_choice(*options()), draw_int(1, 9)]}, main=True, id="drawn")
    for n in range(30):
        assert unseen.resolve(lazy, _ident(str(n))).params == unseen.resolve(eager, _ident(str(n))).params
    assert len(made) == 2  # once for the eager check, once (kept) for the lazy one
    assert unseen.space(lazy.params) == unseen.space(eager.params) == 50 * 9000 * 9


def test_a_named_draw_among_draw_among_options_is_refused_by_the_build():
    from grader.authoring import twin_problems

    named = Check("x", "scored", "call", {"args": [1]}, id="scored",
                  twin={"args": [draw_among(lambda: [draw_int(1, 10 ** 6, name="n")]), same("n")]})
    assert any("named draw" in p for p in twin_problems([named]))
    plain = Check("x", "scored", "call", {"args": [1]}, id="scored",
                  twin={"args": [draw_among(lambda: [draw_int(1, 10 ** 6)]), draw_int(1, 10 ** 6)]})
    assert not any("named draw" in p for p in twin_problems([plain]))


def test_draws_stay_in_their_range_and_step():
    check = Check("x", "drawn", "call", {"args": [draw_int(4, 32, step=2)]}, main=True, id="drawn")
    values = {unseen.resolve(check, _ident(str(n))).params["args"][0] for n in range(200)}
    assert values <= set(range(4, 33, 2)) and len(values) > 10


def test_the_secret_is_made_private_once_and_refused_when_it_is_not(tmp_path):
    path = tmp_path / "secret"
    first = unseen.load_secret(path)
    assert len(first) == 32 and unseen.load_secret(path) == first
    assert (path.stat().st_mode & 0o777) == 0o600
    path.chmod(0o644)
    with pytest.raises(unseen.SecretError, match="chmod 600"):
        unseen.load_secret(path)
    path.chmod(0o600)
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(unseen.SecretError, match="not a link"):
        unseen.load_secret(link)
    short = tmp_path / "short"
    short.write_bytes(b"x" * 5)
    short.chmod(0o600)
    with pytest.raises(unseen.SecretError, match="32 bytes"):
        unseen.load_secret(short)


def test_the_secret_never_reaches_the_student_release(tmp_path):
    from grader.release import build_release
    from grader.settings import DEFAULT_SECRET
    from tests.conftest import ROOT

    secret = unseen.load_secret(ROOT / DEFAULT_SECRET)  # the default one, in the repository the release copies from
    files = build_release(tmp_path / "bundle", check_sync=False)
    assert files and not [f for f in files if secret in (tmp_path / "bundle" / f).read_bytes()]
    assert DEFAULT_SECRET in (ROOT / ".gitignore").read_text().split()


# ---- a grade forged from what the student release holds ---------------------------------------------------------
def _encode(value):
    if isinstance(value, torch.Tensor):
        return ["T", str(value.dtype).replace("torch.", ""), value.tolist()]
    return value


def _forged(tmp_path, exercises_, which):
    """A file that implements nothing and answers every public check from the self-check data: the reference's
    answers ("expected"), or the first known mistake's where a check has one ("mistake")."""
    answers = {}
    for exercise in exercises_:
        for spec, expected, mistakes in public_checks(exercise):
            answer = expected if which == "expected" else (mistakes[0][1] if mistakes else None)
            usable = answer is not None and "error" not in answer
            encoded = {k: _encode(v) for k, v in answer.items()} if usable else None
            # a file stays under the grader's code limit (Settings' read.code_kb): the 20000-row table is left out
            if encoded is not None and len(json.dumps(encoded)) < 64 << 10:
                answers[json.dumps([spec["probe"], spec["params"]], sort_keys=True)] = encoded
    stubs = "\n".join(f"def {name}(*args, **kwargs):\n    raise ValueError('seq_len d_model 7 5 k')\n"
                      for name in exercises_ if name[0].islower())
    stubs += "\n".join(f"\nclass {name}:\n    pass\n" for name in exercises_ if name[0].isupper())
    text = (HOSTILE / "forged_from_release.py").read_text()
    path = tmp_path / f"forged_{which}.py"
    path.write_text(text.replace("__ANSWERS__", repr(json.dumps(answers))).replace("__STUBS__", stubs))
    return path


def _without_twins(monkeypatch):
    """Grade as if checks had no twins: what the tests below show the twins take away (so they can fail)."""
    from grader import twins

    monkeypatch.setattr(twins, "twins_of", lambda check, checks: ())


@pytest.mark.parametrize("which", ["expected", "mistake"])
def test_a_grade_forged_from_the_release_data_scores_nothing(tmp_path, which, monkeypatch):
    names = ["sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"]
    path = _forged(tmp_path, names, which)
    grade = Grader(settings(**LIMITS), CH01).grade(path, student="alice")
    assert grade.total == 0, [(v.check.key, str(v.feedback)) for v in grade.verdicts if v.score]
    # without the twins the same file earns points: the test can fail
    _without_twins(monkeypatch)
    ungated = Grader(settings(**LIMITS), CH01).grade(path, student="alice")
    assert sum(v.score for v in ungated.verdicts if v.check.exercise == "sinusoidal_table") > 0


def test_the_worked_example_forged_from_the_release_data_scores_nothing_too(tmp_path, monkeypatch):
    """docs/authoring.md's worked example, chapter 5's rope_wavelengths, added with three files: its twins
    hold it as every exercise's do."""
    checks = [c for c in chapter_checks("ch05") if c.exercise == "rope_wavelengths"]
    path = _forged(tmp_path, ["rope_wavelengths"], "expected")
    grade = Grader(settings(**LIMITS), checks).grade(path, student="alice")
    assert grade.total == 0, [(v.check.key, str(v.feedback)) for v in grade.verdicts if v.score]
    _without_twins(monkeypatch)
    ungated = Grader(settings(**LIMITS), checks).grade(path, student="alice")
    assert sum(v.score for v in ungated.verdicts) > 0  # the same file without twins: the test can fail


def test_partial_work_earns_what_it_computes_and_a_lookup_earns_nothing(tmp_path):
    """The attack that bought 98/104: the least code that answers a main check (here: sinusoidal_table for the
    default base only), plus a lookup of the release's public answers for everything else. With twins the
    lookup adds nothing: the file scores what the least code scores alone."""
    least = ("import math\nimport torch\n\n"
             "def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):\n"
             "    p = torch.arange(seq_len, dtype=torch.float32)[:, None]\n"
             "    w = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))\n"
             "    pe = torch.zeros(seq_len, d_model)\n"
             "    pe[:, 0::2] = torch.sin(p * w)\n"
             "    pe[:, 1::2] = torch.cos(p * w)\n"
             "    return pe\n")
    checks = [c for c in CH01 if c.exercise == "sinusoidal_table"]
    alone = tmp_path / "least.py"
    alone.write_text(least)
    forged = _forged(tmp_path, ["sinusoidal_table"], "expected")
    forged.write_text(forged.read_text().replace("def sinusoidal_table(*args, **kwargs):\n    raise ValueError("
                                                 "'seq_len d_model 7 5 k')\n", least))
    grader = Grader(settings(**LIMITS), checks)
    a, b = grader.grade(alone, student="alice"), grader.grade(forged, student="alice")
    assert b.total == a.total, sorted((v.check.key, v.score) for v in b.verdicts if v.score)
    assert a.total < a.max_score  # the least code misses cases (the base argument, the errors): there was a gap


def test_a_result_must_carry_every_field_the_grader_asks_for(tmp_path):
    module = [c for c in CH01 if c.exercise == "SinusoidalPositionalEncoding" and not c.cuda]
    text = (HOSTILE / "drop_dtype.py").read_text()
    honest = tmp_path / "float32_only.py"
    honest.write_text(text.replace("sys.modules[\"probes\"].run = _without_dtype", "pass"))
    forged = tmp_path / "drop_dtype.py"
    forged.write_text(text)
    plain = Grader(settings(**LIMITS), module).grade(honest)
    dropped = Grader(settings(**LIMITS), module).grade(forged)
    dtype_checks = [v for v in plain.verdicts if v.status == Status.FAILED and "dtype" in str(v.feedback)]
    assert dtype_checks  # float32 outputs fail the dtype checks: what the forgery tries to hide
    assert dropped.total <= plain.total
    said = {v.check.key: str(v.feedback) for v in dropped.verdicts}
    assert all("does not say out:dtype" in said[v.check.key] for v in dtype_checks), said


# ---- what a child holds ------------------------------------------------------------------------------------------
def test_a_child_holds_no_request_but_the_one_it_answers_and_never_a_hidden_one(tmp_path):
    path = tmp_path / "inspect.py"
    path.write_text((HOSTILE / "inspect_requests.py").read_text())
    checks = [c for c in chapter_checks("ch07") if c.exercise == "PositionalAttention" and not c.cuda]
    grade = Grader(settings(**LIMITS), checks).grade(path)
    payload = gradescope_json(grade)
    visible = "\n".join([payload["output"]] + [t["output"] for t in payload["tests"] if t["visibility"] == "visible"])
    public = [c for c in checks if c.public and c.probe == "scheme_attention"]
    hidden = [c for c in checks if not c.visible]
    assert len(hidden) >= 5 and public
    shown = {v.check.key: str(v.feedback) for v in grade.verdicts if v.check.visible}
    # the scan works: a public check shows the request it answers, and no other request
    for check in public:
        assert json.dumps(check.params, sort_keys=True) in shown[check.key], shown[check.key]
        others = [c.key for c in public if c is not check and json.dumps(c.params, sort_keys=True) in shown[check.key]]
        assert others == [], others
    assert not [c.key for c in hidden if json.dumps(c.params, sort_keys=True) in visible]
    assert "SEEN" in "\n".join(grade.hidden_notes + [str(v.feedback) for v in grade.verdicts if not v.check.visible])


def test_learner_text_never_starts_a_report_line_of_its_own(tmp_path):
    path = tmp_path / "forge.py"
    path.write_text(honest_source() + "\n\n" + (HOSTILE / "forged_report_lines.py").read_text())
    grade = Grader(settings(**LIMITS), CH01).grade(path)
    report = text_report(grade)
    assert sum(line.startswith("Total:") for line in report.splitlines()) == 1, report
    assert "Total: 999" in report  # the text is shown, on the line of the note that holds it
    assert not any(line.strip().startswith("All checks passed") for line in report.splitlines())
    payload = gradescope_json(grade)
    assert "\nTotal: 999" not in payload["output"]


# ---- time is one budget ------------------------------------------------------------------------------------------
def test_slow_statements_and_retries_share_one_budget_per_exercise_and_per_submission(tmp_path):
    honest = tmp_path / "honest.py"
    honest.write_text(honest_source())
    path = tmp_path / "slow.py"
    path.write_text((HOSTILE / "slow_statements.py").read_text() + "\n" + honest_source())
    limits = dict(wall_seconds=6, stmt_seconds=2, submission_seconds=14)
    grader = Grader(settings(**limits), CH01)
    start = time.monotonic()
    grader.grade(honest)
    baseline = time.monotonic() - start
    start = time.monotonic()
    grade = grader.grade(path)
    seconds = time.monotonic() - start
    # without the budgets: 2 exercises x 7.6 s of sleeping in each of their children, and retries after a timeout
    assert seconds < baseline + limits["submission_seconds"] + 5, (seconds, baseline)
    notes = "\n".join(map(str, grade.notes + grade.hidden_notes))
    assert "the time left of its wall-clock budget" in notes, notes


def test_honest_code_is_graded_the_same_on_every_draw(tmp_path):
    """Correct code passes every main check whatever is drawn: two secrets, full marks both times."""
    from tests.conftest import ROOT

    example = ROOT / "examples" / "complete" / "ch01_sinusoidal.py"
    for n, secret in enumerate((b"\x01" * 32, b"\x02" * 32)):
        file = tmp_path / f"secret{n}"
        file.write_bytes(secret)
        os.chmod(file, 0o600)
        grade = Grader(settings(**LIMITS).replace(secret_file=str(file)), CH01).grade(example)
        assert grade.total == grade.max_score, [(v.check.key, str(v.feedback)) for v in grade.verdicts if not v.score]


# ---- notes say what happened ---------------------------------------------------------------------------------
def test_a_lost_session_server_is_not_reported_as_a_timeout():
    import signal
    import threading

    from grader.results import collect
    from grader.sandbox.host.client import Zygote
    from grader.sandbox.wire import Probe

    config = settings(wall_seconds=30)
    with Zygote.start(config).session(config) as session:
        request = [Probe("r0", "call", {"args": [4, 8]}, "sinusoidal_table")]
        source = "import time\n_x = time.sleep(4)\ndef sinusoidal_table(n, d):\n    return None\n"
        session._open()
        threading.Timer(1.0, lambda: os.kill(session.pid, signal.SIGKILL)).start()
        start = time.monotonic()
        run = session.run([Statement("cell 1", source)], request,
                          lambda outdir, reqs, ended: collect(outdir, reqs, ended, 1 << 20))
        assert time.monotonic() - start < 25
    ended = str(run.ended)  # a message: its English
    assert "session server ended after" in ended and "SIGKILL" in ended, ended
    assert "timed out" not in ended
