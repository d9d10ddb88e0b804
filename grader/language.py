"""The grader's words in the language chosen at its edge: the instructor's report and the learner's feedback.

The language is `Settings.language` ("en" by default): `--lang zh_CN` on the command line, else
`POSENC_LANG` (`from_env` below, which the command line and nbgrader's test cells call), or `"language"` in a
Gradescope bundle's gradescope.json (`python -m grader gradescope OUT.zip --lang zh_CN`). Everything below
receives a `Say`:

    say = phrasebook(settings.language)
    say("Total: {score} / {top}", score="11", top="34")   # a line of the grader's own: a message, rendered
    say.render(verdict.feedback)                            # a message composed elsewhere: a verdict's feedback

Every word is a message (posenc_selfcheck/messages.py): an id, its English template, with named parameters, looked
up in the gettext catalogs' compiled tables: the self-check's (runtime.po and the public declarations' words in the
chapters' zh_CN.po, compiled into posenc_selfcheck/data/i18n_<language>.json) and the grader's own (grader.po: its
templates; the chapters' catalogs: the names, hints and mistakes of checks that are not public; compiled into
grader/data/i18n_<language>.json, which never ships to learners). Nothing is parsed back from English: what a
submission produced (an exception's message, a value it returned) is a verbatim parameter, inserted as it is. Check
ids, numbers and code spans are the same in every language.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .records import messages

DATA = Path(__file__).resolve().parent / "data"
ENV = "POSENC_LANG"
ENGLISH = "en"


def available():
    """The languages the grader can answer in: English and every compiled catalog."""
    return (ENGLISH, *sorted(p.stem[len("i18n_"):] for p in DATA.glob("i18n_*.json")))


def from_env(env=None):
    """POSENC_LANG, or None (the Settings' default then holds)."""
    env = os.environ if env is None else env
    return env.get(ENV) or None


def check_name(check):
    """A check's name as a message: its context is the check's key."""
    return messages.msg(check.name, context=check.key)


class Say:
    """The grader's words in one language; the English templates in English."""

    def __init__(self, language=ENGLISH):
        self.language = language or ENGLISH
        self.catalog = _catalog(self.language)

    def __call__(self, template, **values):
        """A line (or part) of the grader's own: the message `template` with `values`."""
        return self.render(messages.msg(template, **values))

    def render(self, message):
        """A message (or plain text: a note, a file name, as it is) in the language."""
        return self.catalog.render(message)


@lru_cache(maxsize=None)
def _catalog(language):
    """The self-check's and the grader's compiled catalogs of `language`, merged; English without one."""
    if language.split("_")[0] == ENGLISH:
        return messages.Catalog()
    return messages.read_catalog(messages.DATA / f"i18n_{language}.json", DATA / f"i18n_{language}.json")


def phrasebook(language=ENGLISH):
    return Say(language)
