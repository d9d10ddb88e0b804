"""Build the course's book: a static site per language from the generated notebooks (scripts/book.sh).

    python book/build.py [--lang en zh] [--chapters 00 01 ...] [--assignment] [--out _build/book] [--executed DIR]

The English edition is made of solutions/*.ipynb, the Chinese one of solutions/zh/*.ipynb (the build writes
them from the chapters and their catalogs, course/*/zh_CN.po); the book's own pages (book/pages/) are translated
from locale/zh_CN/. Outputs come from executing the solution notebooks once: jupyter-cache keeps them in
OUT/.jupyter_cache, keyed by the code cells, so that every rebuild reuses them (the Chinese notebooks' code cells
hold Chinese words: each edition executes its own). Chapters 7 and 8 train nothing there: with POSENC_CH7_RUN=stored
and POSENC_CH8_RUN=stored their experiment cells show the full runs' stored results and figures (docs/chapter7/,
docs/chapter8/), the numbers their text quotes. With --executed DIR (tests/test_book.py, in a test session that
also runs the solution notebooks under nbval: solutions/conftest.py), the English pages of the other chapters show
the outputs of that run instead of executing the notebooks again (not cached: there the export cells export
nothing). Sphinx prints its progress (reading and executing each page). With --assignment the pages are the student
notebooks, nothing is executed, and the site is scanned for solution code like the student release. Sphinx runs
with warnings as errors.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import course, i18n_build  # noqa: E402

BOOK = ROOT / "book"
LANGS = {"en": "en", "zh": "zh_CN"}
# the experiments of chapters 7 and 8 show their full runs as stored (docs/chapterN/) instead of training; every
# other chapter's outputs do not depend on these variables
STORED_RUNS = {"07": "POSENC_CH7_RUN", "08": "POSENC_CH8_RUN", "09": "POSENC_CH9_RUN"}
WAIT_S = 900  # at most, for the tests' run of a notebook in progress (--executed)
CITE = None  # {(author words, year): key}, from references.bib


def _citations():
    """{("Press et al.", "2022"): "press2022", ...}: how the chapters name each paper of references.bib."""
    global CITE
    if CITE is None:
        CITE = {}
        text = (BOOK / "references.bib").read_text()
        entry = r"@\w+\{(\w+),\s*author = \{(.+?)\},\s*\n.*?year = \{(\d{4})\}"
        for key, authors, year in re.findall(entry, text, re.S):
            names = [a.split(",")[0].strip("{} ") for a in authors.split(" and ")]
            if names[0].startswith("Llama Team"):
                CITE[("Meta", year)] = key
                continue
            forms = [f"{names[0]} et al."] if len(names) > 2 else [" and ".join(names)]
            if len(names) == 3:
                forms.append(f"{names[0]}, {names[1]} and {names[2]}")
            for form in forms:
                CITE[(form, year)] = key
    return CITE


def cite(markdown):
    """Prose citations as sphinxcontrib-bibtex roles: "Press et al. (2022)" -> {cite:t}, "(Su et al., 2021)"
    inside parentheses -> {cite:alp}. Names not in references.bib stay prose."""
    def role(kind):
        def replace(m):  # a citation may break across lines of the source: "Vaswani et al.\n(2017)"
            key = _citations().get((" ".join(m.group(1).split()), m.group(2)))
            return f"{{cite:{kind}}}`{key}`" if key else m.group(0)
        return replace

    name = r"([A-Z][\w'-]+(?:\s+et\s+al\.|(?:,\s+[A-Z][\w'-]+)?\s+and\s+[A-Z][\w'-]+)?)"
    # not inside code spans, math or headings (a role in a title would show its key in the table of contents)
    parts = re.split(r"(`[^`]*`|\$[^$]*\$|^#+ .*$)", markdown, flags=re.M)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(name + r"\s+\((\d{4})\)", role("t"), parts[i])
        parts[i] = re.sub(name + r",\s+(\d{4})(?=[);）；])", role("alp"), parts[i])
    return "".join(parts)


def _page(name, lang):
    """A page of book/pages/ in a language (the Chinese one from the catalog)."""
    text = (BOOK / "pages" / f"{name}.md").read_text()
    if lang == "en":
        return text
    from babel.messages.catalog import Catalog  # noqa: F401  (babel reads the catalog)

    nb = i18n_build.pages_notebook()
    names = sorted(p.stem for p in (BOOK / "pages").glob("*.md"))
    catalog = i18n_build.read_catalog(i18n_build.catalog_path(i18n_build.PAGES_STEM))
    return i18n_build.translate(nb, catalog).cells[names.index(name)].source


def stage(lang, chapters, assignment, src):
    """Write one edition's Sphinx sources into src: the notebooks (cited, with the download note), the
    student notebooks to download, index and references."""
    if src.exists():
        shutil.rmtree(src)
    (src / "downloads").mkdir(parents=True)
    sub = "" if lang == "en" else i18n_build.FOLDER
    pages_from = ROOT / ("notebooks" if assignment else "solutions") / sub
    stems = []
    for chapter in chapters:
        (path,) = sorted(pages_from.glob(f"{chapter}_*.ipynb")) or [None]
        if path is None:
            raise SystemExit(f"no chapter {chapter!r} in {pages_from.relative_to(ROOT)}")
        stems.append(path.stem)
        student = ROOT / "notebooks" / sub / path.name
        shutil.copyfile(student, src / "downloads" / path.name)
        nb = json.loads(path.read_text())
        note = _page("chapter_note_assignment" if assignment else "chapter_note", lang)
        note = note.replace("NOTEBOOK", f"downloads/{path.name}")
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                cell["source"] = cite("".join(cell["source"]))
        # the note goes right after the title (the first Markdown cell's first line)
        first = nb["cells"][0]
        title, _, rest = first["source"].partition("\n")
        first["source"] = title + "\n\n" + note + "\n" + rest
        (src / path.name).write_text(json.dumps(nb, ensure_ascii=False, indent=1))
    caption = _page("labels", lang).strip()  # the sidebar's caption (a toctree option is not a paragraph)
    index = _page("index", lang).replace("CHAPTERS", "\n".join(stems)).replace("CAPTION", caption)
    (src / "index.md").write_text(index)
    (src / "references.md").write_text(_page("references", lang))
    # the notebooks import the self-check package next to them, as in notebooks/ and solutions/
    (src / "posenc_selfcheck").symlink_to(ROOT / "posenc_selfcheck")
    return stems


def _finished(lock):
    """Wait until nobody holds `lock` (a notebook the tests are running), at most WAIT_S seconds."""
    deadline = time.monotonic() + WAIT_S
    with lock.open() as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(1)


def reuse_executed(src, stems, executed):
    """Give each staged notebook of `stems` whose chapter has no stored run the outputs of the same notebook executed
    by the tests (executed/NAME.ipynb, published once every cell passed; while the tests run it, executed/NAME.lock is
    locked and this waits), when its code cells are the staged ones, and mark it not to be executed (myst-nb's
    execution_mode "off" for that page). jupyter-cache is left alone: under nbval, which keeps no input history, the
    export cells export nothing, and a later build of the book executes the notebook itself. The chapters reused."""
    reused = []
    for stem in stems:
        lock, ran = executed / f"{stem}.lock", executed / f"{stem}.ipynb"
        if stem[:2] in STORED_RUNS or (lock.exists() and not _finished(lock)) or not ran.exists():
            continue
        page, done = json.loads((src / f"{stem}.ipynb").read_text()), json.loads(ran.read_text())
        code, ran_code = ([c for c in nb["cells"] if c["cell_type"] == "code"] for nb in (page, done))
        if ["".join(c["source"]) for c in code] != ["".join(c["source"]) for c in ran_code]:
            continue
        for cell, ran_cell in zip(code, ran_code):
            cell["outputs"], cell["execution_count"] = ran_cell["outputs"], ran_cell["execution_count"]
        page["metadata"]["mystnb"] = {"execution_mode": "off"}
        (src / f"{stem}.ipynb").write_text(json.dumps(page, ensure_ascii=False, indent=1))
        reused.append(stem)
    return reused


def jieba_dictionary(path):
    """The glossary's Chinese terms as a jieba user dictionary, so that search indexes them as words (jieba's own
    dictionary splits 外推 or 位置编码 into pieces)."""
    terms = set()
    for line in (ROOT / "locale" / "zh_CN" / "glossary.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            terms.update(t for t in line.split("\t")[1].split("|") if len(t) > 1)
    path.write_text("".join(f"{t} 100000\n" for t in sorted(terms)))
    return path


def sphinx(lang, src, out, execute, cache):
    env = {**os.environ, "POSENC_BOOK_JIEBA_DICT": str(jieba_dictionary(src.parent / "jieba_dict.txt")),
           "POSENC_BOOK_LANG": LANGS[lang], "POSENC_BOOK_EXECUTE": execute,
           # always the stored runs: an environment that asks for another run (nbval's reduced one, set by
           # solutions/conftest.py in the same test process) must not make the book train
           "POSENC_BOOK_CACHE": str(cache), **{name: "stored" for name in STORED_RUNS.values()},
           "PYTHONPATH": str(ROOT), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    # one process: parallel reading (-j) executes notebooks at once but shares jupyter-cache's SQLite database,
    # which then fails now and then with "database is locked" (seen here; also scipy/scipy#22383)
    # not -q: Sphinx's progress ("reading sources... [ 44%] 03_relative", each notebook's execution) is what a first
    # build, which executes every notebook, has to show
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-c", str(BOOK), "-d",
           str(out.parent / ".doctrees" / lang), str(src), str(out)]
    return subprocess.run(cmd, env=env, cwd=ROOT).returncode


def leak_check(site):
    """The assignment edition's pages hold no solution line of any chapter (grader/leaks.py's rules)."""
    from grader import leaks

    regions = leaks.solution_regions()
    found = []
    for page in sorted(site.rglob("*.html")) + sorted(site.rglob("*.ipynb")):
        text = page.read_text(errors="replace")
        text = re.sub(r"<[^>]+>", "", text).replace("&quot;", '"').replace("&#39;", "'").replace("&lt;", "<") \
            .replace("&gt;", ">").replace("&amp;", "&")
        if leaks.leaked_lines(text, regions) or leaks.has_markers(text):
            found.append(page)
    return found


def main(argv=None):
    p = argparse.ArgumentParser(prog="bash scripts/book.sh", description=__doc__.splitlines()[0])
    p.add_argument("--lang", nargs="+", choices=sorted(LANGS), default=sorted(LANGS))
    p.add_argument("--chapters", nargs="+", metavar="NN", default=None, help="chapter numbers (default: all)")
    p.add_argument("--assignment", action="store_true", help="the edition without solutions (student notebooks)")
    p.add_argument("--out", type=Path, default=ROOT / "_build" / "book")
    p.add_argument("--executed", type=Path, metavar="DIR",
                   help="solution notebooks the tests have executed (solutions/conftest.py): their outputs are used")
    p.add_argument("--update-po", action="store_true",
                   help="only update the catalogs from the chapters (changed paragraphs become fuzzy)")
    args = p.parse_args(argv)
    if args.update_po:
        from grader import i18n_cli

        return i18n_cli.main(["--update"])
    chapters = args.chapters or [c.stem[:2] for c in course.chapters()]
    out = args.out.resolve()
    cache = out / ".jupyter_cache"
    status = 0
    for lang in args.lang:
        start = time.perf_counter()
        src = out / ".src" / lang
        stems = stage(lang, chapters, args.assignment, src)
        if args.executed and not args.assignment:
            reused = reuse_executed(src, stems, args.executed)
            print(f"{lang}: the outputs of {', '.join(reused) or 'no chapter'} from the tests' run ({args.executed})",
                  flush=True)
        site = out / lang
        if site.exists():
            shutil.rmtree(site)
        print(f"{lang}: {len(chapters)} chapters"
              + ("" if args.assignment else f"; notebooks not yet in {cache.name}/ are executed first"), flush=True)
        rc = sphinx(lang, src, site, "off" if args.assignment else "cache", cache)
        if rc == 0 and args.assignment:
            leaked = leak_check(site)
            if leaked:
                print(f"solution code in the assignment edition: {[str(p) for p in leaked]}", file=sys.stderr)
                rc = 1
        print(f"{'built' if rc == 0 else 'FAILED'}: {site.relative_to(ROOT) if site.is_relative_to(ROOT) else site}"
              f"/index.html ({time.perf_counter() - start:.0f} s)")
        status = status or rc
    return status


if __name__ == "__main__":
    sys.exit(main())
