"""The grader's report and feedback in Chinese (grader/language.py, grader/i18n_grader.py; issue 18).

The oracle for the Chinese words is the catalog itself (locale/zh_CN/LC_MESSAGES/*.po, read with Babel); for
everything that must not change, the English report of the same grade: its check ids, numbers and marks.
"""

from __future__ import annotations

import json
import re

import pytest

from grader import i18n_build, i18n_grader, i18n_runtime
from grader.assignment import get, report_for
from grader.language import Say, check_name, phrasebook
from grader.records import Grade, Status, Verdict, messages
from grader.report import gradescope_json, text_report
from tests.conftest import ROOT, grade

SUBMISSION = ROOT / "tests" / "submissions" / "ch01_swapped.py"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?")
CJK = re.compile(r"[\u4e00-\u9fff]")
GLOSSARY = ROOT / "locale" / "zh_CN" / "glossary.tsv"


def _catalog(stem):
    return i18n_build.read_catalog(i18n_build.catalog_path(stem))


@pytest.fixture(scope="module")
def swapped():
    """ch01_swapped graded on chapter 1's checks (the real grading path, sandbox included)."""
    assignment = get("ch01")
    return assignment, grade(SUBMISSION, assignment.checks)


def test_a_wrong_submission_reads_in_chinese_with_the_same_ids_and_numbers(swapped):
    assignment, graded = swapped
    english = report_for(graded, assignment).split("\n")
    chinese = report_for(graded, assignment, "zh_CN").split("\n")
    assert len(chinese) == len(english)
    failed = [(e, z) for e, z in zip(english, chinese) if e.lstrip().startswith("✗")]
    assert len(failed) >= 10
    for e, z in zip(english, chinese):
        assert sorted(NUMBER.findall(z)) == sorted(NUMBER.findall(e)), (e, z)  # the same numbers (a sentence's
        # order may change: "8 of 64 entries" reads "64 个元素中有 8 个")
        if re.match(r"  \w+ +\d", e):  # an exercise's line: its id and points, as they are
            assert z.split()[:2] == e.split()[:2]
    for e, z in failed:
        assert CJK.search(z) and z != e, z
    # the diagnosis of the named mistake is the catalog's translation of it
    chapter = _catalog("01_sinusoidal")  # chapter 1's declared words are in its catalog
    swapped = next(v for v in graded.verdicts if v.mistake)
    name = next(n for n in swapped.check.mistakes if chapter.get(swapped.mistake, context=n) is not None)
    assert any(chapter.get(swapped.mistake, context=name).string in z for _, z in failed)
    # and the catalog's translation of every failed check's name (in the context of its key)
    names = {(m.context, m.id): m.string for m in chapter if m.id}
    for v in graded.verdicts:
        if v.status == Status.FAILED:
            assert any(f"✗ {names[(v.check.key, v.check.name)]}：" in z for _, z in failed), v.check.name


def test_gradescope_results_in_chinese_keep_keys_scores_and_numbers(swapped):
    _, graded = swapped
    english, chinese = gradescope_json(graded), gradescope_json(graded, language="zh_CN")
    assert [t["number"] for t in chinese["tests"]] == [t["number"] for t in english["tests"]]
    assert chinese["score"] == english["score"]
    for e, z in zip(english["tests"], chinese["tests"]):
        assert {k: z[k] for k in ("score", "max_score", "status", "tags", "visibility")} == \
               {k: e[k] for k in ("score", "max_score", "status", "tags", "visibility")}
        key = re.search(r" \[[\w.]+\]", e["output"]).group(0)
        assert key in z["output"]  # the check's stable key, as it is
        assert sorted(NUMBER.findall(z["output"])) == sorted(NUMBER.findall(e["output"]))
        if e["status"] == "failed":
            assert CJK.search(z["output"])


