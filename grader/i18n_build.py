"""The Chinese edition from the same chapter sources, by the gettext workflow.

Every paragraph of a chapter's Markdown (a heading, a paragraph, a list item, a table) is one message of
its `course/NN_name/zh_CN.po`; code blocks and display math are copied as they are. From the
chapters and the catalogs the build writes `notebooks/zh/` and `solutions/zh/`: the same cells, the
Markdown translated, the code cells identical apart from the learner's words (hints, docstrings, figure labels,
demo prints: grader/i18n_code.py) and a CJK font in the setup cell, and `metadata.posenc.language = "zh_CN"`
(the self-check answers in that language).

    python -m grader i18n --update   re-extract the messages (grader/i18n_cli.py); a changed paragraph keeps
                                     its old translation, marked fuzzy; a new one is untranslated
    python -m grader i18n            list what is untranslated or fuzzy (exit 1 if anything is)

`python -m grader build` refuses to write while a message is untranslated, fuzzy, or drops or changes a
formula (`$…$`) or an inline code span of its English.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import nbformat

from . import course, i18n_code, i18n_grader, i18n_runtime
from .files import cells_fingerprint
from .settings import BOUNDS

ROOT = Path(__file__).resolve().parent.parent
LANGUAGE = "zh_CN"
FOLDER = "zh"  # notebooks/zh, solutions/zh, _build/book/zh
CATALOGS = ROOT / "locale" / LANGUAGE / "LC_MESSAGES"  # the catalogs no chapter owns: SHARED_STEMS
# every catalog's header: who translates, and where to report a bad translation (gettext's header fields)
TEAM = "posenc-course maintainers <maintainers@users.noreply.a-seed-ad51cb3d.example>"
HEADER = {"last_translator": TEAM, "language_team": TEAM.replace(" <", ", Chinese (Simplified) <"),
          "msgid_bugs_address": TEAM}

_ITEM = re.compile(r"^(\s*(?:[*+-]|\d+\.)\s+)(.*)$")
_HEADING = re.compile(r"^(#{1,6}\s+)(.*)$")


def segments(markdown):
    """[(prefix, message, suffix)] covering a Markdown cell: message None for verbatim pieces (code blocks,
    display math, blank lines), which are in prefix. One message per heading, paragraph, list item or table;
    a message's lines are joined by spaces (tables keep their lines)."""
    lines = markdown.split("\n")
    out, i = [], 0

    def structural(line):
        s = line.lstrip()
        return (not s or s.startswith("```") or s.startswith("$$") or s.startswith(":::") or _HEADING.match(line)
                or _ITEM.match(line) or s.startswith("|"))

    while i < len(lines):
        line, s = lines[i], lines[i].lstrip()
        end = "\n" if i < len(lines) - 1 else ""
        if not s or s.startswith(":::"):  # a blank line, a MyST directive's fence
            out.append((line + end, None, ""))
            i += 1
        elif s.startswith("```") or s.startswith("$$"):
            fence = "```" if s.startswith("```") else "$$"
            j = i
            if not (fence == "$$" and len(s) > 2 and s.rstrip().endswith("$$")):
                j = i + 1
                while j < len(lines) and fence not in lines[j]:
                    j += 1
            block = "\n".join(lines[i:j + 1])
            out.append((block + ("\n" if j < len(lines) - 1 else ""), None, ""))
            i = j + 1
        elif s.startswith("|"):
            j = i
            while j + 1 < len(lines) and lines[j + 1].lstrip().startswith("|"):
                j += 1
            out.append(("", "\n".join(lines[i:j + 1]), "\n" if j < len(lines) - 1 else ""))
            i = j + 1
        else:
            head = _HEADING.match(line) or _ITEM.match(line)
            prefix, first = (head.group(1), head.group(2)) if head else ("", line)
            parts, j = [first.strip()], i
            if not (head and head.re is _HEADING):
                while j + 1 < len(lines) and not structural(lines[j + 1]):
                    j += 1
                    parts.append(lines[j].strip())
            out.append((prefix, " ".join(parts), "\n" if j < len(lines) - 1 else ""))
            i = j + 1
    return out


