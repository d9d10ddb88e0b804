"""The grader's own learner-visible messages, collected for the translation catalog grader.po, as
grader/i18n_runtime.py collects the self-check's (nothing parsed back from English):
- the code: every message the grader's modules construct with a literal template (`msg`, and `say(...)`, a line
  of the report rendered at once): the text report, Gradescope's results.json, the batch's and nbgrader's
  feedback, verdicts, notes;
- the declarations: the names, hints and known-mistake messages of the checks that are not public (main checks
  and hidden checks; context: the check's key or the mistake's name), and the chapters' names (the report's
  titles; context: "chapter name").
Whatever runtime.po already holds (the self-check's words) is not repeated here.

grader.po lives beside runtime.po (locale/<language>/LC_MESSAGES/) and holds the code's words; a declaration's
(hidden checks' names among them) are in its chapter's catalog, course/NN_name/zh_CN.po (i18n_runtime.home).
`python -m grader i18n --update` extracts them with the rest, and `python -m grader build` compiles them together
into grader/data/i18n_<language>.json, which only the grader reads (the release leaves grader/ and course/ out:
hidden checks' names never reach a learner).
"""

from __future__ import annotations

from .i18n_runtime import ROOT, check_messages, code_messages, compiled
from .i18n_runtime import messages as runtime_messages

GRADER = ROOT / "grader"
SKIP = ("i18n_runtime.py", "i18n_grader.py")  # they name the constructors, and construct nothing


def messages():
    """[((context, id), where)] of grader.po: the code's messages, then every check's, less what runtime.po holds."""
    from .checks import all_checks
    from .report import CHAPTER_NAME, chapter_names

    runtime = {entry for entry, _ in runtime_messages()}
    found = code_messages(GRADER, SKIP)
    for entry, where in check_messages(all_checks()).items():
        found.setdefault(entry, where)
    for chapter, name in chapter_names().items():  # the report's chapter titles
        found.setdefault((CHAPTER_NAME, name), f"chapters/{chapter[2:]}_{name.replace(' ', '_')}.py")
    return [(entry, where) for entry, where in found.items() if entry not in runtime]


def compile_catalog(catalog):
    """grader/data/i18n_<language>.json from the grader's words (i18n_build.words: grader.po and the chapters'
    catalogs); grader/language.py merges it with the self-check's."""
    return compiled(catalog, [entry for entry, _ in messages()])
