"""Every word a learner reads is a message: an id (its English template) with named parameters, rendered once, in
the reader's language, where it is shown. Nothing is parsed back from English (as gettext users write it).

    msg("{exercise}: {failed} of {n} checks failed", exercise=name, failed=2, n=8)
    nmsg("{exercise}: the one check passed", "{exercise}: all {n} checks passed", n=n, exercise=name)
    msg("raised {error}", error=verbatim(text))       # what the learner's code said: inserted untouched

A template's placeholders are named by its author (never after the code's expressions, so renaming a variable
changes no translation key) and may carry a format spec (`{err:.3g}`). A parameter is a number, a string (code,
an identifier, a shape: the same in every language), another message (rendered in the same language), a
`Joined` run of them, or `verbatim` text, which is inserted as it is. `context` is gettext's msgctxt: the same
English declared in two places (two checks' names) is two entries, translated apart if need be.

`render(message, lang)` looks the id up in the compiled catalog data/i18n_<lang>.json (written by `python -m grader
build` from locale/<lang>/LC_MESSAGES/runtime.po and the chapters' catalogs) and fills it; an id without a
translation renders its English template. Standard library only: it ships to learners, and the grader reads it too.
"""

from __future__ import annotations

import gettext
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).parent / "data"
ENGLISH = "en"


@dataclass(frozen=True)
class Message:
    """One message: `id` the English template (its plural form `plural`, chosen by the parameter `n`), `params`
    ((name, value), ...) sorted by name, `context` gettext's msgctxt."""

    id: str
    params: tuple = ()
    context: str = ""
    plural: str = ""

    @property
    def values(self):
        return dict(self.params)

    def __str__(self):
        """Its English (a log line, a test's reading); a learner reads `render(message, lang)`."""
        return render(self, ENGLISH)

    def leads_with(self, other):
        """Whether this message says `other` first: it is `other`, or its template opens with a placeholder that
        holds a message leading with `other` ("{mistake} ({problem})" leads with its mistake)."""
        if self == other:
            return True
        head = self.id.split("}", 1)[0][1:] if self.id.startswith("{") else None
        value = self.values.get(head.split(":")[0]) if head else None
        return isinstance(value, (Message, Joined)) and value.leads_with(other)


@dataclass(frozen=True)
class Verbatim:
    """Text the learner's code produced (an exception's message, a value, a note): shown exactly as it is."""

    text: str

    def __str__(self):
        return self.text


@dataclass(frozen=True)
class Joined:
    """Parts shown one after the other, `sep` (text, or a message: " and ") between them."""

    parts: tuple
    sep: object = "; "

    def __str__(self):
        return render(self, ENGLISH)

    def leads_with(self, other):
        return bool(self.parts) and isinstance(self.parts[0], (Message, Joined)) and self.parts[0].leads_with(other)


def msg(template, context="", **params):
    """A message whose id is `template` (a literal, so that the catalog's extraction finds it)."""
    return Message(template, tuple(sorted(params.items())), context)


def nmsg(singular, plural, n, context="", **params):
    """A message with a plural form (ngettext): `n` chooses the form and fills `{n}`."""
    return Message(singular, tuple(sorted({**params, "n": n}.items())), context, plural)


def verbatim(text):
    return Verbatim(str(text))


def joined(parts, sep="; "):
    return Joined(tuple(parts), sep)


# ---- rendering -------------------------------------------------------------------------------------------------
def key(message):
    """The catalog's key of a message: gettext's `context \\x04 id`, the id alone without a context."""
    return f"{message.context}\x04{message.id}" if message.context else message.id


def _english_form(n):
    # English: n == 1 takes the singular, every other n the plural
    return 0 if n == 1 else 1


class Catalog:
    """The translations of one language: {key: template, or [its plural forms]} and the rule that picks a form."""

    def __init__(self, table=None, plural_forms=""):
        self.table = table or {}
        expression = plural_forms.split("plural=", 1)[1].rstrip("; ") if "plural=" in plural_forms else ""
        self.form = gettext.c2py(expression) if expression else _english_form

    def template(self, message):
        """The template in this language: the translation, else the English id (or its plural)."""
        n = message.values.get("n") if message.plural else None
        found = self.table.get(key(message))
        if isinstance(found, list) and found:
            return found[min(self.form(int(n)), len(found) - 1)]
        if isinstance(found, str) and found:
            return found
        return message.plural if message.plural and _english_form(int(n)) else message.id

    def render(self, part, mark=None):
        """A message (or a part of one) as text. `mark`, when given, is applied to every verbatim text (a test
        sets what the learner's code said apart with it)."""
        if isinstance(part, Verbatim):
            return mark(part.text) if mark else part.text
        if isinstance(part, Joined):
            return self.render(part.sep, mark).join(self.render(p, mark) for p in part.parts)
        if not isinstance(part, Message):
            return part if isinstance(part, str) else str(part)
        values = {name: self.render(v, mark) if isinstance(v, (Message, Verbatim, Joined)) else v
                  for name, v in part.params}
        try:
            return self.template(part).format_map(values)
        except (KeyError, ValueError, IndexError):  # a broken translation: the English still says it
            english = part.plural if part.plural and _english_form(int(values.get("n", 1))) else part.id
            try:
                return english.format_map(values)
            except (KeyError, ValueError, IndexError):  # parameters of another kind (a forged message): as it is
                return english


