"""The Chinese edition cannot drift from the English one (grader/i18n_build.py, docs/authoring.md).

Every paragraph of every chapter is a message of its course/NN_name/zh_CN.po; none may be untranslated or fuzzy,
and each translation keeps its English's formulas and inline code. notebooks/zh and solutions/zh have the
English notebooks' cells, code identical. A changed English paragraph turns its translation fuzzy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import nbformat
import pytest

from grader import i18n_build, i18n_cli
from grader.files import cells_fingerprint
from tests.conftest import ROOT

SOURCES = i18n_cli.sources()
GLOSSARY = ROOT / "locale" / "zh_CN" / "glossary.tsv"


def _catalog(stem):
    return i18n_build.read_catalog(i18n_build.catalog_path(stem))


CHAPTER_1 = "01_sinusoidal"


def _translations():
    """{(context, id): translation} read from every catalog file (a declared word in its chapter's, the code's in the
    shared ones); no (context, id) is translated two ways."""
    out = {}
    for path in i18n_build.catalog_paths().values():
        for m in i18n_build.read_catalog(path):
            if m.id:
                assert out.setdefault((m.context or "", m.id), m.string) == m.string, (path, m.id)
    return out


def test_every_chapter_and_the_book_pages_have_a_catalog():
    chapters = sorted(p.name for p in (ROOT / "course").glob("[0-9][0-9]_*") if (p / "chapter.py").is_file())
    assert sorted(SOURCES) == sorted(chapters + [i18n_build.PAGES_STEM])
    for stem in SOURCES:
        assert i18n_build.catalog_path(stem).exists(), f"run `python -m grader i18n --update`: {stem}"


@pytest.mark.parametrize("stem", sorted(SOURCES))
def test_every_message_is_translated_not_fuzzy_and_keeps_formulas_and_code(stem):
    problems = i18n_build.problems({stem: SOURCES[stem]})
    assert problems == [], "\n".join(f"{what}: {msgid[:100]!r}" for _, msgid, what in problems)


@pytest.mark.parametrize("stem", sorted(SOURCES))
def test_each_message_and_its_translation_share_every_formula_and_inline_code_span(stem):
    """Independently of problems(): the formulas and code spans, extracted by a second, simpler rule."""
    catalog = _catalog(stem)
    for msgid, _ in i18n_build.messages(SOURCES[stem]):
        string = catalog[msgid].string

        def spans(text):
            codes = re.findall(r"`[^`]+`", text)
            rest = re.sub(r"`[^`]+`", "", text)
            return sorted(codes + re.findall(r"\$\$.+?\$\$|\$[^$]+\$", rest))

        assert spans(msgid) == spans(string), msgid[:100]


def test_a_paragraph_is_one_message_and_the_markdown_structure_survives_translation():
    """Identity translation (every message by itself) gives back the English Markdown up to line wrapping."""
    for stem, nb in SOURCES.items():
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            rebuilt = "".join(prefix + (m or "") + suffix for prefix, m, suffix in i18n_build.segments(cell.source))
            blocks = lambda s: [b.split() for b in re.split(r"\n[ \t]*\n", s)]  # noqa: E731  (words per block)
            assert blocks(rebuilt) == blocks(cell.source), f"{stem}: {cell.source[:80]!r}"


def test_segments_split_headings_paragraphs_list_items_and_tables_and_keep_code_and_display_math():
    md = ("# Title\n\nA paragraph\nover two lines.\n\n* item one\n  continued\n* item two\n\n$$x = 1$$\n\n"
          "```python\ncode = 1\n```\n\n| a | b |\n| --- | --- |\n| 1 | 2 |")
    messages = [m for _, m, _ in i18n_build.segments(md) if m]
    assert messages == ["Title", "A paragraph over two lines.", "item one continued", "item two",
                        "| a | b |\n| --- | --- |\n| 1 | 2 |"]


def test_invariants_notice_a_dropped_or_altered_formula_or_code_span():
    same = i18n_build.invariants("Use `torch.arange` to compute $\\omega_i = b^{-2i/d}$ and $p$.").__eq__
    assert same(i18n_build.invariants("用 `torch.arange` 计算 $p$ 与 $\\omega_i = b^{-2i/d}$。"))
    assert not same(i18n_build.invariants("用 `torch.arange` 计算 $\\omega_i = b^{-2i/d}$。"))
    assert not same(i18n_build.invariants("用 `arange` 计算 $\\omega_i = b^{-2i/d}$ 与 $p$。"))


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_chinese_notebooks_have_the_english_cells_and_say_their_language(folder):
    english = sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))
    assert english
    assert sorted(p.name for p in (ROOT / folder / "zh").glob("*.ipynb")) == [p.name for p in english]
    for path in english:
        en = json.loads(path.read_text())
        zh = json.loads((ROOT / folder / "zh" / path.name).read_text())
        assert [c["cell_type"] for c in zh["cells"]] == [c["cell_type"] for c in en["cells"]], path.name
        for a, b in zip(en["cells"], zh["cells"]):
            if a["cell_type"] == "code":
                # the source: the same apart from the learner's words (tests/test_zh_code_cells.py)
                assert a["metadata"] == b["metadata"], path.name
            else:
                assert re.search(r"[\u4e00-\u9fff]", "".join(b["source"])), f"{path.name}: {''.join(a['source'])[:60]}"
        assert zh["metadata"]["posenc"]["language"] == "zh_CN"
        # the build's fingerprint of the translated cells: a learner's edits there are told from the build's
        assert zh["metadata"]["posenc"]["cells_sha256"] == cells_fingerprint(zh["cells"])
        assert zh["metadata"]["posenc"]["generated_from"] == en["metadata"]["posenc"]["generated_from"]
        assert zh["metadata"]["kernelspec"] == en["metadata"]["kernelspec"]


def test_the_chinese_notebooks_import_the_self_check_package_beside_them():
    for folder in ("notebooks", "solutions"):
        link = ROOT / folder / "zh" / "posenc_selfcheck"
        assert link.is_symlink() and link.resolve() == (ROOT / "posenc_selfcheck").resolve()


def _glossary():
    """[(english, [chinese alternatives], [words no translation uses])] of locale/zh_CN/glossary.tsv."""
    rows = [line.split("\t") for line in GLOSSARY.read_text().splitlines() if line and not line.startswith("#")]
    return [(row[0], row[1].split("|"), row[2].split("|") if len(row) > 2 else []) for row in rows]


def _every_message():
    """[(catalog stem, msgid, translation)] of every catalog: the chapters, the book, the self-check, the grader."""
    out = []
    for stem, path in i18n_build.catalog_paths().items():
        for message in i18n_build.read_catalog(path):
            if message.id:
                ids = message.id if isinstance(message.id, tuple) else (message.id,)
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                out += [(stem, msgid, string) for msgid, string in zip(ids, strings)]
    return out


def _prose(english):
    """A message's English outside code spans, formulas and *titles*."""
    return re.sub(r"`[^`]*`|\$[^$]*\$|(?<!\*)\*[^*]+\*(?!\*)", " ", english)


