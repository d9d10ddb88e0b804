"""The grader's half of the zero-English test (issues 26 and 27): every bundled and test submission, graded once
(tests/conftest.graded), reads in Chinese in every form the grader writes: the text report, Gradescope's
results.json, nbgrader's per-exercise feedback and the batch's feedback file. No line carries English prose
outside code, identifiers and what the learner's code produced ("English prose" as tests/test_messages.py defines
it). A note that crosses from the sandbox child is message data, decoded strictly: a forged one renders as text.
"""

from __future__ import annotations

import json
import os

import pytest

from grader import language
from grader.assignment import report_for, whole_course
from grader.nbgrader_cell import per_exercise
from grader.records import messages
from grader.report import gradescope_json
from tests.conftest import ROOT, graded
from tests.snapshots.record import submissions
from tests.test_messages import english_prose

MARK = "\ue000"  # what stands for the learner's verbatim text (a private-use character: no escaping touches it)


class _Marking(messages.Catalog):
    """The Chinese catalog, rendering every verbatim part as MARK."""

    def render(self, part, mark=None):
        return super().render(part, lambda _: MARK)


@pytest.fixture
def marked(monkeypatch):
    """The grader's zh_CN words with the learner's text set apart (grader/language.py's catalog, marking)."""
    chinese = language._catalog("zh_CN")
    marking = _Marking(chinese.table)
    marking.form = chinese.form
    monkeypatch.setattr(language, "_catalog", lambda lang: marking if lang == "zh_CN" else messages.Catalog())
    return marking


def _renderings(grade, assignment):
    """Every text the grader writes for `grade` in zh_CN: (form, text)."""
    out = [("report", report_for(grade, assignment, "zh_CN"))]
    results = gradescope_json(grade, language="zh_CN")
    out += [("gradescope", results["output"])] + [("gradescope", t["name"] + "\n" + t["output"])
                                                   for t in results["tests"]]
    checks = [{"key": v.check.key, "exercise": v.check.exercise, "status": str(v.status), "score": v.score,
               "name": v.check.name, "message": messages.to_json(v.feedback)} for v in grade.verdicts]
    out += [("nbgrader", e["feedback"]) for e in per_exercise(assignment, checks, "zh_CN").values()]
    out.append(("batch", language.phrasebook("zh_CN")("Feedback for {name}", name="x")))
    return out


def prose_lines(grades):
    """(lines, [what carries English prose]) over the zh_CN renderings of `grades` {label: Grade}."""
    assignment, lines, prose = whole_course(), 0, []
    for label, grade in grades.items():
        for form, text in _renderings(grade, assignment):
            for row in text.split("\n"):
                lines += 1
                found = english_prose(row.replace(MARK, " ").replace(str(ROOT), " "))
                if found:
                    prose.append(f"{label} {form}: {found} | {row[:200]}")
    return lines, prose


def test_the_graders_chinese_carries_no_english_prose(marked, capsys):
    grades = {str(p.relative_to(ROOT)): graded(str(p.resolve())) for p in submissions()}
    lines, prose = prose_lines(grades)
    with capsys.disabled():
        print(f"\ngrader in zh_CN: {len(prose)} of {lines} lines carry English prose")
    assert lines > 2000
    assert prose == [], "\n".join(prose[:60])


def test_a_childs_message_is_decoded_strictly():
    """A probe's problem crosses from the sandbox child as message data (messages.dumps), which the learner's code
    can forge: a known id keeps its translation with every parameter the child's text; a forged or unknown id, a
    context, a plural or malformed JSON is the child's text as it came, never a template filled or looked up."""
    known = messages.msg("output on {device}, not meta", device="cpu")
    decoded = messages.from_child(messages.dumps(known))
    assert decoded.id == known.id and decoded.values == {"device": messages.verbatim("cpu")}
    chinese = language.phrasebook("zh_CN").render(decoded)
    assert "cpu" in chinese and chinese != str(known)  # translated, the child's word inserted as it is
    for forged in [messages.msg("\x1b[31m{x:>99999999}</pre><script>", x="y"),  # an id no catalog holds
                   messages.msg("output on {device}, not meta", context="ctx", device="cpu"),
                   messages.nmsg("output on {device}, not meta", "{n:>99999999}", n=2, device="cpu")]:
        text = messages.dumps(forged)
        assert messages.from_child(text) == messages.verbatim(text)
    for malformed in ["not json", "[1, 2", '{"id": 3}', "plain English from the child"]:
        assert messages.from_child(malformed) == messages.verbatim(malformed)
    # a known id with parameters of the wrong kind renders its template, never raises
    odd = messages.from_child(messages.dumps(messages.msg("{where} one buffer is {gb:.1f} GB, more than the whole "
                                                          "{gib:g} GiB the grader allows: a {shape} tensor",
                                                          where="x", gb="big", gib=[], shape=None)))
    assert language.phrasebook("en").render(odd)


