"""Sphinx configuration of the course's book, both editions (book/build.py stages the sources and sets the
environment: POSENC_BOOK_LANG, POSENC_BOOK_EXECUTE, POSENC_BOOK_CACHE). Nothing is loaded from the network:
MathJax is Debian's libjs-mathjax, copied into the site; the theme's scripts, styles and fonts ship with it."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANG = os.environ.get("POSENC_BOOK_LANG", "en")  # "en" or "zh_CN"
MATHJAX_DIR = os.environ.get("POSENC_MATHJAX_DIR", "/usr/share/javascript/mathjax")

project = "Positional encodings in Transformers" if LANG == "en" else "Transformer 中的位置编码"
author = "posenc-course"
copyright = "2026, posenc-course"
language = LANG
extensions = ["myst_nb", "sphinxcontrib.bibtex"]
templates_path = [str(HERE / "_templates")]
html_static_path = [str(HERE / "_static")]
html_css_files = ["posenc.css"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "downloads", "posenc_selfcheck", "mathjax"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# ---- notebooks: outputs from the executed solution notebooks, cached by jupyter-cache (keyed by the code
# cells, which both editions share: the Chinese edition reuses the English run)
nb_execution_mode = os.environ.get("POSENC_BOOK_EXECUTE", "cache")
nb_execution_cache_path = os.environ.get("POSENC_BOOK_CACHE", str(HERE.parent / "_build" / "book" / ".jupyter_cache"))
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_in_temp = False
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_update_mathjax = False
myst_heading_anchors = 3

# ---- math: MathJax 2 from the site itself
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_CHTML"
mathjax2_config = {"messageStyle": "none", "showMathMenu": False, "menuSettings": {"zoom": "None"},
                   "CommonHTML": {"linebreaks": {"automatic": False}},
                   "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                               "processClass": "math|output_area", "ignoreClass": "document"}}

# ---- citations: one references.bib
bibtex_bibfiles = [str(HERE / "references.bib")]
bibtex_reference_style = "author_year"
bibtex_default_style = "plain"

# ---- theme
html_theme = "sphinx_book_theme"
html_title = project
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
    "article_header_end": ["article-header-buttons.html", "lang-switch.html"],
    "search_bar_text": "Search the book…" if LANG == "en" else "搜索…",
}
html_search_language = "zh" if LANG.startswith("zh") else "en"
if LANG.startswith("zh") and os.environ.get("POSENC_BOOK_JIEBA_DICT"):
    html_search_options = {"dict": os.environ["POSENC_BOOK_JIEBA_DICT"]}  # the glossary's terms are words
if LANG.startswith("zh"):
    from sphinx import search as _search
    from sphinx.search.zh import SearchChinese as _SearchChinese

    if _SearchChinese.language_name == "Chinese" and _SearchChinese.js_stemmer_rawcode == "english-stemmer.js":
        class _SearchChineseFixed(_SearchChinese):
            """Sphinx 9.0 writes `window.Stemmer = ChineseStemmer` into language_data.js but ships the English
            stemmer (EnglishStemmer) for Chinese: every search then fails with "ChineseStemmer is not defined"."""

            language_name = "English"

        _search.languages["zh"] = _SearchChineseFixed

OTHER = {"en": ("zh", "zh_CN", "中文"), "zh_CN": ("en", "en", "English")}


def _page_context(app, pagename, templatename, context, doctree):
    folder, code, label = OTHER[LANG]
    depth = pagename.count("/")
    context["posenc_other_url"] = "../" * (depth + 1) + f"{folder}/{pagename}.html"
    context["posenc_other_lang"] = code
    context["posenc_other_label"] = label


def _copy_mathjax(app, exception):
    """The parts of MathJax 2 that the TeX-AMS_CHTML configuration loads (about 3 MB, not Debian's 54 MB)."""
    import shutil

    if exception is not None or app.builder.format != "html":
        return
    src, dst = Path(MATHJAX_DIR), Path(app.outdir) / "_static" / "mathjax"
    for part in ["MathJax.js", "config/TeX-AMS_CHTML.js", "extensions", "jax/input/TeX", "jax/output/CommonHTML",
                 "jax/element", "fonts/HTML-CSS/TeX/woff", "localization/en", "localization/zh-hans"]:
        if not (src / part).exists():
            raise RuntimeError(f"MathJax 2 not found at {src / part}: apt-get install libjs-mathjax "
                               "(or set POSENC_MATHJAX_DIR)")
        if (src / part).is_dir():
            shutil.copytree(src / part, dst / part, dirs_exist_ok=True)
        else:
            (dst / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / part, dst / part)


def setup(app):
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_mathjax)
