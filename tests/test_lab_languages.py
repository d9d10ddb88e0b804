"""The Chinese learner's lab: `bash scripts/lab.sh --lang zh` opens the learner's own copies of notebooks/zh/ in
my_notebooks/zh/, beside the self-check package, made like the English ones (once, and for a chapter added since;
never overwritten). Both languages share one posenc_mine/, so the exercises a chapter exports reach a later chapter
whichever language either is read in. The book's note on each chapter page names, in the page's language, the
command and the folder that open that notebook, and both work as written. In a copy of the repository, with
`--version` passed on to JupyterLab so that nothing is served, and for real, in a browser: JupyterLab's own menus are
in the lab's language, from settings of lab.sh's own (the user-wide ones are left alone)."""

from __future__ import annotations

import contextlib
import gettext
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_browser import right_answer
from tests.test_learner_work import _fake_environment, _repository_copy


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="no JupyterLab (bash scripts/setup.sh)")
    pytest.importorskip("jupyterlab_language_pack_zh_CN", reason="no JupyterLab language pack (bash scripts/setup.sh)")
    root = tmp_path_factory.mktemp("course") / "repo"
    _repository_copy(root)
    env = {**os.environ, "VIRTUAL_ENV": str(_fake_environment(root.parent / "env"))}
    env.pop("CONDA_PREFIX", None)
    env.pop("PYTHONPATH", None)
    env.pop("POSENC_LANG", None)

    def run(*args, cwd=root):
        return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=600)

    return root, run


def test_lab_zh_copies_the_chinese_notebooks_once_beside_the_self_check(course):
    root, run = course
    generated = sorted((root / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))
    assert len(generated) == len(list((root / "course").glob("[0-9][0-9]_*/chapter.py")))
    lab = run("bash", "scripts/lab.sh", "--lang", "zh", "--version")
    assert lab.returncode == 0, lab.stderr
    assert "已复制到 my_notebooks/zh/" in lab.stdout and f"{root}/my_notebooks/zh" in lab.stdout
    assert re.search(r"^\d+\.\d+", lab.stdout, re.M)  # the other arguments reached JupyterLab (its version)
    work = root / "my_notebooks" / "zh"
    for path in generated:
        assert (work / path.name).read_text() == path.read_text()
        assert json.loads((work / path.name).read_text())["metadata"]["posenc"]["language"] == "zh_CN"
    # `import posenc_selfcheck` works from the folder, through the link beside the notebooks
    imported = run(sys.executable, "-c", "import posenc_selfcheck; print(posenc_selfcheck.__file__)", cwd=work)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == str(work / "posenc_selfcheck" / "__init__.py")
    assert (work / "posenc_selfcheck").resolve() == (root / "posenc_selfcheck").resolve()
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "my_notebooks/zh/01_sinusoidal.ipynb"])
    assert ignored.returncode == 0  # untracked, like the English copies

    # the learner's edit survives; a chapter added since is copied, and only it
    mine = work / "01_sinusoidal.ipynb"
    mine.write_text(mine.read_text().replace("正弦位置编码", "我的笔记：正弦位置编码", 1))
    edited = mine.read_text()
    (root / "notebooks" / "zh" / "09_new_chapter.ipynb").write_text(generated[0].read_text())
    again = run("bash", "scripts/lab.sh", "--lang=zh", "--version")
    assert again.returncode == 0, again.stderr
    (copied,) = [line for line in again.stdout.splitlines() if "已复制到 my_notebooks/zh/" in line]
    assert copied.endswith("： 09_new_chapter.ipynb")
    assert mine.read_text() == edited and "我的笔记" in edited
    # the English lab is untouched by it, and an unknown language is refused
    english = run("bash", "scripts/lab.sh", "--version")
    assert english.returncode == 0 and "09_new_chapter" not in english.stdout
    nb = "01_sinusoidal.ipynb"
    assert (root / "my_notebooks" / nb).read_text() == (root / "notebooks" / nb).read_text()
    refused = run("bash", "scripts/lab.sh", "--lang", "fr", "--version")
    assert refused.returncode != 0 and "en and zh" in refused.stderr


