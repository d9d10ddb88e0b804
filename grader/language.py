"""The grader's words in the language chosen at its edge: the instructor's report and the learner's feedback.

The language is `Settings.language` ("en" by default): `--lang zh_CN` on the command line, else
`POSENC_LANG` (`from_env` below, which the command line and nbgrader's test cells call), or `"language"` in a
Gradescope bundle's gradescope.json (`python -m grader gradescope OUT.zip --lang zh_CN`). Everything below
receives a `Say`:

    say = phrasebook(settings.language)
    say("Total: {score} / {top}", score="11", top="34")   # a line of the grader's own, filled
    say.text(verdict.feedback)                              # text composed elsewhere: a check's name, a diagnosis

The translations are the gettext catalogs' (locale/<language>/LC_MESSAGES/): the self-check's words
(runtime.po, compiled into posenc_selfcheck/data/i18n_<language>.json) and the grader's own (grader.po, its
templates and the names, hints and mistakes of checks that are not public, compiled into
grader/data/i18n_<language>.json, which never ships to learners). Both are extracted mechanically
(grader/i18n_runtime.py, grader/i18n_grader.py). `say.text` matches a text against the templates as the
self-check does (posenc_selfcheck/i18n.py); a value that a submission controls (an exception's message, a
value it returned, a note) fills its place as it is, never translated. Check ids, numbers and code spans
are the same in every language.
"""

from __future__ import annotations

import json
import os
import re
import time
from functools import lru_cache
from pathlib import Path

from .settings import BOUNDS, REPORT, WAITS

DATA = Path(__file__).resolve().parent / "data"
ENV = "POSENC_LANG"
ENGLISH = "en"
# what one text may cost: a submission's exception message is part of its feedback, and reading a long, crafted
# one against every template grows faster than its length. Texts longer than a report shows (REPORT.message_chars),
# or not read within WAITS.translate_seconds, stay as they are (in English).


def available():
    """The languages the grader can answer in: English and every compiled catalog."""
    return (ENGLISH, *sorted(p.stem[len("i18n_"):] for p in DATA.glob("i18n_*.json")))


def from_env(env=None):
    """POSENC_LANG, or None (the Settings' default then holds)."""
    env = os.environ if env is None else env
    return env.get(ENV) or None


def verbatim(name):
    """Whether a template's placeholder holds what a submission controls, kept as it is: what the answer
    says (`…got…`: an exception's message, a value), what an exception in judging it says (`…exc…`), what a
    NotImplementedError said (`said`), a returned value (`value`), a name or a file name (`…name…`, and
    whatever the grader escapes as the submission's text: `one_line(…)`, `clean(…)`)."""
    return any(part in name for part in ("got", "exc", "name", "one_line", "clean")) or name in ("said", "value")


class Say:
    """The grader's words in one language; identity in English."""

    def __init__(self, language=ENGLISH):
        self.language = language or ENGLISH
        self.english = self.language.split("_")[0] == ENGLISH
        self.messages, self.table, self.verbatim = ({}, None, ()) if self.english else _tables(self.language)

    def __call__(self, template, **values):
        """A line (or part) of the grader's own: the template's translation filled with `values` as they
        are (the caller translates those that are grader text, with `text`)."""
        return self.messages.get(template, template).format(**values)

    def text(self, text):
        """Grader text composed elsewhere (a check's name or hint, a verdict's feedback) in the language."""
        if self.english or not text or len(text) > REPORT.message_chars:
            return text
        try:
            return _parse(text, self.table, self.verbatim, {}, 0, time.monotonic() + WAITS.translate_seconds)[1]
        except _TooLong:
            return text


class _TooLong(Exception):
    pass


def _parse(text, table, keep, memo, depth, deadline):
    """(cost, translation) of the cheapest reading of `text`: a whole message costs nothing; a reading by a
    template costs TEMPLATE, plus its values' costs: a value kept verbatim a unit per character, a piece of
    grader text left untranslated a unit per character and WORD more per letter. So "n should lie in [1, 8],
    got 0. Hint: h" reads as a problem and a hint (not as a problem whose returned value ends with the hint),
    and "raised ValueError: d must be even (got 5)" or "… (3, 4)" as one exception message (not as a message
    plus a parenthesis the grader would set in Chinese punctuation): a submission's text is read as the
    grader's only where the grader's words explain more of it than a template's separators."""
    if text in memo:
        return memo[text]
    if time.monotonic() > deadline:
        raise _TooLong()
    plain, _, parts = table
    bare = text.lstrip(" ")  # a piece that starts with a space: its translation says what precedes it
    if text in plain or bare in plain:
        best = (0, plain[text] if text in plain else plain[bare])
    else:
        best = (len(text) + WORD * len(_LETTER.findall(text)), text)
    if best[0] and depth <= BOUNDS.translate_depth and text.strip():
        from posenc_selfcheck.i18n import fill

        for regex, names, translated in parts:
            match = regex.fullmatch(text)
            if not match:
                continue
            cost, values = TEMPLATE, {}
            for name in names:
                value = match.group(name)
                if name in keep:
                    cost, values[name] = cost + len(value), value
                else:
                    c, values[name] = _parse(value, table, keep, memo, depth + 1, deadline)
                    cost += c
            if cost < best[0]:
                best = (cost, fill(translated, values))
    memo[text] = best
    return best


TEMPLATE, WORD = 5, 10
_LETTER = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=None)
def _tables(language):
    """({template: translation} of the grader's catalog, the self-check's and the grader's catalogs as
    posenc_selfcheck.i18n.load reads them, the placeholders kept verbatim); a language without a catalog
    answers in English."""
    from posenc_selfcheck import i18n

    payloads = []
    for path in (i18n.DATA / f"i18n_{language}.json", DATA / f"i18n_{language}.json"):
        try:
            payloads.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    # the self-check's whole report lines are not the grader's: only its parts (diagnoses) are used here
    payloads = [{**p, "line_templates": []} for p in payloads]
    table = i18n.load(*payloads) if payloads else ({}, [], [])
    names = frozenset(n for _, placeholders, _ in table[2] for n in placeholders if verbatim(n))
    messages = {k: v for p in payloads for k, v in p["messages"].items()}
    return messages, table, names


def phrasebook(language=ENGLISH):
    return Say(language)