def test_a_forged_message_reaches_the_report_as_escaped_text():
    """Escape codes and markup a child puts in a forged message's id come out of every report as text."""
    from grader.checks import all_checks
    from grader.records import Grade, Status, Verdict
    from posenc_selfcheck.evaluate import evaluate

    check = next(c for c in all_checks() if c.expect == "ok" and c.public)
    forged = messages.dumps(messages.msg("\x1b[2J\x1b]0;pwned\x07{x}", x="<img src=x onerror=alert(1)>"))
    status, feedback = evaluate(check.to_dict() if hasattr(check, "to_dict") else vars(check),
                                {"ok": False, "problem": forged})
    grade = Grade("forged", [Verdict(check, Status(status), feedback)], [], 0.1)
    texts = [text for _, text in _renderings(grade, whole_course())]
    assert any("pwned" in text for text in texts)  # shown, as text
    assert not any("\x1b" in text or "\x07" in text for text in texts)


# ---- notes the grader writes outside a graded submission's checks, each path triggered directly ----------------
def _chinese_prose(message):
    """The English prose left in a message's Chinese rendering (paths of this machine taken out)."""
    text = language.phrasebook("zh_CN").render(message)
    assert text != language.phrasebook("en").render(message), text  # rendered in Chinese at all
    return english_prose(text.replace(str(ROOT), " "))


def _policy_outcomes():
    """Every note and refusal of the sandbox's policy: (what, policy.Note), over machines that lack each feature."""
    from grader.sandbox.confine import policy

    limits = dict(memory_mb=512, nproc=64, cpu_seconds=60, file_bytes=1 << 20, work_bytes=1 << 20,
                  cgroup_headroom_mb=256)
    request = dict(workdir="/s/work", stub="/s/stub", jail_dir="/s/jail", system=("/usr",), protect=("/repo",),
                   **limits)
    root = policy.Request(uid=61005, gid=61005, **request)
    machines = [  # (caps, request): what each lacks, or what POSENC_SANDBOX_MODE asked
        (policy.Caps(), policy.Request(**request)),  # nothing at all: mode none, no seccomp, no cgroup
        (policy.Caps(cgroup_reason="v1: /sys/fs/cgroup/memory"), policy.Request(cuda=True, **request)),
        (policy.Caps(landlock=3, forced="nolandlock"), policy.Request(**request)),
        (policy.Caps(landlock=3, userns_jail=True, forced="nojail", seccomp=True), policy.Request(**request)),
        (policy.Caps(userns_jail=True, seccomp=True, cgroup="v2"), policy.Request(**request)),
        (policy.Caps(userns_jail=True, landlock=3, seccomp=True, cgroup="v2"), policy.Request(**request)),
        (policy.Caps(root=True, python_readable=True), root),
        (policy.Caps(root=True, python_readable=True, jail=True, forced="nojail", landlock=3), root),
        (policy.Caps(root=True, python_readable=True, jail=True, forced="user", landlock=3), root),
        (policy.Caps(root=True, forced="user", landlock=3), root),
        (policy.Caps(root=True), root),  # refused: no jail, Python unreadable, no Landlock
        (policy.Caps(root=True, jail=True, forced="nojail", landlock=3), root),  # refused, with Landlock
        (policy.Caps(forced="jail"), root),  # refused: not a mode
        (policy.Caps(), policy.Request(withhold=("/s/.grader-secret",), **request)),  # the none refusal
    ]
    out = []
    for caps, req in machines:
        try:
            out += [(f"{caps}: note", n) for n in policy.decide(caps, req).notes]
        except policy.Refused as exc:
            out.append((f"{caps}: refused", exc.note))
    return out


def test_the_sandbox_policys_notes_and_refusals_read_in_chinese():
    from grader.sandbox.host.session import note_message

    outcomes = _policy_outcomes()
    said = {note.id for _, note in outcomes} | {p.id for _, note in outcomes for p in note.params.values()
                                                 if hasattr(p, "id")}
    assert len(said) >= 25 and sum(what.endswith("refused") for what, _ in outcomes) == 4  # each path was taken
    prose = [(what, str(note), found) for what, note in outcomes if (found := _chinese_prose(note_message(note)))]
    assert prose == []


