"""The course in a real browser: JupyterLab on 127.0.0.1, headless Chromium driven by Playwright, the student
bundle's chapter 1. A wrong answer typed into the exercise cell gets the self-check's diagnosis; a right one
gets "all ... checks passed"; a plot renders as an image; the math is typeset by MathJax. Then chapter 7's
solution, Run All in its reduced configuration: each experiment's figure renders as an image.

Needs Debian's chromium (/usr/bin/chromium) and the Python package playwright (no browser download: it
launches that chromium); skipped, with the reason, without them. .ci/run installs both. Screenshots go to
out/browser/ (POSENC_BROWSER_SHOTS to choose another folder). About a minute.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from grader.release import build_release
from tests.conftest import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path(os.environ.get("POSENC_BROWSER_SHOTS", ROOT / "out" / "browser"))
TIMEOUT_MS = 60_000


def _function(path_or_source, name):
    """The source of one top-level function."""
    source = Path(path_or_source).read_text() if isinstance(path_or_source, Path) else path_or_source
    (node,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return ast.get_source_segment(source, node)


def wrong_answer():
    """A learner's sinusoidal_table with sin and cos swapped (tests/submissions/ch01_swapped.py)."""
    return "import math\n\n" + _function(ROOT / "tests" / "submissions" / "ch01_swapped.py", "sinusoidal_table")


def right_answer():
    """The solution notebook's sinusoidal_table."""
    nb = json.loads((ROOT / "solutions" / "01_sinusoidal.ipynb").read_text())
    source = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    return _function(source, "sinusoidal_table")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _needs():
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium (Debian: apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="no playwright (pip install playwright)")
    pytest.importorskip("jupyterlab", reason="no JupyterLab (bash scripts/setup.sh)")


def _answers(server, base, token, log):
    """True once JupyterLab answers; False when it ended because its port was taken; raises otherwise."""
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return True
        except OSError:
            if server.poll() is not None and "already in use" in log.read_text():
                return False
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start:\n" + log.read_text()[-3000:])
            time.sleep(0.3)