def test_glossary_terms_are_used_wherever_the_english_uses_them_in_every_catalog():
    terms = _glossary()
    assert len(terms) >= 30
    stems = {stem for stem, _, _ in _every_message()}
    assert stems == set(SOURCES) | {i18n_build.RUNTIME_STEM, i18n_build.GRADER_STEM}  # every catalog
    misses = []
    for stem, msgid, string in _every_message():
        prose = _prose(msgid)
        for english, chinese, avoid in terms:
            if re.search(rf"\b{re.escape(english)}(?![_\w]*_)", prose, re.I):
                if not any(c in string for c in chinese) and english.lower() not in string.lower():
                    misses.append(f"{stem}: {english!r} -> {chinese}: {string[:70]}")
            misses += [f"{stem}: {word!r}, not {chinese[0]!r}: {string[:70]}" for word in avoid if word in string]
    assert misses == [], "\n".join(misses)


# the core terms: at its first use in every chapter (outside headings) each keeps its English, in parentheses
CORE_TERMS = ("sinusoidal", "learned absolute", "relative bias", "extrapolat", "long context", "position interpolation")


def test_each_core_term_keeps_its_english_at_its_first_use_in_every_chapter():
    chinese = {english: alternatives for english, alternatives, _ in _glossary()}
    assert set(CORE_TERMS) <= set(chinese)
    misses, glossed = [], 0
    for stem, nb in SOURCES.items():
        if stem == i18n_build.PAGES_STEM:
            continue
        catalog, seen = _catalog(stem), set()
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for prefix, msgid, _ in i18n_build.segments(cell.source):
                if not msgid or re.match(r"#+\s", prefix.rsplit("\n", 1)[-1]):  # headings: no gloss in titles
                    continue
                for english in CORE_TERMS:
                    if english in seen or not re.search(rf"\b{re.escape(english)}", _prose(msgid), re.I):
                        continue
                    seen.add(english)
                    # the Chinese term, then (within a few characters) the English word: 外推（extrapolate）
                    term = "|".join(map(re.escape, chinese[english]))
                    if re.search(rf"(?:{term}).{{0,20}}?{re.escape(english)}", catalog[msgid].string, re.I):
                        glossed += 1
                    else:
                        misses.append(f"{stem}: {english!r} at its first use: {catalog[msgid].string[:90]}")
    assert misses == [], "\n".join(misses)
    assert glossed >= 20  # the terms are used: the test looked at their first uses