def test_lab_sh_sets_jupyterlabs_language_once_in_settings_of_each_language(course):
    root, run = course
    for lang, locale in (("zh", "zh_CN"), ("en", "en")):
        path = _settings(root, lang) / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings"
        path.unlink(missing_ok=True)
        assert run("bash", "scripts/lab.sh", "--lang", lang, "--version").returncode == 0
        assert json.loads(path.read_text()) == {"locale": locale}
        # the learner chose another language in JupyterLab's Settings menu: lab.sh keeps it
        mine = '{\n    // mine\n    "locale": "fr_FR"\n}'
        path.write_text(mine)
        assert run("bash", "scripts/lab.sh", "--lang", lang, "--version").returncode == 0
        assert path.read_text() == mine
        path.unlink()
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "my_notebooks/.jupyterlab-settings/zh"])
    assert ignored.returncode == 0  # the learner's, like the notebooks


def _settings(root, lang):
    """The JupyterLab settings folder that `lab.sh --lang LANG` passes JupyterLab."""
    return root / "my_notebooks" / ".jupyterlab-settings" / lang


@contextlib.contextmanager
def _lab_sh(root, tmp, lang):
    """JupyterLab as `bash scripts/lab.sh --lang LANG` starts it, with the browser tests' kernel, and their settings
    (every cell in the page) in lab.sh's settings folder; the learner's user-wide settings, under `tmp`, ask for the
    other language: (base URL, token)."""
    from tests import test_browser as tb

    other = json.dumps({"locale": {"en": "zh_CN", "zh": "en"}[lang]})
    mine = tmp / "settings" / "@jupyterlab" / "translation-extension" / "plugin.jupyterlab-settings"
    mine.parent.mkdir(parents=True)
    mine.write_text(other)
    work = root / "my_notebooks" / ("zh" if lang == "zh" else "")
    command = ("bash", str(root / "scripts" / "lab.sh"), "--lang", lang)
    # the course fixture's environment (tests/test_learner_work.py's _fake_environment): this interpreter
    with tb.jupyterlab(tmp, work, command, _settings(root, lang), VIRTUAL_ENV=str(root.parent / "env")) as served:
        yield served
    assert mine.read_text() == other  # untouched


def _menu_labels(page):
    labels = page.locator(".lm-MenuBar-itemLabel")
    labels.first.wait_for()
    return labels.all_inner_texts()


def _chinese_catalog():
    """The language pack's catalog of JupyterLab's strings."""
    import jupyterlab_language_pack_zh_CN as pack

    with (Path(pack.__file__).parent / "locale" / "zh_CN" / "LC_MESSAGES" / "jupyterlab.mo").open("rb") as f:
        return gettext.GNUTranslations(f)


# nbgrader's parts, disabled in the learner's lab by scripts/lab-config/ (see scripts/lab.sh), with jupytext's menus
NBGRADER_LAB_EXTENSION = "@jupyter/nbgrader"
NBGRADER_SERVER_EXTENSIONS = "nbgrader."  # their modules' prefix
JUPYTEXT_LAB_EXTENSION = "jupyterlab-jupytext"


def _jupyter_state(config_path):
    """nbgrader's server extensions as the Jupyter config path enables them ({module: enabled}), JupyterLab's
    federated extensions and the disabled ones, read as JupyterLab reads them, with JUPYTER_CONFIG_PATH=config_path."""
    from jupyter_core.paths import jupyter_config_path, jupyter_path
    from jupyter_server.extension.config import ExtensionConfigManager
    from jupyterlab_server.config import get_page_config

    with pytest.MonkeyPatch.context() as mp:
        if config_path:
            mp.setenv("JUPYTER_CONFIG_PATH", str(config_path))
        else:
            mp.delenv("JUPYTER_CONFIG_PATH", raising=False)
        server = ExtensionConfigManager(read_config_path=jupyter_config_path()).get_jpserver_extensions()
        page = get_page_config(jupyter_path("labextensions"))
    nbgrader = {m: on for m, on in server.items() if m.startswith(NBGRADER_SERVER_EXTENSIONS)}
    return nbgrader, {e["name"] for e in page["federated_extensions"]}, set(page["disabledExtensions"])