def test_a_malformed_files_notes_read_in_chinese():
    from grader.parse import parse_limited
    from grader.settings import ReadLimits

    tiny = ReadLimits(code_kb=1)
    notes = [n for name, data, limits, seconds in [
        ("a.py", b"\xff\xfe", None, None),  # not UTF-8
        ("a.ipynb", b"{not json", None, None),
        ("a.ipynb", b'{"cells": 3}', None, None),  # no list of cells
        ("a.py", b"x = 1\n" * 400, tiny, None),  # too much code
        ("a.py", b"x = 1\n", None, 0),  # no time left
        # its parse takes longer than the time left (a list literal of 100,000 elements, within code_kb: tens of ms)
        ("a.py", b"x = [" + b"1, " * 100_000 + b"]\n", None, 0.005),
        ("a.ipynb", b'{"cells": [{"cell_type": "code", "source": "def f(:\\n  pass", "metadata": {}}]}', None, None),
    ] for n in parse_limited(name, data, limits, seconds)["notes"]]
    assert len(notes) == 7 and all(isinstance(n, messages.Message) for n in notes), notes
    assert [n for n in notes if _chinese_prose(n)] == []


def test_discovery_errors_read_in_chinese(tmp_path):
    from grader.batch.discovery import DiscoveryError, discover
    from grader.nbgrader_export import save_to_gradebook

    (tmp_path / "loose.py").write_text("x = 1\n")
    errors = []
    for attempt in (lambda: discover(tmp_path, layout="nbgrader"), lambda: discover(tmp_path, layout="bogus"),
                    lambda: save_to_gradebook(tmp_path, "ch01", tmp_path / "out", {})):
        with pytest.raises(DiscoveryError) as caught:
            attempt()
        errors.append(caught.value.message)
    assert [e for e in errors if _chinese_prose(e)] == []


def test_the_sessions_closing_note_reads_in_chinese(tmp_path, monkeypatch):
    from grader.sandbox import procs
    from grader.sandbox.host.session import Session
    from grader.settings import Settings

    session = Session.__new__(Session)  # only what close() reads: a session whose processes outlived it
    session.pid = session.uid = session.slot_fd = session.sock = session.channel = None
    session.settings, session.root, session.closing_notes = Settings(), tmp_path / "session", []
    session.killed = {(os.getpid(), procs.started(os.getpid()))}
    monkeypatch.setattr(procs, "gone_within", lambda processes, seconds: [p for p, _ in processes])
    session.close()
    assert len(session.closing_notes) == 1 and _chinese_prose(session.closing_notes[0]) == []


class _NoZygote:
    def session(self, settings, shared=None):
        raise AssertionError("no exercise has time left to run")


def test_an_exercise_not_run_reads_in_chinese(monkeypatch):
    """An exercise with no time left is not run, and the report's line says why: the exercise's time, or the
    submission's."""
    from grader import grading
    from grader.checks import all_checks
    from grader.settings import Limits, Settings

    monkeypatch.setattr(grading._Budget, "left", lambda self, exercise: 0.0)
    checks = [c for c in all_checks() if c.exercise == "sinusoidal_table"][:1]
    grade = grading.Grader(Settings.from_env(), checks, zygote=_NoZygote()).grade(
        str(ROOT / "tests" / "submissions" / "ch01_swapped.py"), student="t")
    lines = [n for n in grade.notes if "not run" in str(n)]
    spent = grading._Budget(Limits())
    spent.total = Limits().submission_seconds
    assert len(lines) == 1 and "submission used up" in str(spent.why("x"))
    assert [m for m in lines + [spent.why("x")] if _chinese_prose(m)] == []


# ---- the sandbox's and the batch's last English lines (issue 26): each path triggered, read in Chinese -----------
def _chinese_note(note):
    """A policy.Note (what the sandbox's standard-library side says) as the report renders it, in Chinese."""
    from grader.sandbox.host.session import note_message

    return _chinese_prose(note_message(note))