def _literal_stars(markdown):
    """Emphasis markers that CommonMark leaves as text (a `**` that is not left- or right-flanking)."""
    from markdown_it import MarkdownIt

    text = re.sub(r"`[^`]*`|\$\$.+?\$\$|\$[^$]+\$", "X", markdown, flags=re.S)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    return [c.content for t in tokens for c in t.children or [] if c.type == "text" and "*" in c.content]


def test_emphasis_in_a_translation_renders_as_emphasis():
    """Chinese has no spaces: `**粗体**的` after a closing parenthesis is not right-flanking and shows its stars."""
    assert _literal_stars("只是**到 $i$ 为止的 token（顺序任意）**的函数")  # the rule the test relies on
    assert not _literal_stars("只取决于**到 $i$ 为止、顺序任意的 token**，与其他无关")
    bad = [f"{stem}: {string[:90]}" for stem, msgid, string in _every_message()
           if stem not in (i18n_build.RUNTIME_STEM, i18n_build.GRADER_STEM)  # plain text, not Markdown
           and _literal_stars(string) and not _literal_stars(msgid)]
    assert bad == [], "\n".join(bad)


def test_every_catalog_passes_msgfmt_check_with_real_header_fields():
    """GNU gettext's own validation (`msgfmt -c`: format strings, header fields), with no warning either (it warns
    about a header field left at its default value, e.g. Last-Translator: FULL NAME <EMAIL@ADDRESS>)."""
    if not shutil.which("msgfmt"):
        pytest.skip("no msgfmt (Debian: apt-get install gettext; .ci/run installs it)")
    paths = list(i18n_build.catalog_paths().values())
    assert len(paths) == len(SOURCES) + 2 and all(path.is_file() for path in paths)
    for path in paths:
        checked = subprocess.run(["msgfmt", "-c", "-o", os.devnull, str(path)], capture_output=True, text=True)
        assert checked.returncode == 0 and checked.stderr == "", f"{path}: {checked.stderr}"
        fields = dict(i18n_build.read_catalog(path).mime_headers)
        for field in ("Last-Translator", "Language-Team", "Report-Msgid-Bugs-To"):
            value = fields.get(field)
            placeholder = re.search(r"FULL NAME|EMAIL@ADDRESS|LL@li\.org|^LANGUAGE", value or "")
            assert value and not placeholder, (path, field, value)


def test_a_changed_paragraph_turns_fuzzy_and_a_new_one_is_untranslated(tmp_path, monkeypatch):
    """The workflow of docs/authoring.md, on a copy of chapter 1's catalog."""
    stem = "01_sinusoidal"
    original = _catalog(stem)
    monkeypatch.setattr(i18n_build, "catalog_path", lambda stem: tmp_path / f"{stem}.po")
    shutil.copy(ROOT / "course" / stem / "zh_CN.po", tmp_path / f"{stem}.po")
    nb = nbformat.from_dict(json.loads(json.dumps(SOURCES[stem])))
    assert i18n_build.problems({stem: nb}) == []
    old = "Three details matter and are easy to get wrong:"
    (cell,) = [c for c in nb.cells if c.cell_type == "markdown" and old in c.source]
    cell.source = cell.source.replace(old, "Three details matter, and all are easy to get wrong:")
    nb.cells.append(nbformat.v4.new_markdown_cell("A brand-new closing paragraph about $PE[p]$."))
    i18n_build.update({stem: nb})
    catalog = i18n_build.read_catalog(tmp_path / f"{stem}.po")
    changed = catalog["Three details matter, and all are easy to get wrong:"]
    assert changed.fuzzy and changed.string == original[old].string  # the old translation, to check
    assert old not in catalog  # the old message is gone
    whats = {msgid: what for _, msgid, what in i18n_build.problems({stem: nb})}
    assert whats["Three details matter, and all are easy to get wrong:"].startswith("fuzzy")
    assert whats["A brand-new closing paragraph about $PE[p]$."] == "untranslated"
    assert len(whats) == 2
    # the build refuses while they are there
    files = {ROOT / "solutions" / f"{stem}.ipynb": nbformat.writes(nb)}
    monkeypatch.setattr(i18n_build, "pages_notebook", lambda: nbformat.v4.new_notebook())
    with pytest.raises(SystemExit, match="not ready"):
        i18n_build.planned_files(files)


