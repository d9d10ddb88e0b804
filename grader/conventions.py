"""docs/conventions.md's exercise tables, written by `python -m grader build` (`--check` fails when one is stale).

Each chapter's table sits between two markers in the page, `<!-- BEGIN GENERATED chNN ... -->` and
`<!-- END GENERATED chNN -->`; everything outside them is hand-written prose and stays as it is. A table lists the
exercises of `CONVENTIONS` in course/NN_name/exercises.py, in its order: the name, the reference's signature (read with
`inspect` from posenc_ref, which the build has just generated) and the one-line description declared there.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "conventions.md"
BEGIN = "<!-- BEGIN GENERATED {chapter}: `python -m grader build` writes this table from its exercises.py -->"
END = "<!-- END GENERATED {chapter} -->"
REGION = re.compile(r"<!-- BEGIN GENERATED (ch\d\d):[^\n]*-->\n.*?<!-- END GENERATED \1 -->", re.S)


def signature(obj):
    """How the tables write it: `(args)` for a function; `Name(args)`, `forward(args)` for a module."""
    if inspect.isclass(obj):
        init = list(inspect.signature(obj.__init__).parameters.values())[1:]
        forward = list(inspect.signature(obj.forward).parameters.values())[1:]
        return f"`{obj.__name__}({', '.join(map(str, init))})`, `forward({', '.join(map(str, forward))})`"
    return f"`{inspect.signature(obj)}`"


def _cell(text):
    """A Markdown table cell: a `|` would end it."""
    return text.replace("|", "\\|")


def table(chapter, conventions, reference):
    """The marked region of one chapter: markers, header, one row per declared exercise."""
    lines = [BEGIN.format(chapter=chapter), "", "| name | signature | what it computes |", "| --- | --- | --- |"]
    for name, description in conventions.items():
        lines.append(f"| `{name}` | {_cell(signature(getattr(reference, name)))} | {_cell(description)} |")
    return "\n".join(lines + ["", END.format(chapter=chapter)])


def render(text, conventions, reference):
    """`text` with every chapter's region rewritten. A chapter of `conventions` without its region is an error
    (a new chapter's markers go where its heading and prose are: that part is written by hand)."""
    found = [m.group(1) for m in REGION.finditer(text)]
    missing = [chapter for chapter in conventions if chapter not in found]
    if missing:
        raise ValueError(f"docs/conventions.md has no generated region for {', '.join(missing)}: add the lines "
                         + " and ".join(f"'{BEGIN.format(chapter=c)}' ... '{END.format(chapter=c)}'" for c in missing))
    unknown = sorted(set(found) - set(conventions))
    if unknown:
        raise ValueError(f"docs/conventions.md has generated regions for chapters without checks: {unknown}")
    return REGION.sub(lambda m: table(m.group(1), conventions[m.group(1)], reference), text)


def planned(reference):
    """{DOC: text} as the build writes it."""
    from .checks import CONVENTIONS

    return {DOC: render(DOC.read_text(), CONVENTIONS, reference)}