def test_what_the_submission_says_is_never_translated():
    """A note, a file name, an exception's message: the learner's words stay as they are, even when they are
    word for word the grader's own (here: messages of the catalog)."""
    from grader.checks import all_checks

    check = next(c for c in all_checks() if c.exercise == "sinusoidal_table" and c.public)
    own = "the same mistake as above"  # a message of the catalog, said by the learner
    raised = messages.msg("raised {error}", error=messages.verbatim(f"ValueError: {own}"))
    verdicts = [Verdict(check, Status.FAILED, raised),
                Verdict(check, Status.FAILED, messages.msg("raised {error}", error=messages.verbatim(check.name)))]
    graded = Grade("Notes:", verdicts, [messages.verbatim(own), messages.verbatim(check.name)], 1.0)
    report = text_report(graded, "zh_CN")
    say = phrasebook("zh_CN")
    assert say("Grading {submission}", submission="Notes:") in report.split("\n")
    assert f"  - {own}" in report.split("\n") and f"  - {check.name}" in report.split("\n")
    chinese = _catalog(i18n_build.RUNTIME_STEM)["raised {error}"].string
    assert chinese.replace("{error}", f"ValueError: {own}") in report
    assert chinese.replace("{error}", check.name) in report
    assert say(own) != own and say(own) not in report
    # an exception's message with the grader's separators in it (" (", ")", ": ") is inserted exactly as raised
    hint = messages.msg(check.hint or "the same mistake as above", context=check.key)
    for error in ["ValueError: d_model must be even (got 5)", "RuntimeError: shape mismatch (3, 4)"]:
        feedback = messages.msg("{problem}. Hint: {hint}", hint=hint,
                                problem=messages.msg("raised {error}", error=messages.verbatim(error)))
        assert error in say.render(feedback)


def test_english_is_the_identity_and_an_unknown_language_answers_in_english():
    graded = Grade("x", [], ["a note"], 0.5)
    assert text_report(graded) == text_report(graded, "en") == text_report(graded, "fr")
    say = Say("en")
    assert say.render(messages.verbatim("raised anything at all")) == "raised anything at all"
    assert say("Total: {score} / {top}   ({seconds} s)", score="1", top="2", seconds="0.5") == "Total: 1 / 2   (0.5 s)"


def test_every_grader_message_is_in_the_catalog_and_translated():
    catalog = i18n_build.words(i18n_build.GRADER_STEM)  # grader.po, and the chapters' catalogs' declared words
    problems = i18n_build.problems({}, runtime=True)
    assert problems == []
    entries = {entry for entry, _ in i18n_grader.messages()}
    # every line of the report, of Gradescope's output, of the batch's and nbgrader's feedback
    for line in ["Grading {submission}", "Total: {score} / {top}   ({seconds} s)", "Feedback for {name}",
                 "✗ {name}: {feedback}", "Assignment {name}: {title}", "    {mark} {name}: {feedback}"]:
        assert ("", line) in entries
    for context, msgid in entries:
        message = catalog.get(msgid, context=context or None)
        assert message is not None and message.string and not message.fuzzy, msgid
    compiled = json.loads((ROOT / "grader" / "data" / "i18n_zh_CN.json").read_text())
    assert compiled == json.loads(i18n_grader.compile_catalog(catalog))


def test_a_new_grader_message_stops_the_build_until_translated(monkeypatch):
    new = "Nothing graded yet: {reason}"
    monkeypatch.setattr(i18n_grader, "messages", lambda: [(("", new), "grader/report.py")])
    problems = [p for p in i18n_build.problems({}, runtime=True) if p[0].stem == i18n_build.GRADER_STEM]
    assert (i18n_build.catalog_path("grader"), new, "not in the catalog: run `python -m grader i18n --update`") \
        in problems


def test_hidden_checks_words_stay_with_the_grader():
    """grader.po holds the names of checks that are not public; the self-check's table (shipped) does not."""
    from grader.checks import all_checks

    shipped = json.loads((ROOT / "posenc_selfcheck" / "data" / "i18n_zh_CN.json").read_text())["messages"]
    secret = [messages.key(check_name(c)) for c in all_checks() if not c.public]
    assert secret and not any(name in shipped for name in secret)
    assert not any(c.name in shipped for c in all_checks()
                   if not c.public and c.name not in {p.name for p in all_checks() if p.public})
    grader_table = json.loads((ROOT / "grader" / "data" / "i18n_zh_CN.json").read_text())["messages"]
    assert all(name in grader_table for name in secret)
    # their translations sit in the chapters' catalogs beside the public checks', and are compiled for the grader only
    from grader import course
    from grader.checks import chapter_of

    catalogs = {}  # stem: its catalog, read once (reading one is a second or two)
    for check in (c for c in all_checks() if not c.public):
        stem = course.chapter(chapter_of()[check.exercise]).stem
        if stem not in catalogs:
            catalogs[stem] = _catalog(stem)
        chapter = catalogs[stem]
        assert chapter.get(check.name, context=check.key).string, check.key
    shipped_table = json.loads(i18n_runtime.compile_catalog(i18n_build.words(i18n_build.RUNTIME_STEM)))["messages"]
    assert not any(name in shipped_table for name in secret)