# ---- the self-check's words ----------------------------------------------------------------------------------
def _swapped():
    namespace = {}
    exec((ROOT / "tests" / "submissions" / "ch01_swapped.py").read_text(), namespace)
    return namespace["sinusoidal_table"]


_REPORTS = {}


def _report(monkeypatch, lang):
    """The self-check's report on a learner's sinusoidal_table with sin and cos swapped (first attempt)."""
    from posenc_selfcheck import SelfCheckFailed, check, forget_attempts

    if lang not in _REPORTS:
        monkeypatch.setenv("POSENC_LANG", lang)
        forget_attempts()
        with pytest.raises(SelfCheckFailed) as failed:
            check("sinusoidal_table", _swapped())
        forget_attempts()
        _REPORTS[lang] = str(failed.value)
    return _REPORTS[lang]


def test_the_self_check_answers_in_chinese_with_posenc_lang(monkeypatch):
    english, chinese = _report(monkeypatch, "en"), _report(monkeypatch, "zh_CN")
    assert english.startswith("sinusoidal_table: 6 of 8 checks failed") and "sin and cos are swapped" in english
    swapped = "sin and cos are swapped: even columns 2i take sin(p·w_i), odd columns 2i+1 take cos(p·w_i)"
    # the diagnosis, translated whole, as chapter 1's catalog says it (declared there: course/01_sinusoidal/)
    assert _catalog(CHAPTER_1).get(swapped, context="table_swapped").string in chinese
    assert chinese.startswith("sinusoidal_table：8 项检查中有 6 项未通过")
    assert "提示 1/3：" in chinese
    assert _catalog(i18n_build.RUNTIME_STEM)["(Each new attempt that still fails shows the next hint.)"].string \
        in chinese
    # every line is translated: no English word of three letters or more is left outside code and identifiers
    for line in chinese.splitlines():
        # (code, identifiers, dtypes, and the message of a Python exception are not translated)
        prose = re.sub(r"`[^`]*`|\w*_\w*|[A-Z][a-zA-Z]*Error.*$|[a-z]+\(|float\d+|\d\w*", " ", line)
        leftover = [w for w in re.findall(r"[A-Za-z]{3,}", prose) if w not in ("sin", "cos", "atol", "rtol", "base")]
        assert leftover == [], line
    # the numbers of the English report are all there
    assert sorted(re.findall(r"-?\d+\.\d+", english)) == sorted(re.findall(r"-?\d+\.\d+", chinese))


def test_every_hint_level_reaches_a_chinese_learner_translated():
    """Each level of every ladder, on the report line the self-check prints it on, comes out in Chinese whole (the
    catalog's translation of that level, in the context of its ladder)."""
    from posenc_selfcheck.hints import HINTS, MISTAKE_HINTS
    from posenc_selfcheck.messages import msg, render

    translations = _translations()
    ladders = list(HINTS.items()) + [(name, entry["levels"]) for name, entry in MISTAKE_HINTS.items()]
    english = []
    for name, levels in ladders:
        for n, text in enumerate(levels, start=1):
            line = msg("Hint {level} of {levels}: {hint}", level=n, levels=len(levels), hint=msg(text, context=name))
            if render(line, "zh_CN") != f"提示 {n}/{len(levels)}：{translations[(name, text)]}":
                english.append(f"{name} level {n}")
    assert english == []


def test_the_language_comes_from_the_notebook_jupyterlab_runs(monkeypatch, tmp_path):
    from posenc_selfcheck import i18n

    monkeypatch.delenv("POSENC_LANG", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "zh").mkdir()
    shutil.copy(ROOT / "notebooks" / "zh" / "01_sinusoidal.ipynb", tmp_path / "zh" / "01_sinusoidal.ipynb")
    shutil.copy(ROOT / "notebooks" / "01_sinusoidal.ipynb", tmp_path / "01_sinusoidal.ipynb")
    monkeypatch.setenv("JPY_SESSION_NAME", "zh/01_sinusoidal.ipynb")  # relative to the server's root
    assert i18n.language() == "zh_CN"
    monkeypatch.chdir(tmp_path / "zh")  # the kernel's folder is the notebook's
    assert i18n.language() == "zh_CN"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JPY_SESSION_NAME", "01_sinusoidal.ipynb")
    assert i18n.language() == "en"
    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    assert i18n.language() == "zh_CN"


