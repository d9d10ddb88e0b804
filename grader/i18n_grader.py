"""The grader's own learner-visible words, extracted mechanically for the translation catalog grader.po.

Three kinds of message, collected from what exists (nothing is marked by hand):
- lines: every template the report code passes to `say(...)` (grader/language.py) in SAY_MODULES: the text
  report, Gradescope's results.json, the batch's feedback files, nbgrader's feedback;
- feedback: every f-string (and literal) that FEEDBACK_MODULES put in a Verdict, return or keep as a
  sentence-long UPPER_CASE constant, read as grader/i18n_runtime.py reads the self-check's code (`{expression}`
  a named placeholder); `say.text` matches a verdict's feedback against them;
- data: the names, hints and known-mistake messages of every check (the hidden and main checks too).
Whatever runtime.po already holds (the self-check's words) is not repeated here.

grader.po lives beside runtime.po (locale/<language>/LC_MESSAGES/); `python -m grader i18n --update`
extracts it with the rest, and `python -m grader build` compiles it into grader/data/i18n_<language>.json,
which only the grader reads (the release leaves grader/ out: hidden checks' names never reach a learner).
"""

from __future__ import annotations

import ast
import json
import re

from .i18n_runtime import PLACEHOLDER, ROOT, _shown, _variants
from .i18n_runtime import messages as runtime_messages

GRADER = ROOT / "grader"
SAY_MODULES = ["report.py", "assignment.py", "gradescope.py", "batch/worker.py", "nbgrader_cell.py"]
FEEDBACK_MODULES = ["grading.py", "batch/worker.py", "submission.py"]
# calls whose string arguments become a verdict's feedback (a refused submission's reason: SubmissionError)
FEEDBACK_CALLS = ("Verdict", "refused", "SubmissionError")
_WORD = re.compile(r"[A-Za-z]{3,}")  # a feedback template needs a word of its own ("{where}: {what}" is no template)


def say_templates():
    """{template: module} of every literal passed to `say(...)`, in source order."""
    found = {}
    for module in SAY_MODULES:
        tree = ast.parse((GRADER / module).read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "say"]
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
                found.setdefault(call.args[0].value, f"grader/{module}")
    return found


def feedback_templates():
    """{template: module} of the feedback the grader composes itself, in source order."""
    found = {}
    for module in FEEDBACK_MODULES:
        tree = ast.parse((GRADER / module).read_text())
        for node in tree.body:  # GATE = ("counts once {exercise} answers ..."): a str.format template as it is
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str) and " " in node.value.value \
                    and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
                found.setdefault(node.value.value, f"grader/{module}")
        constants = {id(v) for n in tree.body if isinstance(n, ast.Assign)
                     for v in [n.value, *getattr(n.value, "elts", [])]}
        for node in _shown(tree, FEEDBACK_CALLS):
            if id(node) in constants:  # taken as they are above
                continue
            for template in _variants(node, set()):
                if _WORD.search(PLACEHOLDER.sub("", template)):
                    found.setdefault(template, f"grader/{module}")
    return found


def data_messages():
    """{message: where} of every check's name, hint and known mistakes (and the candidates a property test is
    asked about)."""
    from .checks import all_checks, mistakes

    found = {}
    for check in all_checks():
        about = (check.property_params or {}).get("about") or {}
        if about.get("draw") == "pairs":  # a main check's: [(drawn name, description), ...]
            about = dict((str(k), v) for k, v in about["items"])
        about = [t for t in about.values() if isinstance(t, str)]
        for text in [check.name, check.hint, *(mistakes()[m].message for m in check.mistakes), *about]:
            if text:
                found.setdefault(text, f"grader/checks/{check.exercise}")
    return found


def messages(shown=None):
    """[(msgid, where)] of grader.po: the lines, the feedback, then the data, less what runtime.po holds
    (`shown`: the self-check data runtime.po is extracted from, grader/i18n_runtime.py)."""
    runtime = {m for m, _ in runtime_messages(shown)}
    found = {**say_templates()}
    for source in (feedback_templates(), data_messages()):
        for message, where in source.items():
            found.setdefault(message, where)
    return [(m, w) for m, w in found.items() if m not in runtime]


def compile_catalog(catalog):
    """The JSON grader/language.py reads: {"messages": {english: translation}, "templates": [the feedback
    templates, tried against a verdict's feedback]} ("line_templates" empty: the grader's lines are `say`'s)."""
    table = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}
    templates = [t for t in feedback_templates() if t in table and PLACEHOLDER.search(t)]
    return json.dumps({"language": str(catalog.locale), "messages": table, "line_templates": [],
                       "templates": templates}, ensure_ascii=False, indent=0, sort_keys=True) + "\n"