def _is_demo(cell):
    return i18n_code.DEMO in cell.metadata.get("tags", [])


def messages(notebook):
    """[(msgid, cell id)] of a notebook's Markdown cells and of the learner's words in its code cells
    (grader/i18n_code.py), in order."""
    return [(m, cell.id) for cell in notebook.cells
            for m in ([m for _, m, _ in segments(cell.source) if m] if cell.cell_type == "markdown"
                      else i18n_code.messages(cell.source, _is_demo(cell)) if cell.cell_type == "code" else [])]


# the code's words; a chapter's declaration's are in the chapter's catalog (homed_words)
RUNTIME_STEM = "runtime"  # what the self-check prints (grader/i18n_runtime.py)
GRADER_STEM = "grader"  # the grader's report and feedback, beyond the self-check's words (grader/i18n_grader.py)
PAGES = ROOT / "book" / "pages"
PAGES_STEM = "book"  # the catalog of the book's own pages
SHARED_STEMS = (PAGES_STEM, RUNTIME_STEM, GRADER_STEM)


def pages_notebook():
    """The book's own pages (book/pages/*.md) as one notebook, a Markdown cell per page, sorted by name."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(p.read_text(), id=p.stem) for p in sorted(PAGES.glob("*.md"))]
    return nb


def catalog_path(stem):
    """A chapter's catalog, course/NN_name/zh_CN.po; the book's, the runtime's and the grader's in CATALOGS."""
    return CATALOGS / f"{stem}.po" if stem in SHARED_STEMS else course.Chapter(course.COURSE / stem).path("catalog")


def catalog_paths():
    """{stem: path} of every catalog: each chapter's, then the shared ones."""
    return {stem: catalog_path(stem) for stem in [c.stem for c in course.chapters()] + list(SHARED_STEMS)}


def read_catalog(path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        return read_po(f, locale=LANGUAGE)


def write_catalog(path, catalog):
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    for name, value in HEADER.items():
        setattr(catalog, name, value)
    for message in catalog:  # no message is %-formatted: Babel's guess ("90% is") only makes `msgfmt -c` fail
        message.flags.discard("python-format")
    with open(path, "wb") as f:
        write_po(f, catalog, width=0, omit_header=False, include_previous=True)


def _source(stem):
    return "book/pages/*.md" if stem == PAGES_STEM else f"course/{stem}/chapter.py"


def _where(stem, cell_id):
    """A catalog reference: the cell a message comes from, by its id (grader/render.py), never its position."""
    return f"book/pages/{cell_id}.md" if stem == PAGES_STEM else f"course/{stem}/chapter.py#{cell_id}"


def runtime_messages():
    """[((context, msgid), where)] of the self-check's words: its code's messages and the public declarations'."""
    return i18n_runtime.messages()


def grader_messages():
    """[((context, msgid), where)] of the grader's own words: its code's messages, every other check's data."""
    return i18n_grader.messages()


def homed_words():
    """{catalog stem: [((context, msgid), where)]} of the self-check's and the grader's words, each in its home: the
    chapter whose declaration says it (course/NN_name/zh_CN.po), else runtime.po or grader.po (the code's)."""
    out = {}
    for shared, entries in ((RUNTIME_STEM, runtime_messages()), (GRADER_STEM, grader_messages())):
        for entry, where in entries:
            out.setdefault(i18n_runtime.home(where) or shared, []).append((entry, where))
    return out


def words(shared):
    """The self-check's (RUNTIME_STEM) or the grader's (GRADER_STEM) words as one catalog, in memory, which the build
    compiles: the shared catalog, and each declared entry as its chapter's catalog translates it."""
    entries = runtime_messages() if shared == RUNTIME_STEM else grader_messages()
    union, chapters = read_catalog(catalog_path(shared)), {}
    for (context, msgid), where in entries:
        stem = i18n_runtime.home(where)
        if stem is None:
            continue
        catalog = chapters.get(stem) or chapters.setdefault(stem, read_catalog(catalog_path(stem)))
        message = catalog.get(msgid, context=context or None)
        if message is not None:
            union[message.id] = message
    return union


def _template(stem, notebook):
    import datetime

    from babel.messages.catalog import Catalog

    fixed = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)  # no churn in the headers
    if stem == RUNTIME_STEM:
        header = "# Source: what posenc_selfcheck shows (grader/i18n_runtime.py), beyond the chapters' declarations"
    elif stem == GRADER_STEM:
        header = "# Source: the grader's report and feedback (grader/i18n_grader.py), beyond the chapters' declarations"
    elif stem == PAGES_STEM:
        header = f"# Source: {_source(stem)}"
    else:
        header = f"# Source: {_source(stem)} and the words of its declaration, course/{stem}/exercises.py"
    pairs = [(("", m), (_where(stem, c), None)) for m, c in messages(notebook)] if notebook is not None else []
    pairs += homed_words().get(stem, [])
    template = Catalog(project="posenc-course", version="1", creation_date=fixed, revision_date=fixed,
                       fuzzy=False, header_comment=header, locale=LANGUAGE)
    for (context, msgid), where in pairs:
        location = where if isinstance(where, tuple) else (where, None)
        known = template.get(msgid, context=context or None)
        if known is not None:
            known.locations.append(location)
        else:
            template.add(msgid, locations=[location], context=context or None)
    return template


