"""The course as a book (bash scripts/book.sh): both editions build with warnings as errors, nothing on any page
comes from another host, search works offline in both languages, and the edition without solutions holds no
solution code. Then, in headless Chromium (as tests/test_browser.py) with every request that does not go to
127.0.0.1 blocked and counted: math is typeset, figures load, search finds "ALiBi" and "旋转", and the
language switch leads to the same chapter. Screenshots go to out/browser/ (POSENC_BROWSER_SHOTS).

Needs the `book` extra (bash scripts/setup.sh book) and Debian's libjs-mathjax; skipped, with the reason,
without them. The outputs of the executed solution notebooks are cached in _build/book/.jupyter_cache: the
first build executes them (chapters 7 and 8 show their full runs' stored results, without training), later ones
do not."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import ROOT
from tests.test_browser import CHROMIUM, FLAGS, SHOTS, TIMEOUT_MS

OUT = ROOT / "_build" / "book"
CHAPTERS = sorted(p.parent.name for p in (ROOT / "course").glob("[0-9][0-9]_*/chapter.py"))
MATHJAX = Path("/usr/share/javascript/mathjax/MathJax.js")


def _needs_book():
    for module in ("sphinx", "myst_nb", "sphinx_book_theme", "sphinxcontrib.bibtex", "jieba"):
        pytest.importorskip(module, reason=f"no {module}: bash scripts/setup.sh book")
    if not MATHJAX.exists():
        pytest.skip("no MathJax 2 (Debian: apt-get install libjs-mathjax)")


def _build(*args, out=OUT):
    start = time.monotonic()
    run = subprocess.run([sys.executable, str(ROOT / "book" / "build.py"), "--out", str(out), *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=1200)
    return run, time.monotonic() - start


@pytest.fixture(scope="module")
def site():
    """Both editions. The English pages of chapters that nbval has run in this session (solutions/conftest.py
    publishes them) show the outputs of that run; the other notebooks are executed here."""
    _needs_book()
    executed = os.environ.get("POSENC_EXECUTED_SOLUTIONS")
    run, seconds = _build(*(["--executed", executed] if executed else []))
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    print(f"book built in {seconds:.0f} s")
    return OUT


def test_both_editions_build_with_warnings_as_errors_and_have_every_chapter(site):
    for lang in ("en", "zh"):
        for stem in CHAPTERS:
            page = (site / lang / f"{stem}.html").read_text()
            assert 'href="_downloads/' in page and f"{stem}.ipynb" in page, f"{lang}/{stem}: no notebook download"
        assert (site / lang / "references.html").exists()
    assert "<h1>第 4 章 旋转位置编码（RoPE）" in (site / "zh" / "04_rope.html").read_text()
    # a citation in the text links the bibliography of references.bib
    assert re.search(r'href="references.html#id\d+"', (site / "en" / "03_relative.html").read_text())


def test_the_chapter_7_and_8_pages_show_the_full_runs_stored_results_not_a_new_training(site):
    """The book does not train: each experiment cell of chapters 7 and 8 shows the full run's stored numbers (the
    ones the text quotes) and its figures, under a cell that reads RUN = "full"."""
    for lang in ("en", "zh"):
        for stem, folder, number in (("07_train_short_test_long", "chapter7", "1.42"),
                                     ("08_positions_in_2d", "chapter8", "0.987")):
            page = (site / lang / f"{stem}.html").read_text()
            assert "shown without training" in page and "reduced run (the same code" not in page, f"{lang}/{stem}"
            assert f"docs/{folder}/" in page and number in page, f"{lang}/{stem}"
            assert "[=====" not in page, f"{lang}/{stem}: a progress bar of a training"
    assert len(re.findall(r'<img[^>]+src="_images/', (site / "en" / "07_train_short_test_long.html").read_text())) >= 4


def test_the_readme_counts_the_solution_notebooks_the_book_executes():
    """README's book section names how many solution notebooks the first build executes: the English ones."""
    words = {8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    count = len(sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")))
    assert count == len(CHAPTERS)
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## The course as a book"):]
    assert f"executes the {words[count]} solution notebooks" in section


def test_the_downloaded_notebooks_are_the_student_notebooks_of_their_language(site):
    for lang, folder in (("en", ROOT / "notebooks"), ("zh", ROOT / "notebooks" / "zh")):
        for stem in CHAPTERS:
            (download,) = (site / lang / "_downloads").glob(f"*/{stem}.ipynb")
            assert download.read_bytes() == (folder / f"{stem}.ipynb").read_bytes()


def test_no_page_loads_anything_from_another_host(site):
    """Scripts, styles, images, fonts and iframes: only from the site itself (links to papers may leave)."""
    loads = re.compile(r'<(?:script|img|iframe|source|embed)\b[^>]*\bsrc="([^"]+)"|<link\b[^>]*\bhref="([^"]+)"')
    for page in sorted(site.glob("*/*.html")):
        for m in loads.finditer(page.read_text()):
            url = m.group(1) or m.group(2)
            assert not re.match(r"(https?:)?//", url), f"{page.relative_to(site)} loads {url}"
    for css in sorted(site.glob("*/_static/**/*.css")):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(errors="replace")):
            assert not re.match(r"(https?:)?//", url), f"{css.relative_to(site)} loads {url}"


def test_search_indexes_hold_alibi_and_chinese_words(site):
    def terms(lang):
        text = (site / lang / "searchindex.js").read_text()
        return json.loads(text[text.index("(") + 1:text.rindex(")")])["terms"]

    assert "alibi" in terms("en")
    zh = terms("zh")
    assert "旋转" in zh and "外推" in zh and "注意力" in zh and "alibi" in zh


def test_the_edition_without_solutions_builds_and_holds_no_solution_code(tmp_path):
    _needs_book()
    from grader import leaks
    from grader import render as build_module

    run, _ = _build("--assignment", "--chapters", "01", "--lang", "en", "zh", out=tmp_path)
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    regions = leaks.solution_regions()
    for lang in ("en", "zh"):
        page = (tmp_path / lang / "01_sinusoidal.html").read_text()
        # the code cells' words are the edition's language too
        hint = {"en": "# Hint: the idea: one angle", "zh": "# 提示：思路：每个位置 p"}[lang]
        assert "NotImplementedError" in page and hint in page
        text = re.sub(r"<[^>]+>", "", page).replace("&quot;", '"').replace("&#39;", "'").replace("&gt;", ">") \
            .replace("&lt;", "<").replace("&amp;", "&")
        assert leaks.leaked_lines(text, regions) == []
        assert build_module.STUB.split("(")[0] in text
    assert not (tmp_path / "en" / "00_why_positions.html").exists()  # only the chapters asked for


# ---- in a browser -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser_page(server):
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium (Debian: apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="no playwright (pip install playwright)")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    blocked = []

    def only_local(route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            context.route("**/*", only_local)
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            yield page, blocked
        finally:
            browser.close()
    assert blocked == [], f"requests to other hosts: {blocked}"


def _open(page, url):
    page.goto(url)
    page.wait_for_load_state("networkidle")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_pages_typeset_math_and_load_figures(browser_page, server, lang):
    page, blocked = browser_page
    _open(page, f"{server}/{lang}/01_sinusoidal.html")
    # MathJax 2 (CommonHTML output) replaces every math element's TeX by its rendering
    page.wait_for_function("document.querySelectorAll('.mjx-chtml').length > 20", timeout=TIMEOUT_MS)
    assert page.locator(".MathJax_Error, .mjx-merror").count() == 0
    untypeset = page.evaluate("[...document.querySelectorAll('span.math, div.math')]"
                              ".filter(e => !e.querySelector('.mjx-chtml')).length")
    assert untypeset == 0
    images = page.locator("article img")
    assert images.count() >= 2
    page.wait_for_function("[...document.querySelectorAll('article img')].every(i => i.complete)")
    sizes = page.evaluate("[...document.querySelectorAll('article img')].map(i => i.naturalWidth)")
    assert all(w > 100 for w in sizes), sizes
    page.screenshot(path=str(SHOTS / f"book_{lang}_01_sinusoidal.png"))
    _open(page, f"{server}/{lang}/04_rope.html")
    page.wait_for_function("document.querySelectorAll('.mjx-chtml').length > 20", timeout=TIMEOUT_MS)
    page.screenshot(path=str(SHOTS / f"book_{lang}_04_rope.png"))
    assert blocked == []


@pytest.mark.parametrize("lang, query, chapter", [("en", "ALiBi", "03_relative"), ("zh", "旋转", "04_rope")])
def test_offline_search_finds_the_chapter(browser_page, server, lang, query, chapter):
    page, blocked = browser_page
    _open(page, f"{server}/{lang}/search.html?q={query}")
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=TIMEOUT_MS)
    hrefs = [a.get_attribute("href") for a in page.locator("#search-results ul.search li a").all()]
    assert any(h.startswith(f"{chapter}.html") for h in hrefs), hrefs
    page.screenshot(path=str(SHOTS / f"book_{lang}_search.png"))
    assert blocked == []


@pytest.mark.parametrize("start, other, title",
                         [("en", "zh", "旋转位置编码"), ("zh", "en", "Rotary position embedding")])
def test_the_language_switch_leads_to_the_same_chapter(browser_page, server, start, other, title):
    page, blocked = browser_page
    _open(page, f"{server}/{start}/04_rope.html")
    page.locator("a.posenc-lang-switch").first.click()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{server}/{other}/04_rope.html"
    assert title in page.locator("article h1").first.inner_text()
    assert blocked == []
