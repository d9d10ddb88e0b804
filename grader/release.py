"""python -m grader release OUT: the bundle students get.

    OUT/NN_name.ipynb          the student notebooks (generated from chapters/ by the build)
    OUT/zh/NN_name.ipynb       the same notebooks in Chinese (the self-checks answer in Chinese there)
    OUT/posenc_selfcheck/      the self-check package with its stored answers (data/)
    OUT/README.md              how to set up, work through the notebooks and submit
    OUT/requirements.txt

No solutions, no `posenc_ref`, no grader, no hidden checks or probes. The release refuses to write
a bundle in which `scan` finds any of them: a line of a solution region in a notebook, most of a
solution region in the self-check's code, the solution markers, a folder of the instructor's side, or
stored answers of a check that is not public.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from .leaks import code, has_markers, leaked_lines, solution_regions
from .settings import BOUNDS, WAITS

REPO = Path(__file__).resolve().parent.parent
MARKER = ".posenc-release"
# What holds the grader's secret, the reference or the hidden checks, as .gitignore patterns: every one is in
# .gitignore (tests/test_release.py), `release` refuses to run while git tracks a file it matches, and the
# `gradescope` and `nbgrader` commands write only outside the repository or under a git-ignored folder.
PRIVATE = {
    ".grader-secret": "the grader's secret",
    "/instructor/": "the instructor's outputs: Gradescope bundles, nbgrader courses",
    "*.zip": "a Gradescope bundle (the secret, the reference and the hidden checks)",
    "nbgrader_config.py": "an nbgrader course (solutions and the grader's test cells)",
    "gradebook.db": "nbgrader's gradebook",
    "/grading/": "batch results (hidden checks' feedback)",
}
PRIVATE_FOLDER = "instructor"  # the git-ignored folder the documented commands write to
FORBIDDEN_PARTS = {"posenc_ref", "grader", "solutions", "course", "hidden_probes", ".git", "tests", "mistakes"}
GRADER_ONLY = {"nbformat", "jupytext", "pytest", "ipykernel"}

README = """# Positional encodings in Transformers: the notebooks

Work through the notebooks in order, from `00_…` on. Each exercise is a function or class whose body
raises `NotImplementedError` under a `# Hint` comment: replace that line with your code, then run the
self-check cell right below it. It answers in milliseconds, and when something is wrong it says what
(for example "sin and cos are swapped"), not only that something is.

## Set up

Python 3.10 or newer:

```bash
python -m venv .venv && source .venv/bin/activate
python -m pip install -r requirements.txt
jupyter lab
```

`zh/` holds the same notebooks in Chinese (中文版), with the same code cells; their self-checks answer in Chinese.

Keep `posenc_selfcheck/` next to the notebooks: it is what `from posenc_selfcheck import check` imports.
It holds small public checks and the answers expected of them (`posenc_selfcheck/data/`), so it needs
no solution code.

## Submitting

Upload your notebooks as they are (clear large outputs first: a notebook over 50 MB is not graded).
Keep the exercise names and signatures. The grader runs the self-checks and more checks on other
inputs, in a sandbox, and grades each exercise on its own: a cell that fails, a demo left running,
or an unfinished exercise costs only that exercise. Only definitions (imports, functions, classes,
assignments) are executed at grading time; plots and loops are not re-run.
"""


def _texts(folder):
    """(path, text) for every text file; notebooks as the source of their cells."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix in (".safetensors", ".png"):
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".ipynb":
            try:
                text = "\n".join("".join(c.get("source", "")) for c in json.loads(text)["cells"])
            except (ValueError, KeyError, TypeError, AttributeError):
                pass
        yield path, text


def scan(folder):
    """Everything in `folder` that must not reach students; [] when the bundle is clean."""
    from .checks import all_checks

    folder = Path(folder)
    problems = []
    for path in folder.rglob("*"):
        parts = set(path.relative_to(folder).parts)
        if parts & FORBIDDEN_PARTS:
            problems.append(f"{path.relative_to(folder)}: instructor-only folder")
    regions = solution_regions()
    for path, text in _texts(folder):
        rel = path.relative_to(folder)
        if has_markers(text):
            problems.append(f"{rel}: solution markers")
        if path.suffix in (".ipynb", ".md"):  # what students read: not one line of a solution
            problems += [f"{rel}: a solution line: {leak[:80]}" for leak in leaked_lines(text, regions)]
            continue
        lines = {code(line) for line in text.splitlines()}
        for chapter, region in regions:  # the self-check's own code: no solution body (most of a region)
            hits = [line for line in region if line in lines]
            if region and len(hits) >= max(min(2, len(region)), (len(region) + 1) // 2):
                problems.append(f"{rel}: {len(hits)} of {len(region)} lines of a solution in {chapter}: {hits[0][:60]}")
    public = {c.key for c in all_checks() if c.public}
    for data in sorted((folder / "posenc_selfcheck" / "data").glob("*.json")):
        index = json.loads(data.read_text()).get("_index", {})
        for key in sorted({k for keys in index.values() for k in keys} - public):
            problems.append(f"{data.relative_to(folder)}: answers of {key}, which is not a public check")
    return problems


def _private_match(path):
    """The PRIVATE pattern a repository-relative path (posix) matches, or None."""
    from fnmatch import fnmatch

    parts = path.split("/")
    for pattern in PRIVATE:
        if pattern.startswith("/") and pattern.endswith("/"):
            if parts[0] == pattern.strip("/") and len(parts) > 1:
                return pattern
        elif any(fnmatch(part, pattern) for part in parts):
            return pattern
    return None


def git_files(repo=REPO):
    """The files git tracks in `repo` (`git ls-files`), or None where it is no git checkout (or git is missing)."""
    import subprocess

    try:
        run = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, timeout=WAITS.git_seconds)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [name for name in run.stdout.decode("utf-8", "replace").split("\0") if name] if run.returncode == 0 \
        else None