def update(chapter_notebooks):
    """Re-extract every chapter's messages into its catalog (msgmerge's rules, Babel's implementation):
    changed paragraphs become fuzzy with their old translation. Returns the catalogs written."""
    written = []
    for stem, notebook in {**chapter_notebooks, RUNTIME_STEM: None, GRADER_STEM: None}.items():
        template = _template(stem, notebook)
        path = catalog_path(stem)
        if path.exists():
            catalog = read_catalog(path)
            catalog.update(template, update_header_comment=True)
            catalog.obsolete.clear()  # git keeps the history; obsolete entries only confuse translators
        else:
            catalog = template
        catalog.revision_date = template.revision_date
        catalog.creation_date = template.creation_date
        catalog.fuzzy = False
        write_catalog(path, catalog)
        written.append(path)
    return written


_CODE = re.compile(r"(`+)(.+?)\1")
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\$).+?(?<![\\$])\$")


def invariants(text):
    """The inline code spans and the formulas of a message, as a multiset: a translation keeps them all."""
    codes = [m.group(0) for m in _CODE.finditer(text)]
    rest = _CODE.sub(" ", text)
    return Counter(codes + [m.group(0) for m in _MATH.finditer(rest)])


_NAMED = re.compile(r"\{[a-z_][a-z0-9_]*(?::[^{}]*)?\}")  # a placeholder, with its format spec


def problems(chapter_notebooks, runtime=False):
    """[(catalog, msgid, what)] for every message of the chapters (and, with runtime, of the self-check's
    and the grader's words, read from the declarations and the code) that cannot be used as it is."""
    out = []
    todo = {stem: [("", m) for m, _ in messages(nb)] for stem, nb in chapter_notebooks.items()}
    if runtime:
        for stem, entries in {RUNTIME_STEM: [], GRADER_STEM: [], **homed_words()}.items():
            todo.setdefault(stem, []).extend(entry for entry, _ in entries)
    for stem, entries in todo.items():
        path = catalog_path(stem)
        if not path.exists():
            out.append((path, "", "no catalog: run `python -m grader i18n --update`"))
            continue
        catalog = read_catalog(path)
        for context, msgid in dict.fromkeys(entries):
            message = catalog.get(msgid, context=context or None)
            shown = msgid[0] if isinstance(msgid, tuple) else msgid
            # a plural's every form is checked against the English plural (which names the count)
            english = msgid[-1] if isinstance(msgid, tuple) else msgid
            forms = message.string if message is not None and isinstance(message.string, tuple) \
                else (message.string,) if message is not None else ()
            if message is None:
                out.append((path, shown, "not in the catalog: run `python -m grader i18n --update`"))
            elif not all(forms):
                out.append((path, shown, "untranslated"))
            elif message.fuzzy:
                out.append((path, shown, "fuzzy: the English changed; check the translation, then drop the flag"))
            for form in forms if message is not None and all(forms) and not message.fuzzy else ():
                if invariants(english) != invariants(form):
                    lost, extra = invariants(english) - invariants(form), invariants(form) - invariants(english)
                    out.append((path, shown,
                                f"formulas or code spans differ: missing {sorted(lost)}, extra {sorted(extra)}"))
                elif sorted(_NAMED.findall(english)) != sorted(_NAMED.findall(form)):
                    out.append((path, shown, f"placeholders differ: {sorted(_NAMED.findall(form))}"))
                elif i18n_code.fields(english) != i18n_code.fields(form):  # an f-string's `{...}`, kept verbatim
                    out.append((path, shown, f"fields differ: {i18n_code.fields(form)}"))
    return out