def read_catalog(*paths):
    """A Catalog of compiled catalogs (data/i18n_<lang>.json), merged in order; none found: English."""
    table, plural_forms = {}, ""
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        table.update(data.get("messages", {}))
        plural_forms = data.get("plural_forms", plural_forms)
    return Catalog(table, plural_forms)


@lru_cache(maxsize=None)
def catalog(lang):
    """The self-check's catalog of `lang` ("en", "zh_CN", ...)."""
    if lang.split("_")[0] == ENGLISH:
        return Catalog()
    return read_catalog(DATA / f"i18n_{lang}.json")


def render(message, lang=None, mark=None):
    """A message in `lang` (default: the notebook's language, posenc_selfcheck.i18n.language())."""
    if lang is None:
        from .i18n import language

        lang = language()
    return catalog(lang).render(message, mark)


def render_lines(lines, lang=None):
    """A report: its lines (messages) rendered and joined."""
    return "\n".join(render(line, lang) for line in lines)


def mapped(part, fn):
    """The message with `fn` applied to every text it carries (verbatim or plain): the grader takes its own folders
    out of what a submission's exceptions said."""
    if isinstance(part, Verbatim):
        return Verbatim(fn(part.text))
    if isinstance(part, Joined):
        return Joined(tuple(mapped(p, fn) for p in part.parts), mapped(part.sep, fn))
    if isinstance(part, Message):
        return Message(part.id, tuple((name, mapped(v, fn)) for name, v in part.params), part.context, part.plural)
    return fn(part) if isinstance(part, str) else part


# ---- JSON: a message where it crosses a process (the grader's Grade) -------------------------------------------
def to_json(part):
    """A JSON-ready form of a message or any of its parameters."""
    if isinstance(part, Verbatim):
        return {"verbatim": part.text}
    if isinstance(part, Joined):
        return {"joined": [to_json(p) for p in part.parts], "sep": to_json(part.sep)}
    if isinstance(part, Message):
        return {"id": part.id, "context": part.context, "plural": part.plural,
                "params": {name: to_json(v) for name, v in part.params}}
    if isinstance(part, (str, int, float)) or part is None:
        return part
    return str(part)


def from_json(data):
    """The message `to_json` gave; ValueError for anything else."""
    if isinstance(data, (str, int, float)) or data is None:
        return data
    if isinstance(data, dict) and set(data) == {"verbatim"} and isinstance(data["verbatim"], str):
        return Verbatim(data["verbatim"])
    if isinstance(data, dict) and set(data) == {"joined", "sep"} and isinstance(data["joined"], list):
        return Joined(tuple(from_json(p) for p in data["joined"]), from_json(data["sep"]))
    if isinstance(data, dict) and set(data) == {"id", "context", "plural", "params"} \
            and all(isinstance(data[k], str) for k in ("id", "context", "plural")) and isinstance(data["params"], dict):
        params = tuple(sorted((str(k), from_json(v)) for k, v in data["params"].items()))
        return Message(data["id"], params, data["context"], data["plural"])
    raise ValueError(f"not a message: {str(data)[:80]!r}")


# ---- a message a sandbox child sent: data the learner's code can forge ----------------------------------------
def dumps(part):
    """A message as one JSON string: how a probe's problem or note crosses from the sandbox child (a result holds
    strings, never nested objects)."""
    return json.dumps(to_json(part), ensure_ascii=True)


@lru_cache(maxsize=None)
def known_ids():
    """The ids (templates) of the self-check's messages: the keys of its compiled catalogs, whatever the language."""
    ids = set()
    for path in DATA.glob("i18n_*.json"):
        ids |= set(read_catalog(path).table)
    return frozenset(ids)


def from_child(text, known=None):
    """What a child said (a probe's problem or note), decoded strictly: a message of `known` ids (default:
    known_ids()) without context or plural, every parameter of it the child's text (verbatim) or a number, nested
    messages decoded by the same rule. Anything else (plain text, a forged or unknown id, a malformed message) is
    the child's text, shown verbatim as it came: a forged template is never filled and never looked up."""
    known = known_ids() if known is None else known
    try:
        return _from_child(json.loads(text), known)
    except (ValueError, TypeError, RecursionError):
        return Verbatim(str(text))


def _from_child(data, known):
    if isinstance(data, str):
        return Verbatim(data)
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return data
    if isinstance(data, dict) and set(data) == {"verbatim"} and isinstance(data["verbatim"], str):
        return Verbatim(data["verbatim"])
    if isinstance(data, dict) and set(data) == {"joined", "sep"} and isinstance(data["joined"], list):
        return Joined(tuple(_from_child(p, known) for p in data["joined"]), _from_child(data["sep"], known))
    if isinstance(data, dict) and set(data) == {"id", "context", "plural", "params"} and data["id"] in known \
            and data["context"] == data["plural"] == "" and isinstance(data["params"], dict):
        return Message(data["id"], tuple(sorted((str(k), _from_child(v, known)) for k, v in data["params"].items())))
    raise ValueError("not a known message")
