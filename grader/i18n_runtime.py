"""The messages the self-check can show, collected for the translation catalog runtime.po, without reading any
English back: every message is data (posenc_selfcheck/messages.py), an id with named parameters.

Two sources, one catalog entry per (context, id):
- the code: every call of a message constructor (`msg`, `nmsg`, and the grader's `say`) whose template is a
  literal, found by reading the modules' syntax trees (CONSTRUCTORS); a template's placeholders are the names
  its author wrote, so renaming a variable in the code changes no entry;
- the declarations (course/NN_name/exercises.py): each public check's name and hint (context: the check's key), the
  message of each mistake a public check names (context: the mistake's name), the description of each
  candidate a public property test is asked about and of each tensor size a public memory check names
  (`known_sizes`), and every ladder of hints (context: the exercise or the
  mistake whose ladder it is).

The code's entries live in locale/zh_CN/LC_MESSAGES/runtime.po, a declaration's in its chapter's catalog,
course/NN_name/zh_CN.po (`home`), so adding an exercise touches no shared catalog; the build compiles them together
(grader/i18n_build.py) to posenc_selfcheck/data/i18n_zh_CN.json, which the learner's kernel reads (no gettext or
Babel needed there).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "posenc_selfcheck"
CONSTRUCTORS = {"msg": 1, "say": 1, "nmsg": 2}  # name: how many literal templates open its arguments


def _literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def code_messages(folder, skip=(), root=ROOT, paths=()):
    """{(context, id): where} of every message a package's code constructs with literal templates (an id is a
    (singular, plural) pair for `nmsg`), in source order, then of the modules `paths`; `where` is the module (never
    a line: inserting code changes no entry), relative to `root`."""
    found = {}
    for path in [*sorted(folder.rglob("*.py")), *paths]:
        if path.parent == folder and path.name in skip:
            continue
        for entry in _constructed(path.read_text(encoding="utf-8")):
            found.setdefault(entry, str(path.relative_to(root)))
    return found


_CONSTRUCTED = {}  # {a module's text: its entries}: one build reads the same modules for several catalogs


def _constructed(text):
    """[(context, id)] of the message constructors called with literal templates in a module's text, in source
    order."""
    if text not in _CONSTRUCTED:
        calls = [node for node in ast.walk(ast.parse(text))
                 if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
                 in CONSTRUCTORS]
        entries = []
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            arity = CONSTRUCTORS[getattr(call.func, "id", getattr(call.func, "attr", None))]
            templates = [_literal(a) for a in call.args[:arity]]
            if len(templates) < arity or None in templates:
                continue  # a message built from data: collected from the declarations
            context = next((_literal(k.value) for k in call.keywords if k.arg == "context"), "") or ""
            entries.append((context, templates[0] if arity == 1 else tuple(templates)))
        _CONSTRUCTED[text] = entries
    return _CONSTRUCTED[text]


def _about(check):
    """The descriptions of the candidates a property test is asked about (a main check's drawn pairs too)."""
    about = (check.property_params or {}).get("about") or {}
    if about.get("draw") == "pairs":  # a main check's: [(drawn name, description), ...]
        about = dict((str(k), v) for k, v in about["items"])
    return [t for t in about.values() if isinstance(t, str)]


def _known_sizes(check):
    """What each tensor size a memory check names is (its `known_sizes`: the probe says it of a buffer too large)."""
    return [what for _, _, what in (check.params or {}).get("known_sizes", ())]


def _declared(exercise):
    """A catalog reference: the exercise in its chapter's declaration, course/NN_name/exercises.py#exercise."""
    from . import course
    from .checks import chapter_of

    return f"{course.chapter(chapter_of()[exercise]).relative('exercises')}#{exercise}"


DECLARED = re.compile(r"course/(\d\d_[^/]+)/exercises\.py#")  # a reference `_declared` writes


def home(where):
    """The chapter whose catalog holds an entry (its stem, '05_long_context'): the chapter that declares it, by its
    reference (course/NN_name/exercises.py#exercise); None for the code's words, which the shared catalogs hold."""
    declared = DECLARED.match(where)
    return declared.group(1) if declared else None


def check_messages(checks):
    """{(context, id): where} of some checks' names, hints, named mistakes and candidates' descriptions."""
    from .checks import mistakes

    known, found = mistakes(), {}
    for check in checks:
        where = _declared(check.exercise)
        for context, text in [(check.key, check.name), (check.key, check.hint),
                              *((name, known[name].message) for name in check.mistakes),
                              *(("", about) for about in _about(check)),
                              *(("", what) for what in _known_sizes(check))]:
            if text:
                found.setdefault((context, text), where)
    return found


def ladder_messages():
    """{(context, id): where} of every ladder of hints: each exercise's and each known mistake's."""
    from .checks import hints, mistakes

    found = {}
    for exercise, levels in hints().items():
        for level in levels:
            found.setdefault((exercise, level), _declared(exercise))
    for name, mistake in mistakes().items():
        for level in mistake.hints:
            found.setdefault((name, level), _declared(mistake.exercise))
    return found


def messages():
    """[((context, id), where)] of runtime.po: the code's messages, then the public declarations'."""
    from . import selfcheck_code
    from .checks import all_checks

    # the package's hand-edited modules, then the chapters' probes and properties it ships (read in their folders)
    shipped = selfcheck_code.planned()
    found = code_messages(PACKAGE, skip={selfcheck_code.path(name).name for name in shipped},
                          paths=selfcheck_code.sources())
    for source in (check_messages(c for c in all_checks() if c.public), ladder_messages()):
        for entry, where in source.items():
            found.setdefault(entry, where)
    return list(found.items())


def key(context, msgid):
    """The compiled table's key (posenc_selfcheck.messages.key): `context \\x04 id`, the id's singular."""
    singular = msgid[0] if isinstance(msgid, tuple) else msgid
    return f"{context}\x04{singular}" if context else singular


def compiled(catalog, entries):
    """The JSON that posenc_selfcheck.messages reads: {"language", "plural_forms", "messages": {key: translation,
    or [its plural forms]}} of the catalog's translated entries among `entries` ((context, id) pairs)."""
    table = {}
    for context, msgid in entries:
        message = catalog.get(msgid, context=context or None)
        if message is None or message.fuzzy or not message.string or not all(message.string):
            continue
        table[key(context, msgid)] = list(message.string) if isinstance(message.string, tuple) else message.string
    return json.dumps({"language": str(catalog.locale), "plural_forms": catalog.plural_forms, "messages": table},
                      ensure_ascii=False, indent=0, sort_keys=True) + "\n"


def compile_catalog(catalog):
    """posenc_selfcheck/data/i18n_<language>.json from the self-check's words (i18n_build.words: runtime.po and the
    chapters' catalogs)."""
    return compiled(catalog, [entry for entry, _ in messages()])