@contextlib.contextmanager
def jupyterlab(tmp, root, command=None, settings=None, **env_vars):
    """JupyterLab serving `root`, with its own Jupyter path and user-wide settings under `tmp`: (base URL, token).
    Started by this interpreter, or by `command`, such as scripts/lab.sh, which serves `root` of itself; the test's
    settings go under `tmp`, or into `settings`, the folder such a command passes JupyterLab instead (`tmp`'s are
    then the learner's own, which it must leave alone)."""
    # the course's kernel, for this interpreter, in a Jupyter path of the test's own; settings of its own:
    # every cell in the page (no windowing), no news or update checks (no network here)
    kernel = tmp / "jupyter" / "kernels" / "posenc-course"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (posenc-course)", "language": "python"}))
    settings = Path(settings or tmp / "settings")
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True, exist_ok=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}')
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True, exist_ok=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"checkForUpdates": false, "fetchNews": "false"}')
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_PATH": str(tmp / "jupyter"), "JUPYTER_CONFIG_DIR": str(tmp / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"), "HOME": str(tmp), **env_vars}
    env.pop("PYTHONPATH", None)
    env.pop("POSENC_LANG", None)  # the language comes from the notebook
    # a port free a moment ago may be taken by the time JupyterLab binds it (other workers start servers and
    # kernels meanwhile): then it ends at once, saying so, and starts again on another
    for _ in range(3):
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        with open(tmp / "jupyterlab.log", "w") as log:
            server = subprocess.Popen(
                [*(command or (sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}")), "--no-browser",
                 "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                 f"--IdentityProvider.token={token}",
                 "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                 *(["--allow-root"] if os.geteuid() == 0 else [])],
                cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            if _answers(server, base, token, tmp / "jupyterlab.log"):
                yield base, token
                return
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, 9)
                server.wait()
    raise RuntimeError("JupyterLab's port was taken three times:\n" + (tmp / "jupyterlab.log").read_text()[-3000:])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a fresh student bundle: (base URL, token)."""
    _needs()
    tmp = tmp_path_factory.mktemp("browser")
    bundle = tmp / "bundle"
    build_release(bundle, check_sync=False)  # with the Chinese edition in zh/
    with jupyterlab(tmp, bundle) as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    _needs()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def open_notebook(browser, base, token, name):
    """A new page on notebook `name`, once its kernel (the course's) is idle."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    # the notebook asks for the course's kernel; it is up when the toolbar says it is idle
    expect(page.locator(".jp-Notebook-toolbarKernelName, .jp-KernelName").first).to_contain_text(
        "posenc-course", timeout=TIMEOUT_MS)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
    return page


@pytest.fixture(scope="module")
def page(lab, browser):
    base, token = lab
    page = open_notebook(browser, base, token, "01_sinusoidal.ipynb")
    yield page
    page.close()


def code_cell(page, text):
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=text).first


def type_into(page, cell, source):
    """Replace a cell's code by typing into its editor, as a learner would."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)


def run_all_above(page, cell, run_menu="Run"):
    """Run > Run All Above Selected Cell (`run_menu`: the Run menu in the lab's language), then wait until the import
    of the self-check has run (its prompt has a number): typing into the exercise before that raced the kernel, and
    the self-check found no `check`."""
    cell.locator(".cm-content").click()
    page.locator(".lm-MenuBar-item", has_text=run_menu).first.click()
    page.locator(".lm-Menu-item[data-command='notebook:run-all-above']").first.click()
    setup = code_cell(page, "from posenc_selfcheck import check")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not re.search(r"\[\d+\]", setup.locator(".jp-InputPrompt").first.inner_text()):
        if time.monotonic() > deadline:
            raise AssertionError("the cells above the exercise did not run")
        time.sleep(0.2)


def run_selected_and_next(page):
    """Shift+Enter twice: the selected cell (the exercise) and the one below it (its self-check)."""
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")


def output_text(cell):
    return cell.locator(".jp-OutputArea").inner_text()


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))
    return SHOTS / name


def wait_for_output(cell, pattern, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = output_text(cell)
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"no output matching {pattern!r}; the cell shows:\n{output_text(cell)[-2000:]}")


def test_a_learner_works_an_exercise_in_jupyterlab(page, capsys):
    exercise = code_cell(page, "def sinusoidal_table")
    selfcheck = code_cell(page, 'check("sinusoidal_table"')
    run_all_above(page, exercise)  # the imports above the exercise first

    type_into(page, exercise, wrong_answer())
    run_selected_and_next(page)
    text = wait_for_output(selfcheck, r"checks failed")
    assert "sin and cos are swapped" in text
    selfcheck.scroll_into_view_if_needed()
    shots = [shot(page, "01_wrong_answer_diagnosed.png")]

    type_into(page, exercise, right_answer())
    run_selected_and_next(page)
    text = wait_for_output(selfcheck, r"all \d+ checks passed")
    assert "✗" not in text
    shots.append(shot(page, "02_right_answer_passes.png"))

    plot = code_cell(page, "def plot_table")
    plot.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    image = plot.locator(".jp-OutputArea-output img").first
    image.wait_for()
    width, height = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
    assert width > 100 and height > 100  # a real picture, decoded by the browser
    image.scroll_into_view_if_needed()
    shots.append(shot(page, "03_plot.png"))

    math = page.locator(".jp-Notebook .jp-MarkdownOutput mjx-container")
    math.first.wait_for()
    assert math.count() > 10  # the chapter's formulas, typeset by MathJax
    page.locator(".jp-Notebook .jp-MarkdownOutput").filter(has_text="The formula").first.scroll_into_view_if_needed()
    shots.append(shot(page, "04_math.png"))
    with capsys.disabled():
        print(f"\nbrowser test screenshots: {SHOTS} ({', '.join(p.name for p in shots)})")


def test_chapter_7s_figures_render_in_jupyterlab(browser, tmp_path_factory, capsys):
    """Chapter 7's solution (the reduced run, seconds): Run All shows each experiment's figure as a picture."""
    tmp = tmp_path_factory.mktemp("browser7")
    root = tmp / "course"
    root.mkdir()
    # a copy, so that JupyterLab's autosave never writes into the repository; the lab's package beside it
    # (a link into the repository, where the reference fills in the chapters 1-5 exercises)
    shutil.copy(ROOT / "solutions" / "07_train_short_test_long.ipynb", root)
    (root / "posenc_selfcheck").symlink_to(ROOT / "posenc_selfcheck")
    with jupyterlab(tmp, root, POSENC_CH7_RUN="reduced") as (base, token):
        page = open_notebook(browser, base, token, "07_train_short_test_long.ipynb")
        try:
            page.locator(".lm-MenuBar-item", has_text="Run").first.click()
            page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
            last = code_cell(page, "export_exercises")
            wait_for_output(last, r"\S", timeout_s=300)  # the last cell ran: every experiment before it did
            sizes = []
            for step in ("experiment.extrapolation()", "experiment.rope_scaling()", "experiment.attention_maps()",
                         "experiment.position_probe()"):
                cell = code_cell(page, step)
                image = cell.locator(".jp-OutputArea-output img").first
                image.wait_for()
                sizes.append(image.evaluate("img => [img.naturalWidth, img.naturalHeight]"))
                assert "<Figure size" not in output_text(cell), step
            assert all(w > 300 and h > 200 for w, h in sizes), sizes  # real pictures, decoded by the browser
            code_cell(page, "experiment.extrapolation()").scroll_into_view_if_needed()
            path = shot(page, "06_chapter7_figure.png")
        finally:
            page.close()
    with capsys.disabled():
        print(f"\nbrowser test screenshot: {path}")


def test_a_chinese_notebook_gets_a_chinese_diagnosis(lab, page):
    """The Chinese student notebook (notebooks/zh/) in the same JupyterLab: the self-check reads the notebook's
    language from its metadata (JupyterLab tells the kernel which notebook it runs) and answers in Chinese."""
    base, token = lab
    zh = page.context.browser.new_page(viewport={"width": 1400, "height": 1000})
    zh.set_default_timeout(TIMEOUT_MS)
    try:
        # a workspace of its own: only this notebook open (the default one restores the English notebook)
        zh.goto(f"{base}/lab/workspaces/zh/tree/zh/01_sinusoidal.ipynb?token={token}")
        zh.locator(".jp-Notebook .jp-Cell").first.wait_for()
        from playwright.sync_api import expect

        expect(zh.locator(".jp-Notebook-toolbarKernelName, .jp-KernelName").first).to_contain_text(
            "posenc-course", timeout=TIMEOUT_MS)
        zh.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
        expect(zh.locator(".jp-Notebook .jp-MarkdownOutput").first).to_contain_text("正弦位置编码")
        exercise = code_cell(zh, "def sinusoidal_table")
        selfcheck = code_cell(zh, 'check("sinusoidal_table"')
        run_all_above(zh, exercise)
        type_into(zh, exercise, wrong_answer())
        run_selected_and_next(zh)
        text = wait_for_output(selfcheck, r"项检查中有 \d+ 项未通过")
        assert "sin 和 cos 放反了" in text and "提示 1/" in text
        assert "checks failed" not in text and "sin and cos are swapped" not in text
        selfcheck.scroll_into_view_if_needed()
        shot(zh, "05_zh_wrong_answer_diagnosed.png")
    finally:
        zh.close()