def test_the_cgroup_diagnostics_read_in_chinese(tmp_path, monkeypatch):
    """Why no cgroup can be made (cgroup.probe, on /proc and mounts this test lays out), as the policy's note quotes
    it, and the clean-up's notes when a process or a group outlives an exercise."""
    from grader.sandbox.confine import cgroup, policy
    from grader.sandbox.runtime import cleanup
    from tests.test_sandbox_cgroup import fake_v2

    bare = tmp_path / "bare"  # no cgroup mounted at all
    bare.mkdir()
    (bare / "mountinfo").write_text("24 1 0:22 / /proc rw,nosuid - proc proc rw\n")
    (bare / "cgroup").write_text("0::/\n")
    no_memory = {"/": "cpu", "/user.slice": "", "/user.slice/user-1000.slice": ""}
    _, undelegated = fake_v2(tmp_path / "v2", enabled=no_memory)
    v1 = tmp_path / "v1"  # a v1 memory hierarchy mounted where this user cannot write (nowhere: root or not)
    v1.mkdir()
    (v1 / "mountinfo").write_text(f"24 1 0:22 / {v1 / 'gone'} rw - cgroup cgroup rw,memory\n")
    (v1 / "cgroup").write_text("4:memory:/\n")
    reasons = [cgroup.probe(str(proc))[1] for proc in (bare, undelegated, v1, tmp_path / "no such proc")]
    assert all(isinstance(r, policy.Note) for r in reasons), reasons
    said = {part.id for r in reasons for part in ([r.params["v2"], r.params["v1"]] if "v2" in r.params else [r])}
    assert len(said) == 5, said  # v2: not mounted, not delegated; v1: not mounted, not writable; /proc unreadable
    assert [str(r) for r in reasons if _chinese_note(r)] == []
    quoted = policy.msg("here ({reason})", reason=reasons[1])  # as policy.decide quotes the reason
    assert _chinese_note(quoted) == []
    outlived = []
    for left in ([], [4321, 4322]):
        monkeypatch.setattr(cleanup.procs, "survivors", lambda pids, seconds, left=left: left)
        outlived.append(cleanup.outlived(None, False, 0.0))
    assert {n.id for n in outlived} == {"{n} process(es) of this exercise outlived it and could not be killed",
                                        "this exercise's cgroup could not be removed: a process of it outlived its end"}
    assert [str(n) for n in outlived if _chinese_note(n)] == []


class _Limits:
    cpu_seconds, stmt_seconds, wall_seconds, submission_seconds = 60, 10.0, 30.0, 300.0
    result_bytes, submission_result_bytes = 8 << 20, 100 << 20


def _bare_session(cgroup_kind):
    """A Session with only what its `_ended`, `_server_ended` and `_within_results_cap` read."""
    import types

    from grader.sandbox.host.session import Session

    session = Session.__new__(Session)
    from grader.sandbox.host.session import Shared

    session.limits, session.shared = _Limits(), Shared(1)
    session.capabilities = types.SimpleNamespace(cgroup=cgroup_kind)
    session.pid, session.zygote = 1, types.SimpleNamespace(how_it_ended=lambda pid: None)
    return session


def test_how_an_exercises_process_ended_reads_in_chinese(tmp_path):
    """Every way the session says a child ended (a signal, with and without a cgroup to blame; CPU time; an exit
    status; a lost session server), each as the notes and a check's feedback say it: the grading note, the skipped
    statement's note, the missing result."""
    import signal
    import types

    from grader.results import collect
    from posenc_selfcheck.evaluate import _error_message

    endings = []
    for kind in ("v2", None):
        session = _bare_session(kind)
        endings += [session._ended(signal.SIGKILL, 2.5), session._ended(signal.SIGKILL),
                    session._ended(signal.SIGXCPU, 61.0), session._ended(signal.SIGXCPU)]
    session = _bare_session("v2")
    endings += [session._ended(3 << 8, 1.0), session._server_ended(4.0)]
    assert all(isinstance(e, messages.Message) for e in endings), endings
    said = [messages.msg("this statement ended the process and was skipped ({why})", why=e) for e in endings]
    (tmp_path / "_exec.json").write_text(json.dumps([
        {"where": "a.py:1", "timed_out": 0}, {"where": "a.py:2", "exit": "3"}, {"where": "a.py:3", "error": "E: x"}]))
    requests = [types.SimpleNamespace(token="t0")]
    results, log, timed_out = collect(tmp_path, requests, endings[0], 1 << 20)
    assert timed_out == [0] and [where for where, _ in log] == ["a.py:2", "a.py:3"]  # the cut one: the session's
    said += [log[0][1]] + [_error_message(results["t0"])[1]]
    results, _, _ = collect(tmp_path, requests, "ok", 1 << 20)
    said.append(_error_message(results["t0"])[1])
    assert [str(m) for m in said if _chinese_prose(m)] == []


def test_the_results_cap_note_reads_in_chinese(tmp_path):
    import types

    session = _bare_session("v2")
    (tmp_path / "t0.json").write_text("{}")  # more than the one byte left
    tried = types.SimpleNamespace(outdir=tmp_path, run=types.SimpleNamespace(log=[]))
    session._within_results_cap(tried)
    assert not (tmp_path / "t0.json").exists() and len(tried.run.log) == 1
    assert _chinese_prose(tried.run.log[0][1]) == []


