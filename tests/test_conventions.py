"""docs/conventions.md lists exactly the grader's exercises, with the reference's signatures; the docs
point at nothing outside the repository."""

from __future__ import annotations

import inspect
import re

import posenc_ref
from grader.checks import all_checks
from tests.conftest import ROOT

DOC = ROOT / "docs" / "conventions.md"


def rows():
    """{name: signature column} of the exercise tables."""
    out = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\| `(\w+)` \| (.+?) \| .+ \|$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def signature(obj):
    """How the tables write it: `(args)` for a function; `Name(args)`, `forward(args)` for a module."""
    if inspect.isclass(obj):
        init = list(inspect.signature(obj.__init__).parameters.values())[1:]
        forward = list(inspect.signature(obj.forward).parameters.values())[1:]
        return (f"`{obj.__name__}({', '.join(map(str, init))})`, "
                f"`forward({', '.join(map(str, forward))})`")
    return f"`{inspect.signature(obj)}`"


def test_the_tables_list_every_exercise_the_grader_checks_and_nothing_else():
    assert set(rows()) == {c.exercise for c in all_checks()}


def test_the_signatures_are_the_references():
    for name, written in rows().items():
        assert written == signature(getattr(posenc_ref, name)), name


def test_the_docs_point_at_nothing_outside_the_repository():
    from grader.release import README

    texts = {p.relative_to(ROOT): p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    texts["the release's README"] = README
    for name, text in texts.items():
        assert not re.search(r"\.\./shared|/work/|(?<![\w/])shared/", text), name
        for target in re.findall(r"\]\(([^)#]+)\)", text):  # relative Markdown links resolve inside the repo
            if not re.match(r"\w+://", target) and isinstance(name, type(DOC.relative_to(ROOT))):
                path = (ROOT / name).parent / target
                assert path.resolve().is_relative_to(ROOT) and path.exists(), (name, target)