def test_the_learners_lab_config_disables_nbgrader_and_the_instructors_environment_keeps_it():
    """scripts/lab-config/ (lab.sh's JUPYTER_CONFIG_PATH) disables every server extension nbgrader enables in this
    environment, its lab extension and jupytext's; without it (the instructor's `jupyter lab`, `nbgrader`) all stay
    enabled."""
    pytest.importorskip("nbgrader", reason="no nbgrader (bash scripts/setup.sh nbgrader)")
    pytest.importorskip("jupyterlab", reason="no JupyterLab (bash scripts/setup.sh)")
    server, lab_extensions, disabled = _jupyter_state(None)
    assert server and all(server.values()), server  # as nbgrader's install enables them
    learners = {NBGRADER_LAB_EXTENSION, JUPYTEXT_LAB_EXTENSION}
    assert learners <= lab_extensions and not learners & disabled, (lab_extensions, disabled)
    learner_server, _, learner_disabled = _jupyter_state(ROOT / "scripts" / "lab-config")
    assert learner_server == {module: False for module in server}, learner_server
    assert learner_disabled - disabled == learners


def _assert_no_nbgrader(page, base, token):
    """The page's JupyterLab has nbgrader's lab extension (and jupytext's) disabled where it is installed, shows nothing
    of nbgrader, and its server serves no formgrader."""
    import urllib.error
    import urllib.request

    config = json.loads(page.locator("#jupyter-config-data").text_content())
    federated = {e["name"] for e in config["federated_extensions"]}
    installed = federated & {NBGRADER_LAB_EXTENSION}
    assert installed <= set(config["disabledExtensions"]), config["disabledExtensions"]
    assert federated & {JUPYTEXT_LAB_EXTENSION} <= set(config["disabledExtensions"])  # jupytext's menus neither
    assert bool(installed) == (importlib.util.find_spec("nbgrader") is not None)  # installed, hence checked
    assert page.locator("[class*='nbgrader' i], [id*='nbgrader' i]").count() == 0
    assert not [label for label in _menu_labels(page) if "nbgrader" in label.lower()]
    with pytest.raises(urllib.error.HTTPError) as served:
        urllib.request.urlopen(f"{base}/formgrader?token={token}", timeout=10)
    assert served.value.code == 404


def test_lab_sh_shows_jupyterlabs_own_menus_in_the_labs_language(course, tmp_path):
    """Every menu of the menu bar in English, and in Chinese as the language pack translates it."""
    from tests import test_browser as tb

    tb._needs()
    from playwright.sync_api import expect, sync_playwright

    root, _ = course
    zh = _chinese_catalog()
    labels = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=tb.CHROMIUM, headless=True, args=tb.FLAGS)
        try:
            for lang, file_menu in (("en", "File"), ("zh", zh.pgettext("menu", "File"))):
                with _lab_sh(root, tmp_path / lang, lang) as (base, token):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    page.goto(f"{base}/lab?token={token}")
                    expect(page.locator(".lm-MenuBar-itemLabel").first).to_have_text(file_menu, timeout=tb.TIMEOUT_MS)
                    labels[lang] = _menu_labels(page)
                    _assert_no_nbgrader(page, base, token)  # the learner's lab, in either language
                    page.close()
        finally:
            browser.close()
    # JupyterLab's own menus, all in Chinese (nbgrader's, where installed, is not there: _assert_no_nbgrader)
    own = ["File", "Edit", "View", "Run", "Kernel", "Tabs", "Settings", "Help"]
    assert [label for label in labels["en"] if label in own] == own, labels
    assert labels["zh"] == [zh.pgettext("menu", label) for label in labels["en"]], labels
    assert labels["zh"][0] == "文件", labels
    assert all(re.search(r"[\u4e00-\u9fff]", zh_label) for en, zh_label in zip(*labels.values()) if en in own), labels


def _export_script(folder):
    """What the export cell of chapter 1 runs, after a right sinusoidal_table, as a script in the notebooks' folder
    (export_exercises reads the definitions from the main script's file outside IPython)."""
    script = folder / "learner_ch01.py"
    script.write_text("import math\n\nimport torch\n\n\n" + right_answer() + "\n\n\nimport posenc_selfcheck\n"
                      "posenc_selfcheck.export_exercises('01_sinusoidal', globals())\n")
    return script


