"""python -m grader i18n: update the translation catalogs from the chapters, or list what is left to translate.

(Apart from grader/i18n_build.py, which grader/build.py calls: this one renders what is translated, in memory: the
chapters' notebooks; the self-check's and the grader's words are read from the declarations and the code.)
"""

from __future__ import annotations

from collections import Counter

import nbformat

from . import course
from .i18n_build import PAGES_STEM, ROOT, pages_notebook, problems, update
from .render import render


def sources():
    """{catalog stem: notebook} of everything translated: the chapters (their solution notebooks) and the
    book's pages."""
    out = {c.stem: nbformat.reads(render(c.path("source"))[1], as_version=4) for c in course.chapters()}
    out[PAGES_STEM] = pages_notebook()
    return out


def main(argv=None):
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m grader i18n", description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="re-extract the messages into the catalogs")
    args = parser.parse_args(argv)
    notebooks = sources()
    if args.update:
        for path in update(notebooks):
            print(f"updated: {path.relative_to(ROOT)}")
    bad = problems(notebooks, runtime=True)
    counts = Counter((str(p.relative_to(ROOT)), what.split(":")[0]) for p, _, what in bad)
    for (name, what), n in sorted(counts.items()):
        print(f"{name}: {n} {what}")
    if bad:
        print(f"{len(bad)} messages to translate or check (docs/authoring.md); then `python -m grader build`",
              file=sys.stderr)
        return 1
    print("every message is translated")
    return 0