def test_glossary_terms_are_used_in_the_graders_words():
    terms = [line.split("\t") for line in GLOSSARY.read_text().splitlines() if line and not line.startswith("#")]
    misses = []
    for message in i18n_build.words(i18n_build.GRADER_STEM):
        if not message.id:
            continue
        # a plural message: its forms, in both languages, read as one text
        ids, strings = (value if isinstance(value, tuple) else (value,) for value in (message.id, message.string))
        prose, string = re.sub(r"`[^`]*`|\{\w+\}", " ", " ".join(ids)), " ".join(strings)
        for english, chinese, *_ in terms:  # (a third column: words no translation uses, tests/test_i18n.py)
            if re.search(rf"\b{re.escape(english)}(?![_\w]*_)", prose, re.I):
                if not any(c in string for c in chinese.split("|")) and english.lower() not in string.lower():
                    misses.append(f"{english!r} -> {chinese!r}: {string[:70]}")
    assert misses == [], "\n".join(misses)


def test_the_language_is_chosen_at_the_graders_edge(monkeypatch, tmp_path):
    import zipfile

    from grader import cli, gradescope
    from grader.settings import Settings

    args = cli.parser().parse_args(["grade", "x.py", "--lang", "zh_CN"])
    assert cli._settings(args).language == "zh_CN"
    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    assert cli._settings(cli.parser().parse_args(["grade", "x.py"])).language == "zh_CN"
    assert cli._settings(cli.parser().parse_args(["grade", "x.py", "--lang", "en"])).language == "en"
    monkeypatch.delenv("POSENC_LANG")
    assert cli._settings(cli.parser().parse_args(["grade", "x.py"])).language == "en"
    assert Settings.from_json(Settings(language="zh_CN").to_json()).language == "zh_CN"  # reaches batch workers
    gradescope.build_zip(tmp_path / "a.zip", language="zh_CN", secret_file=str(tmp_path / "secret"))  # (created)
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert json.loads(zf.read("gradescope.json"))["language"] == "zh_CN"
        assert "grader/data/i18n_zh_CN.json" in zf.namelist()


def test_nbgrader_and_batch_feedback_in_chinese(swapped):
    from grader.nbgrader_cell import per_exercise

    assignment, graded = swapped
    checks = [{"key": v.check.key, "exercise": v.check.exercise, "status": str(v.status), "score": v.score,
               "name": v.check.name, "message": messages.to_json(v.feedback)} for v in graded.verdicts]
    english, chinese = per_exercise(assignment, checks), per_exercise(assignment, checks, "zh_CN")
    for exercise in english:
        assert chinese[exercise]["score"] == english[exercise]["score"]
        e, z = english[exercise]["feedback"].split("\n"), chinese[exercise]["feedback"].split("\n")
        assert len(e) == len(z)
        for a, b in zip(e, z):
            assert sorted(NUMBER.findall(a)) == sorted(NUMBER.findall(b)) and (not a or CJK.search(b))


def test_a_long_crafted_message_costs_nothing_to_render_and_stays_as_it_is():
    """A submission's exception message is a verbatim parameter: no parser reads it, whatever it holds (it once
    cost 7.5 s to read 9000 characters of ". Hint: " against the templates)."""
    import time

    say = phrasebook("zh_CN")
    for text in ["x. Hint: " * 1000, "a: " * 700 + ". Hint: " * 50]:
        best = float("inf")
        for _ in range(3):  # the best of three: a busy machine's pause is not the renderer's cost
            start = time.perf_counter()
            rendered = say.render(messages.msg("raised {error}", error=messages.verbatim(text)))
            best = min(best, time.perf_counter() - start)
        assert rendered.endswith(text) and best < 0.05, best