LOAD = ("from posenc_selfcheck.mine import load_exercises\n"
        "impl = load_exercises(['sinusoidal_table'], fallback=False, quiet=True)\n"
        "print({k: str(v) for k, v in impl.sources.items()}, {k: str(v) for k, v in impl.problems.items()})\n")


def test_both_languages_share_one_posenc_mine(course):
    root, run = course
    assert run("bash", "scripts/lab.sh", "--lang", "zh", "--version").returncode == 0
    assert run("bash", "scripts/lab.sh", "--version").returncode == 0
    zh, en = root / "my_notebooks" / "zh", root / "my_notebooks"
    assert (zh / "posenc_mine").resolve() == (en / "posenc_mine").resolve()
    # nothing exported yet: neither folder finds chapter 1's exercise
    for folder in (zh, en):
        before = run(sys.executable, "-c", LOAD, cwd=folder)
        assert "not in your package yet" in before.stdout, before.stdout + before.stderr
    # chapter 1 read in Chinese exports; chapter 7 read in English (or in Chinese) finds it
    exported = run(sys.executable, _export_script(zh).name, cwd=zh)
    assert exported.returncode == 0, exported.stderr
    assert "wrote posenc_mine/ch01.py" in exported.stdout and "✓ sinusoidal_table: passed" in exported.stdout
    written = en / "posenc_mine" / "ch01.py"
    assert written.is_file() and "copied from 01_sinusoidal.ipynb" in written.read_text()
    for folder in (en, zh):
        after = run(sys.executable, "-c", LOAD, cwd=folder)
        assert "{'sinusoidal_table': 'yours, posenc_mine/ch01.py'} {}" in after.stdout, after.stdout + after.stderr