def test_english_is_the_template_and_an_unknown_message_or_language_falls_back_to_it():
    from posenc_selfcheck.messages import msg, render

    line = msg("{exercise}: {failed} of {n} checks failed", exercise="sinusoidal_table", failed=6, n=8)
    assert render(line, "en") == "sinusoidal_table: 6 of 8 checks failed"
    assert render(line, "fr") == render(line, "en")  # no catalog for that language
    assert render(msg("something nobody translated"), "zh_CN") == "something nobody translated"


def test_runtime_messages_are_extracted_from_the_code_and_the_declarations():
    """Every message the self-check's code constructs is an entry; every public check's name is one, in the
    context of its key, and every mistake it names, in the context of the mistake's name."""
    from grader import i18n_runtime
    from grader.checks import all_checks, mistakes

    entries = dict(i18n_runtime.messages())
    assert ("", "{exercise}: {failed} of {n} checks failed") in entries
    assert ("", "{demo}: skipped until {exercise} is finished.") in entries
    assert ("", ("{exercise}: the one check passed ({ms:.0f} ms)", "{exercise}: all {n} checks passed ({ms:.0f} ms)")) \
        in entries
    for check in all_checks():
        if check.public:
            assert (check.key, check.name) in entries
            assert all((m, mistakes()[m].message) in entries for m in check.mistakes)


def test_the_compiled_table_is_the_catalogs():
    """The self-check's table is compiled from runtime.po and the chapters' catalogs together, every entry as the
    catalog file that holds it translates it."""
    from grader import i18n_runtime

    def key(context, msgid):  # gettext's `context \x04 id`, as posenc_selfcheck.messages looks a message up
        return f"{context}\x04{msgid}" if context else msgid

    compiled = json.loads((ROOT / "posenc_selfcheck" / "data" / "i18n_zh_CN.json").read_text())
    assert compiled == json.loads(i18n_runtime.compile_catalog(i18n_build.words(i18n_build.RUNTIME_STEM)))
    assert compiled["plural_forms"] == "nplurals=1; plural=0;"
    translations = {key(context, msgid if isinstance(msgid, str) else msgid[0]): string
                    for (context, msgid), string in _translations().items()}
    assert len(compiled["messages"]) > 1000
    for name, string in compiled["messages"].items():
        assert translations[name] == (tuple(string) if isinstance(string, list) else string), name


def test_a_declarations_words_live_in_its_chapters_catalog_and_the_shared_ones_hold_the_codes():
    """Adding an exercise touches its chapter's catalog only: every word a chapter's declaration says (check names,
    hints, mistakes' messages and ladders, hidden checks' names too) is in its course/NN_name/zh_CN.po, referenced
    by its exercise; runtime.po and grader.po hold none of them."""
    from grader import course
    from grader.checks import CHAPTERS, HINTS, MISTAKES

    shared = {(m.context or "", m.id) for stem in (i18n_build.RUNTIME_STEM, i18n_build.GRADER_STEM)
              for m in _catalog(stem) if m.id}
    found = 0
    for key, checks in CHAPTERS.items():
        stem = course.chapter(key).stem
        catalog = _catalog(stem)
        said = [(c.exercise, c.key, c.name) for c in checks] + [(c.exercise, c.key, c.hint) for c in checks if c.hint]
        said += [(m.exercise, name, m.message) for name, m in MISTAKES.get(key, {}).items()]
        said += [(m.exercise, name, level) for name, m in MISTAKES.get(key, {}).items() for level in m.hints]
        said += [(exercise, exercise, level) for exercise, levels in HINTS.get(key, {}).items() for level in levels]
        for exercise, context, text in said:
            message = catalog.get(text, context=context)
            assert message is not None and message.string, (stem, context, text)
            assert f"course/{stem}/exercises.py#{exercise}" in [where for where, _ in message.locations]
            assert (context, text) not in shared, (context, text)
            found += 1
    assert found > 1000


def test_rendering_a_report_costs_little(monkeypatch):
    import time

    from posenc_selfcheck import messages

    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    messages.render(messages.msg("output"))  # the table is read once per kernel
    start = time.perf_counter()
    for _ in range(10):
        _REPORTS.pop("zh_CN", None)
        _report(monkeypatch, "zh_CN")
    assert (time.perf_counter() - start) / 10 < 0.5  # the self-check's budget, its checks included