def tracked_private(repo=REPO, files=None):
    """['path: what it holds'] for every tracked file that holds the secret, the reference or hidden checks."""
    files = git_files(repo) if files is None else files
    return [f"{path}: {PRIVATE[pattern]}" for path in files or [] for pattern in [_private_match(path)] if pattern]


def ignored(path, repo=REPO):
    """Whether git ignores `path` (inside `repo`; it need not exist yet). Where git cannot say (no checkout, no
    git): whether it is under PRIVATE_FOLDER, which .gitignore names."""
    import subprocess

    try:
        run = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", "--no-index", str(path)],
                             capture_output=True, timeout=WAITS.git_seconds)
    except (OSError, subprocess.TimeoutExpired):
        run = None
    if run is not None and run.returncode in (0, 1):  # 0: ignored, 1: not ignored, 128: git could not say
        return run.returncode == 0
    return Path(path).is_relative_to(Path(repo) / PRIVATE_FOLDER)


def private_output(path, what, repo=REPO):
    """Refuse (ValueError) to write instructor-only output (`what`) to `path` inside the repository's tracked tree:
    it goes outside the repository, or under a git-ignored folder (instructor/)."""
    path = Path(path).absolute()
    repo = Path(repo).resolve()
    resolved = path.resolve()
    if not resolved.is_relative_to(repo) or ignored(resolved, repo):
        return path
    raise ValueError(f"{path} is inside the repository and not git-ignored, and {what} holds the grader's secret, "
                     f"the reference or the hidden checks (one `git add -A` would publish them): write it outside "
                     f"the repository or under {PRIVATE_FOLDER}/ (git-ignored), e.g. {PRIVATE_FOLDER}/{path.name}")


def _requirements():
    try:
        import tomllib  # Python 3.11+

        deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    except ImportError:
        deps = ["torch>=2.4,<3", "numpy>=1.24", "safetensors>=0.4", "matplotlib>=3.7"]
    keep = [d for d in deps if re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower() not in GRADER_ONLY]
    return "\n".join(keep + ["jupyterlab>=4"]) + "\n"


def build_release(out, check_sync=True, progress=False, assignment=None):
    """Write the bundle to `out` (replacing an earlier release there); return its files. With
    `progress`, each step is said on stderr as it starts. With `assignment` (grader/assignment.py), only its
    chapters' notebooks (the self-check package stays whole: it holds public checks only)."""
    from .progress import announce

    out = Path(out).resolve()
    tracked = tracked_private()
    if tracked:
        raise RuntimeError("git tracks files that hold the grader's secret, the reference or hidden checks (`git rm "
                           "--cached` them; .gitignore covers them):\n  "
                           + "\n  ".join(tracked[:BOUNDS.listed_problems]))
    if check_sync:
        announce("[1/3] checking that the generated files are in sync with chapters/ (renders every chapter)…",
                 progress)
        from . import build

        if build.main(["--check"]) != 0:
            raise RuntimeError("generated files are out of date: run `python -m grader build` first")
    if out.exists():
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise RuntimeError(f"{out} exists and is not an earlier release: choose an empty folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    announce("[2/3] copying the student notebooks and the self-check package…", progress)
    for notebook in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if assignment is None or f"ch{notebook.name[:2]}" in assignment.chapters:
            shutil.copy(notebook, out / notebook.name)
            # the Chinese edition of the same notebook (identical code cells), beside a link to the self-check
            translated = REPO / "notebooks" / "zh" / notebook.name
            if translated.is_file():
                (out / "zh").mkdir(exist_ok=True)
                shutil.copy(translated, out / "zh" / notebook.name)
    if (out / "zh").is_dir():
        (out / "zh" / "posenc_selfcheck").symlink_to("../posenc_selfcheck")
    shutil.copytree(REPO / "posenc_selfcheck", out / "posenc_selfcheck",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    (out / "README.md").write_text(README)
    (out / "requirements.txt").write_text(_requirements())
    announce("[3/3] scanning the bundle for solutions, the reference and hidden checks…", progress)
    problems = scan(out)
    if problems:
        shutil.rmtree(out)
        raise RuntimeError("the release would leak instructor material:\n  "
                           + "\n  ".join(problems[:BOUNDS.listed_problems]))
    (out / MARKER).write_text("generated by `python -m grader release`; safe to delete and regenerate\n")
    return sorted(str((Path(folder) / name).relative_to(out)) for folder, _, names in os.walk(out)
                  for name in names if not (Path(folder) / name).is_symlink())  # not through the zh/ link