def _note(name, lang):
    """A chapter page's note as the book stages it (book/build.py's _page)."""
    spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
    book = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book)
    return book._page(name, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_books_note_opens_the_chapters_notebook_in_its_language_as_written(course, lang):
    root, run = course
    notes = [_note(page, lang) for page in ("chapter_note", "chapter_note_assignment")]  # solutions, assignment
    commands = set()
    for note in notes:
        assert bool(re.search(r"[\u4e00-\u9fff]", note)) == (lang == "zh")  # the note is in the page's language
        # the first command and the first folder it names are those of its language
        command = re.search(r"`(bash scripts/lab\.sh[^`]*)`", note).group(1)
        folder = re.search(r"`(my_notebooks/[^`]*)`", note).group(1)
        assert (command, folder) == {"en": ("bash scripts/lab.sh", "my_notebooks/"),
                                     "zh": ("bash scripts/lab.sh --lang zh", "my_notebooks/zh/")}[lang]
        commands.add((command, folder))
    ((command, folder),) = commands
    ran = run(*shlex.split(command), "--version")
    assert ran.returncode == 0, ran.stderr
    assert f"{root}/{folder.rstrip('/')}" in ran.stdout  # JupyterLab opens on that folder
    generated = root / "notebooks" / ("zh" if lang == "zh" else "")
    for chapter in sorted(generated.glob("[0-9][0-9]_*.ipynb")):  # every chapter's page: its notebook is there
        opened = json.loads((root / folder / chapter.name).read_text())
        assert opened["metadata"]["posenc"].get("language", "en").startswith(lang), chapter.name


def _commands(markdown):
    """The commands of a README's bash blocks, without their comments."""
    blocks = re.findall(r"^```bash\n(.*?)^```", markdown, flags=re.M | re.S)
    return [line.split("#")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_chinese_readme_gives_the_readmes_commands_with_the_chinese_lab():
    english, chinese = (ROOT / "README.md").read_text(), (ROOT / "README.zh-CN.md").read_text()
    assert "bash scripts/lab.sh" in _commands(english) and len(_commands(english)) >= 5
    assert _commands(chinese) == [c + " --lang zh" if c == "bash scripts/lab.sh" else c for c in _commands(english)]
    # each links the other from its first lines
    assert "](README.zh-CN.md)" in "\n".join(english.splitlines()[:4])
    assert "](README.md)" in "\n".join(chinese.splitlines()[:4])


def _english_words(report):
    """Words of English prose left in a Chinese report: outside code, identifiers, dtypes, numbers and a Python
    exception's message (the filter of tests/test_i18n.py's test of the self-check's Chinese report)."""
    words = []
    for line in report.splitlines():
        prose = re.sub(r"`[^`]*`|\w*_\w*|[A-Z][a-zA-Z]*Error.*$|[a-z]+\(|float\d+|\d\w*", " ", line)
        words += [w for w in re.findall(r"[A-Za-z]{3,}", prose) if w not in ("sin", "cos", "atol", "rtol", "base")]
    return words


# JupyterLab's interface, region by region: the text it shows (the DOM's rendered text, not tooltips), without the
# notebook's own content
INTERFACE = {
    "menu bar": "#jp-menu-panel",
    "tab bar": ".lm-DockPanel-tabBar",
    "notebook toolbar": ".jp-NotebookPanel-toolbar",
    "status bar": "#jp-main-statusbar",
    "side bars": ".jp-SideBar",
    "side panel": "#jp-left-stack",
}
# Latin words the Chinese interface may show: product and format names, as the language pack writes them too
# ("保存 Notebook"), and the names of keys in shortcuts ("Ctrl+Shift+Up"); single letters (keys: "D, D") pass. The
# file names of the lab's folder and the kernel's name pass too, as do the kernel's help links (ipykernel's own
# text, which JupyterLab's Help menu shows as the kernel gives it: the kernel speaks no language of the lab's)
LATIN_ALLOWED = {
    "products": {"JupyterLab", "Jupyter", "Notebook", "Python", "Markdown"},
    "abbreviations": {"URL"},
    # File > Save and Export Notebook As: nbconvert's formats
    "formats": {"Asciidoc", "HTML", "LaTeX", "PDF", "Qtpdf", "Qtpng", "ReStructured", "Reveal", "js", "Webpdf"},
    "keys": {"Ctrl", "Shift", "Alt", "Enter", "Backspace", "Up", "Down", "Esc", "Tab", "Space", "Delete"},
}

# submenus (by id) that list names, the same in every language, which the check leaves out
NAME_LISTS = {
    "jp-mainmenu-view-codemirror-language": "the languages the text editor highlights: APL, C++, Common Lisp, ...",
    "jp-mainmenu-settings-codemirror-theme": "the text editor's themes: jupyter, codemirror",
    "jp-mainmenu-settings-language": "the interface's languages, each also in its own name: 英语 - English",
}


def _kernel_help_links():
    from ipykernel.ipkernel import IPythonKernel

    return [link["text"] for link in IPythonKernel.class_traits()["help_links"].default()]


def _interface_texts(page, kernel_menu):
    """The interface's text, region by region: each region of INTERFACE, every menu of the menu bar opened with its
    submenus, and the kernel's restart dialog (cancelled; `kernel_menu`: the Kernel menu's label)."""
    texts = {name: "\n".join(page.locator(selector).all_inner_texts()) for name, selector in INTERFACE.items()}
    bar = page.locator(".lm-MenuBar-item")
    for i in range(bar.count()):
        bar.nth(i).click()
        menu = page.locator(".lm-Menu").first  # a submenu opens after it
        menu.wait_for()
        name = f"menu {bar.nth(i).inner_text()}"
        texts[name] = menu.inner_text()
        submenus = menu.locator(".lm-Menu-item[data-type='submenu']")
        command = menu.locator(".lm-Menu-item[data-type='command']").first
        for j in range(submenus.count()):
            # the previous submenu closed (the pointer on a command), this one opened
            command.hover()
            page.wait_for_function("() => document.querySelectorAll('.lm-Menu').length === 1")
            item = submenus.nth(j)
            label = item.locator(".lm-Menu-itemLabel").inner_text()
            item.hover()
            page.wait_for_function("() => document.querySelectorAll('.lm-Menu').length > 1")
            submenu = page.locator(".lm-Menu").nth(1)
            if submenu.get_attribute("id") not in NAME_LISTS:
                texts[f"{name} > {label}"] = submenu.inner_text()
        for _ in range(3):  # a submenu, then its menu
            if not page.locator(".lm-Menu").count():
                break
            page.keyboard.press("Escape")
            page.wait_for_timeout(100)
        assert not page.locator(".lm-Menu").count(), name
    page.locator(".lm-MenuBar-item", has_text=kernel_menu).first.click()  # Restart Kernel…
    page.locator(".lm-Menu-item[data-command='kernelmenu:restart']").first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    texts["dialog"] = dialog.inner_text()
    dialog.locator(".jp-mod-reject").click()
    dialog.wait_for(state="detached")
    return texts


def _latin_words_outside_the_allowed(texts, names):
    """{region: [word, ...]}: the Latin words of each region's text that LATIN_ALLOWED does not allow, once the names
    passed (file names, the kernel's) are taken out."""
    allowed = set().union(*LATIN_ALLOWED.values())
    offenders = {}
    for region, text in texts.items():
        for name in sorted(names, key=len, reverse=True):
            text = text.replace(name, " ")
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text) if w not in allowed]
        if words:
            offenders[region] = words
    return offenders