SETUP = "import matplotlib.pyplot as plt"  # a line of the chapter's setup cell, where it draws figures
SETUP_AFTER = "from posenc_selfcheck import check"  # the import the font's import follows
FONT_IMPORT = "from posenc_selfcheck.fonts import use_cjk_font"
FONT_CALL = "use_cjk_font()  # 图中的汉字需要中文字体（posenc_selfcheck/fonts.py）"


def with_cjk_font(source):
    """A setup cell that draws figures, with the font's import after SETUP_AFTER and its call at the end."""
    lines = source.split("\n")
    if SETUP not in lines or SETUP_AFTER not in lines:
        return source
    lines.insert(lines.index(SETUP_AFTER) + 1, FONT_IMPORT)
    return "\n".join(lines).rstrip("\n") + "\n\n" + FONT_CALL


def translate(notebook, catalog):
    """A copy of a notebook with its Markdown and its code cells' learner words translated, a CJK font set where
    it draws figures, marked as zh_CN."""
    nb = nbformat.from_dict(notebook)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = "".join(prefix + (catalog[m].string if m else "") + suffix
                                  for prefix, m, suffix in segments(cell.source))
        elif cell.cell_type == "code":
            cell.source = with_cjk_font(i18n_code.translate(cell.source, lambda m: catalog[m].string,
                                                            _is_demo(cell)))
    # the build's mark (where it came from; the cells' fingerprint, which tells a learner's edits from the
    # build's), for the translated cells, and the language
    mark = dict(nb.metadata.get("posenc", {}))
    mark.update(language=LANGUAGE, cells_sha256=cells_fingerprint(nb.cells))
    nb.metadata["posenc"] = mark
    return nb


def _stem(path):
    return Path(path).stem


def planned_files(files):
    """{path: text} of the Chinese notebooks, from the English ones the build plans (`files`), and the compiled
    catalogs; raises SystemExit while a catalog is incomplete."""
    english = {p: text for p, text in files.items()
               if p.suffix == ".ipynb" and p.parent.name in ("notebooks", "solutions")}
    solutions = {_stem(p): nbformat.reads(t, as_version=4) for p, t in english.items() if p.parent.name == "solutions"}
    bad = problems({**solutions, PAGES_STEM: pages_notebook()}, runtime=True)
    if bad:
        shown = [f"{p.relative_to(ROOT) if ROOT in p.parents else p}: {what}: {msgid[:70]!r}"
                 for p, msgid, what in bad[:BOUNDS.listed_problems]]
        raise SystemExit(f"{len(bad)} messages of the Chinese edition are not ready (docs/authoring.md):\n  "
                         + "\n  ".join(shown) + ("\n  …" if len(bad) > BOUNDS.listed_problems else ""))
    catalogs = {stem: read_catalog(catalog_path(stem)) for stem in solutions}
    # the self-check's table holds the self-check's words alone; the grader's (hidden checks' names among them,
    # from the chapters' catalogs) only grader/, which never reaches a learner
    out = {ROOT / "posenc_selfcheck" / "data" / f"i18n_{LANGUAGE}.json":
           i18n_runtime.compile_catalog(words(RUNTIME_STEM)),
           ROOT / "grader" / "data" / f"i18n_{LANGUAGE}.json": i18n_grader.compile_catalog(words(GRADER_STEM))}
    for path, text in english.items():
        translated = translate(nbformat.reads(text, as_version=4), catalogs[_stem(path)])
        out[path.parent / FOLDER / path.name] = nbformat.writes(translated) + "\n"
    return out
