"""Every citation of a paper in book/references.bib links its entry in the book: the book's `cite` (book/build.py)
turns "Vaswani et al. (2017)" and "(Raffel et al., 2020)" into bibliography roles, also where the source breaks the
citation across two lines. Checked on the solution notebooks of both languages, with the citation forms read from
references.bib here (first author's surname, "et al." for three or more authors, "A and B" for two), not with
`cite`'s own table. No Sphinx needed."""

from __future__ import annotations

import importlib.util
import json
import re

from tests.conftest import ROOT

BIB = ROOT / "book" / "references.bib"


def _book():
    spec = importlib.util.spec_from_file_location("book_build_citations", ROOT / "book" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _forms():
    """[(how the text names the paper, year)] of every entry of references.bib with a person as first author."""
    forms = []
    for entry in re.split(r"\n(?=@)", BIB.read_text()):
        authors = re.search(r"author = \{(.+?)\},?\n", entry)
        year = re.search(r"year = \{(\d{4})\}", entry)
        surnames = [a.split(",")[0].strip("{} ") for a in authors.group(1).split(" and ")]
        if " " in surnames[0]:  # an organisation ("Llama Team, AI @ Meta"): named otherwise in the text
            continue
        named = {1: surnames[0], 2: " and ".join(surnames)}.get(len(surnames), f"{surnames[0]} et al.")
        forms.append((named, year.group(1)))
    return forms


def _prose(markdown):
    """The markdown without code spans, math and headings (where nothing is linked), its whitespace made single."""
    return " ".join(re.sub(r"`[^`]*`|\$[^$]*\$|^#+ .*$", " ", markdown, flags=re.M).split())


def _unlinked(markdown, forms):
    text = _prose(markdown)
    return [f"{named} ({year})" for named, year in forms
            if f"{named} ({year})" in text or re.search(re.escape(f"{named}, {year}") + r"[);）；]", text)]


def _markdown_cells():
    for folder in (ROOT / "solutions", ROOT / "solutions" / "zh"):
        for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
            for cell in json.loads(path.read_text())["cells"]:
                if cell["cell_type"] == "markdown":
                    yield path.relative_to(ROOT), "".join(cell["source"])


def test_every_citation_of_a_paper_in_the_bibliography_is_linked_in_the_book():
    forms, cite = _forms(), _book().cite
    assert len(forms) >= 20
    before, after = [], []
    for path, markdown in _markdown_cells():
        before += _unlinked(markdown, forms)
        after += [f"{path}: {c}" for c in _unlinked(cite(markdown), forms)]
    assert len(before) > 100  # the chapters cite these papers in prose, which the book links
    assert after == [], "\n".join(after)


def test_a_citation_broken_across_lines_is_linked():
    cite = _book().cite
    assert cite("as Vaswani et al.\n(2017) showed") == "as {cite:t}`vaswani2017` showed"
    assert cite("buckets (Raffel et\nal., 2020).") == "buckets ({cite:alp}`raffel2020`)."
    assert cite("`Vaswani et al. (2017)` in code") == "`Vaswani et al. (2017)` in code"