def test_a_chinese_learner_works_chapter_1_in_the_lab_that_lab_sh_lang_zh_opens(course, tmp_path, capsys):
    """A real JupyterLab, started by `lab.sh --lang zh` (with the browser tests' kernel): its menus in Chinese,
    chapter 1 in Chinese, a wrong answer diagnosed in Chinese, then a right one passes."""
    from tests import test_browser as tb

    tb._needs()
    from playwright.sync_api import expect, sync_playwright

    root, run = course
    lab = run("bash", "scripts/lab.sh", "--lang", "zh", "--version")
    work = root / "my_notebooks" / "zh"
    assert lab.returncode == 0 and f"JupyterLab 打开 {work} 中你的 notebook" in lab.stdout, lab.stdout + lab.stderr
    with _lab_sh(root, tmp_path, "zh") as (base, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=tb.CHROMIUM, headless=True, args=tb.FLAGS)
        try:
            page = tb.open_notebook(browser, base, token, "01_sinusoidal.ipynb")
            expect(page.locator(".jp-Notebook .jp-MarkdownOutput").first).to_contain_text("正弦位置编码")
            assert _menu_labels(page)[0] == "文件"
            exercise = tb.code_cell(page, "def sinusoidal_table")
            selfcheck = tb.code_cell(page, 'check("sinusoidal_table"')
            tb.run_all_above(page, exercise, _chinese_catalog().pgettext("menu", "Run"))
            tb.type_into(page, exercise, tb.wrong_answer())
            tb.run_selected_and_next(page)
            text = tb.wait_for_output(selfcheck, r"项检查中有 \d+ 项未通过")
            assert "sin 和 cos 放反了" in text and "提示 1/" in text
            assert _english_words(text) == [], text
            selfcheck.scroll_into_view_if_needed()
            shots = [tb.shot(page, "07_zh_lab_wrong_answer.png")]
            tb.type_into(page, exercise, tb.right_answer())
            tb.run_selected_and_next(page)
            text = tb.wait_for_output(selfcheck, r"(?<!未)通过（\d")
            assert "✗" not in text and "未通过" not in text
            shots.append(tb.shot(page, "08_zh_lab_right_answer.png"))
            # the lab's interface, every word of it in Chinese, and nothing of nbgrader's
            started = time.monotonic()
            texts = _interface_texts(page, _chinese_catalog().pgettext("menu", "Kernel"))
            kernel = json.loads((tmp_path / "jupyter" / "kernels" / "posenc-course" / "kernel.json").read_text())
            names = [str(work), *(p.name for p in work.iterdir()), kernel["display_name"], "posenc-course",
                     *_kernel_help_links()]
            offenders = _latin_words_outside_the_allowed(texts, names)
            with capsys.disabled():
                print(f"\nthe Chinese lab's interface: {sum(map(len, texts.values()))} characters in {len(texts)} "
                      f"regions, read in {time.monotonic() - started:.1f} s; English words: {offenders or 'none'}")
            assert offenders == {}, offenders
            assert all(re.search(r"[\u4e00-\u9fff]", texts[region]) for region in ("menu bar", "status bar", "dialog"))
            _assert_no_nbgrader(page, base, token)
        finally:
            browser.close()
    with capsys.disabled():
        print(f"\nbrowser test screenshots: {tb.SHOTS} ({', '.join(s.name for s in shots)})")