def test_the_batch_gradebooks_notes_read_in_chinese(tmp_path):
    """The gradebook written in Chinese: an entry with nothing handed in, one renamed, one the worker died on, one
    that timed out, one refused, one nbgrader could not process; no note of its notes column carries English."""
    import csv

    from grader.assignment import get
    from grader.batch.discovery import Entry
    from grader.batch.reporting import write_outputs
    from grader.batch.scheduling import _failed

    out = tmp_path / "out"
    for sub in ("results", "errors"):
        (out / sub).mkdir(parents=True)
    ch01 = get("ch01")
    renamed = messages.msg("id {wanted} is another entry's: this one is {student}", wanted="bo", student="bo-2")
    entries = {"al": Entry("al", None, "al", messages.msg("nothing handed in for {assignment}", assignment="ch01")),
               "bo-2": Entry("bo-2", tmp_path / "bo", "bo", renamed, folder="bo"),
               "cy": Entry("cy", tmp_path / "cy", "cy"), "di": Entry("di", tmp_path / "di", "di")}
    hashes = {s: "h" for s in entries}
    for student, reply in {"al": _failed("al", messages.msg("the grading worker died")),
                           "cy": _failed("cy", messages.msg("grading did not finish within {seconds:g} s",
                                                            seconds=600))}.items():
        (out / "errors" / f"{student}.json").write_text(json.dumps({"error": reply.error, "message": reply.message}))
    refusal = messages.msg("nothing handed in for this assignment")
    for student in ("bo-2", "di"):
        record = {"student": student, "sha256": "h", "fingerprint": "f", "run_id": "r", "total": 0.0,
                  "max": ch01.max_points(), "exercises": {}, "notes": [], "flags": [], "checks": []}
        if student == "di":
            record.update(refused=str(refusal), refused_message=messages.to_json(refusal))
        (out / "results" / f"{student}.json").write_text(json.dumps(record))
    write_outputs(out, entries, hashes, "f", ch01, plots=False, nbgrader={"bo": "x"}, language="zh_CN")
    with open(out / "gradebook.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    notes = {row["student"]: row["notes"] for row in rows}
    assert all(notes.values()) and len(notes) == 4, notes  # every row has its note
    assert {s: english_prose(n) for s, n in notes.items() if english_prose(n)} == {}


def test_the_progress_bar_and_the_batch_commands_lines_read_in_chinese(tmp_path):
    """The bar a grading run redraws (with an error, an estimate, then done) and the batch command's refusals."""
    import io
    import subprocess
    import sys

    from grader.progress import Progress

    say, stream = language.phrasebook("zh_CN"), io.StringIO()
    bar = Progress(say("grading"), 3, stream, every=0.0, say=say)
    for ok, student in ((False, "al"), (True, "bo"), (True, "cy")):
        bar.step(ok, student)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and "1" in lines[0]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for args in (["--nbgrader-gradebook"], ["--due", "not a time"], []):
        folder = tmp_path if args else tmp_path / "missing"
        run = subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(tmp_path / "out"),
                              "--lang", "zh_CN", *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                             env=env)
        assert run.returncode == 2, run.stderr[-2000:]
        lines += [line.replace(str(tmp_path), " ") for line in run.stderr.splitlines()]
    assert len(lines) == 6
    assert [line for line in lines if english_prose(line)] == []


def test_gradescopes_failure_reads_in_chinese(marked, monkeypatch):
    """results.json when the autograder itself failed: each cause (a broken package, out of memory with and without
    the container's limit and the assignment's need, none found), in the students' language."""
    from grader import gradescope
    from grader.assignment import get

    outputs = []
    for problem, memory, assignment in [("No module named 'torch'", (2048, 1), get("ch03")), ("", (None, 1), None),
                                        ("", (2048, 1), None), ("", (None, 0), None)]:
        monkeypatch.setattr(gradescope, "_import_problem", lambda python, problem=problem: problem)
        monkeypatch.setattr(gradescope, "_memory_events", lambda memory=memory: memory)
        monkeypatch.setattr(gradescope, "container_mb", lambda a: 4096 if a is not None else None)
        for step in (messages.msg("starting the sandbox"), messages.msg("grading the submission")):
            outputs.append(gradescope.failure(step, RuntimeError("x"), assignment, "zh_CN")["output"])
    assert len(set(outputs)) == len(outputs) == 8
    assert [o for o in outputs if english_prose(o.replace(MARK, " "))] == []
