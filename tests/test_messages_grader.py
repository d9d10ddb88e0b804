"""The grader's half of the zero-English test (issues 26 and 27): every bundled and test submission, graded once
(tests/conftest.graded), reads in Chinese in every form the grader writes: the text report, Gradescope's
results.json, nbgrader's per-exercise feedback and the batch's feedback file. No line carries English prose
outside code, identifiers and what the learner's code produced ("English prose" as tests/test_messages.py defines
it). A note that crosses from the sandbox child is message data, decoded strictly: a forged one renders as text.
"""

from __future__ import annotations

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
