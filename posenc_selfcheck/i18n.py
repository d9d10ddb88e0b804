"""The self-check's words in the notebook's language.

The language: `POSENC_LANG` (e.g. `zh_CN`), else the `posenc.language` of the running notebook's metadata
(JupyterLab tells its kernels the notebook's path in `JPY_SESSION_NAME`; the Chinese notebooks in
notebooks/zh/ say `zh_CN`), else English. The translations: data/i18n_<language>.json, compiled by
`python -m grader build` from the gettext catalog locale/<language>/LC_MESSAGES/runtime.po, whose messages
are the report's templates and the checks' names, hints and diagnoses (grader/i18n_runtime.py).

`localize(text)` translates a report line by line: a line that is a whole message is replaced by its
translation; otherwise the first template that matches it (the most specific first) is filled with the
translations of the pieces it captured. Anything without a translation stays as it is.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).parent / "data"
ENV = "POSENC_LANG"
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
# a placeholder's value has balanced brackets: "(15, 0)" stays in one piece, and so do a hint's code, three
# parentheses deep (`torch.cat((torch.arange(0, d, 2), ...))`), its indexing, two brackets deep (x[perm[i]]),
# and a half-open interval, [0, max_len)
_PARENS = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_VALUE = r"(?:[^()\[\]]|" + _PARENS + r"|\[(?:[^\[\]]|\[[^\[\]]*\])*\]|\[[^\[\]()]*\))+?"


def language():
    """The language to answer in: "en", "zh_CN", ..."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        # the path is relative to the server's root; the kernel runs in the notebook's folder
        for path in (Path(session), Path(Path(session).name)):
            try:
                return json.loads(path.read_text(encoding="utf-8"))["metadata"]["posenc"]["language"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return "en"


def _compile(english, translated):
    english, translated = english.lstrip(" "), translated.lstrip(" ")  # a line's indent is kept apart
    pattern = "".join(f"(?P<{part}>{_VALUE})" if i % 2 else re.escape(part.replace("{{", "{").replace("}}", "}"))
                      for i, part in enumerate(_PLACEHOLDER.split(english)))
    return len(_PLACEHOLDER.sub("", english)), re.compile(pattern, re.S), _PLACEHOLDER.findall(english), translated


def load(*payloads):
    """(whole messages {english: translation}, line templates, part templates) of compiled catalogs (their JSON,
    merged in order), each template a (regex, placeholder names, translation), in the order to try them."""
    messages, line_templates, templates = {}, [], []
    for table in payloads:
        messages.update(table["messages"])
        line_templates += table.get("line_templates", [])
        templates += table.get("templates", [])
    plain = {k.replace("{{", "{").replace("}}", "}").lstrip(" "): v.replace("{{", "{").replace("}}", "}").lstrip(" ")
             for k, v in messages.items() if not _PLACEHOLDER.search(k)}
    # the most specific (the most literal text) first
    lines = [c[1:] for c in sorted((_compile(t, messages[t]) for t in dict.fromkeys(line_templates)),
                                   key=lambda c: -c[0])]
    parts = [c[1:] for c in sorted((_compile(t, messages[t]) for t in dict.fromkeys(templates)),
                                   key=lambda c: -c[0])]
    return plain, lines, parts


@lru_cache(maxsize=None)
def _table(lang):
    """The self-check's translations (data/i18n_<lang>.json), as `load` returns them."""
    try:
        return load(json.loads((DATA / f"i18n_{lang}.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError):
        return {}, [], []


def translate(text, lang, depth=0):
    """One piece of text: a whole message, a filled template, or itself. A whole report line (depth 0) is
    tried against the report's line templates first, its pieces against the templates of diagnoses."""
    plain, lines, parts = _table(lang)
    if text in plain:
        return plain[text]
    if text.lstrip(" ") in plain:  # a piece that starts with a space: its translation says what precedes it
        return plain[text.lstrip(" ")]
    if depth > 6 or not text.strip():
        return text
    for regex, names, translated in (lines + parts if depth == 0 else parts):
        match = regex.fullmatch(text)
        if match:
            values = {name: translate(match.group(name), lang, depth + 1) for name in names}
            return fill(translated, values)
    return text


def fill(translated, values):
    """A template's translation with its placeholders' values: its own text unescaped ({{ is {), the values as
    they are."""
    pieces = _PLACEHOLDER.split(translated)
    return "".join(values.get(p, "{" + p + "}") if i % 2 else p.replace("{{", "{").replace("}}", "}")
                   for i, p in enumerate(pieces))


def localize(text, lang=None):
    """A report (one or more lines) in the notebook's language."""
    lang = lang or language()
    if lang.split("_")[0] == "en":
        return text
    out = []
    for line in str(text).split("\n"):
        indent = line[:len(line) - len(line.lstrip(" "))]
        out.append(indent + translate(line[len(indent):], lang))
    return "\n".join(out)
