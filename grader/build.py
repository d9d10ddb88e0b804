"""Build every generated file from the chapter sources; `--check` proves they are in sync.

One hand-edited source per chapter: `chapters/NN_name.py` (jupytext py:percent). From it:
  notebooks/NN_name.ipynb   student notebook: each `### BEGIN SOLUTION` ... `### END SOLUTION`
                            region becomes its hint comments plus `raise NotImplementedError`
  solutions/NN_name.ipynb   the complete notebook, markers removed
  posenc_ref/chNN_name.py   the reference: the cells marked `#| export`, solutions included
  posenc_selfcheck/data/chNN.{json,safetensors}
                            public checks with the reference's answers and the answers of
                            known mistakes, so self-checks need no reference code
and docs/conventions.md's exercise tables (between their markers) from grader/checks/chNN.py's
`CONVENTIONS` and the reference's signatures (grader/conventions.py).
Notebooks are written without outputs or execution counts, and with a fingerprint of their cells in their
metadata (`posenc.cells_sha256`): a notebook whose cells no longer match it holds edits the build did not
make (a learner saved work there), and the build never overwrites or deletes it: it keeps it, says so, and
exits 1. Learners work in their own copies, `my_notebooks/` (`scripts/lab.sh`), which nothing regenerates.

    python -m grader build           write everything
    python -m grader build --check   compare with what is on disk; exit 1 on any difference
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from . import i18n_build, shipped
from .files import cells_fingerprint
from .leaks import BEGIN, END, chapter_sources
from .settings import WAITS

ROOT = Path(__file__).resolve().parent.parent
EXPORT = "#| export"
STUB = 'raise NotImplementedError("exercise not finished: replace this line with your code")'
GENERATED = '"""Generated from chapters/{src} by `python -m grader build`. Do not edit: edit the chapter."""\n'
MARK = "posenc"  # the notebook metadata key the build writes: {"generated_from": ..., "cells_sha256": ...}
LEARNER_COPIES = "my_notebooks"  # where scripts/lab.sh puts the learner's own copies




def _regions(source, student):
    """Rewrite solution regions: keep them (markers dropped) or replace them by hints + a stub.

    A region may open with a block of comment lines whose first says `# Hint`: the student
    notebook keeps that block above the stub."""
    out, region, indent = [], None, ""
    for line in source.splitlines():
        begin = BEGIN.match(line)
        if begin:
            if region is not None:
                raise ValueError("nested ### BEGIN SOLUTION")
            region, indent = [], begin.group(1)
            continue
        if END.match(line):
            if region is None:
                raise ValueError("### END SOLUTION without BEGIN")
            if student:
                hints = []
                if region and region[0].strip().lower().startswith("# hint"):
                    for kept in region:
                        if not kept.strip().startswith("#"):
                            break
                        hints.append(kept)
                out.extend(hints + [indent + STUB])
            else:
                out.extend(region)
            region = None
            continue
        (out if region is None else region).append(line)
    if region is not None:
        raise ValueError("### BEGIN SOLUTION without END")
    return "\n".join(out)


def _clean(nb):
    """No outputs, no execution counts, no jupytext bookkeeping."""
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n:03d}"  # deterministic ids keep the generated files stable
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("lines_to_next_cell", None)
        cell.metadata.pop("lines_to_end_of_cell_marker", None)
    nb.metadata.pop("jupytext", None)
    # the course's own kernel (scripts/setup.sh registers it inside the course's environment)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (posenc-course)", "language": "python",
                                 "name": "posenc-course"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _without_export_line(source):
    lines = source.splitlines()
    if lines and lines[0].strip() == EXPORT:
        lines = lines[1:]
    return "\n".join(lines)


PLACEHOLDER = re.compile(r"\{\{([^{}:]+)(?::([^{}]+))?\}\}")


def results_of(path):
    """The measured results a chapter's text quotes (docs/chapterN/results.json), or None."""
    results = ROOT / "docs" / f"chapter{int(path.stem.split('_')[0])}" / "results.json"
    return json.loads(results.read_text()) if results.exists() else None


def fill(text, results, where="text"):
    """Replace each {{path.to.value}} or {{path.to.value:format}} (default .2f) by the value in `results`:
    the numbers the text quotes come from the measurement, never typed by hand. A negative number gets a
    typographic minus."""

    def value(match):
        node = results
        for key in match.group(1).strip().split("."):
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise ValueError(f"{where}: {{{{{match.group(1)}}}}} is not in the results") from None
        return format(node, match.group(2) or ".2f").replace("-", "\u2212")

    if results is None and PLACEHOLDER.search(text):
        raise ValueError(f"{where}: quotes results, but there is no results.json for it")
    return PLACEHOLDER.sub(value, text)


def render(path):
    """(student notebook text, solution notebook text, reference module text) for one chapter."""
    import jupytext

    nb = jupytext.read(path)
    results = results_of(path)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = fill(cell.source, results, path.name)
    exported = []
    student, solution = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    for cell in nb.cells:
        for target, is_student in ((student, True), (solution, False)):
            copy = nbformat.from_dict(dict(cell))
            if cell.cell_type == "code":
                copy.source = _regions(_without_export_line(cell.source), is_student)
                if is_student and "solution-only" in cell.metadata.get("tags", []):
                    continue
            target.cells.append(copy)
        if cell.cell_type == "code" and cell.source.splitlines()[:1] == [EXPORT]:
            exported.append(_regions(_without_export_line(cell.source), student=False))
    for target in (student, solution):
        target.metadata = nbformat.from_dict(dict(nb.metadata))
        _clean(target)
        target.metadata[MARK] = {"generated_from": f"chapters/{path.name}",
                                 "cells_sha256": cells_fingerprint(target.cells)}
    module = GENERATED.format(src=path.name) + "\n" + "\n\n\n".join(exported).strip() + "\n"
    return nbformat.writes(student) + "\n", nbformat.writes(solution) + "\n", module


def _unmodified_in_git(path):
    """True when `path` is tracked and equal to its committed version (a notebook from before fingerprints)."""
    try:
        tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch", "--", str(path)],
                                 capture_output=True, timeout=WAITS.git_seconds).returncode == 0
        return tracked and subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", str(path)],
                                          capture_output=True, timeout=WAITS.git_seconds).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def holds_edits(path):
    """True when the notebook at `path` holds cells the build did not write: someone's work, never overwritten."""
    path = Path(path)
    if path.suffix != ".ipynb" or not path.exists():
        return False
    try:
        nb = json.loads(path.read_text())
        mark = nb.get("metadata", {}).get(MARK)
        if isinstance(mark, dict) and "cells_sha256" in mark:
            return cells_fingerprint(nb.get("cells", [])) != mark["cells_sha256"]
    except (OSError, ValueError, AttributeError, TypeError):
        return True  # unreadable as a notebook: not ours to replace
    return not _unmodified_in_git(path)


def reference_module_name(path):
    number, name = path.stem.split("_", 1)
    return f"ch{number}_{name}"


def planned_files():
    """{path: text} of every generated file except the self-check data."""
    files, modules = {}, []
    for path in chapter_sources():
        student, solution, module = render(path)
        files[ROOT / "notebooks" / f"{path.stem}.ipynb"] = student
        files[ROOT / "solutions" / f"{path.stem}.ipynb"] = solution
        files[ROOT / "posenc_ref" / f"{reference_module_name(path)}.py"] = module
        modules.append(reference_module_name(path))
    init = ['"""The reference implementation: every exercise, generated from the chapters\' solutions.',
            "", "Instructor-only. Generated by `python -m grader build`; do not edit.", '"""', ""]
    init += [f"from .{m} import *  # noqa: F401,F403" for m in modules]
    files[ROOT / "posenc_ref" / "__init__.py"] = "\n".join(init) + "\n"
    files[ROOT / "posenc_selfcheck" / "data" / "hints.json"] = hints_json()
    files[shipped.CALLS] = shipped.notebook_calls()  # inputs whose answers the notebooks show: never drawn
    files.update(i18n_build.planned_files(files))  # notebooks/zh, solutions/zh (locale/zh_CN catalogs)
    return files


def hints_json():
    """The ladders of hints declared in grader/checks/chNN.py, as the self-check reads them (hints.py)."""
    from .checks import hints, mistakes

    data = {"exercises": hints(),
            "mistakes": {name: {"levels": m.hints, "wrong": m.wrong, **({"also": m.also} if m.also else {})}
                         for name, m in mistakes().items()}}
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def selfcheck_data():
    """{chapter: results} for public checks, computed from the (freshly imported) reference: on one thread, as
    the grader computes them (grader/remote.py), so the data is the same on every machine; the tensors are
    small, and a second thread only added waiting (build --check: 9.3 s on two threads, 6.1 s on one)."""
    import torch

    from grader import checks as checks_pkg
    from grader import reference

    torch.set_num_threads(1)
    reference.clear()
    data = {}
    for chapter in checks_pkg.chapter_modules():
        results, index = {}, {}
        for check in checks_pkg.chapter_checks(chapter):
            if not check.public:
                continue
            spec = check.spec()
            expected = reference.answer(check) if check.needs_reference() else {}
            mistakes = reference.mistakes(check)
            spec["mistake_messages"] = [m for m, _ in mistakes]
            spec["mistake_names"] = list(check.mistakes)  # which ladder of hints a diagnosis opens (hints.py)
            results[f"{check.key}#spec"] = {k: v for k, v in spec.items() if k != "mistakes"}
            results[f"{check.key}#expected"] = expected
            for i, (_, result) in enumerate(mistakes):
                results[f"{check.key}#mistake{i}"] = result
            index.setdefault(check.exercise, []).append(check.key)
        results["_index"] = index
        data[chapter] = results
    return data


def _reload_reference():
    for name in [m for m in sys.modules if m == "posenc_ref" or m.startswith("posenc_ref.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _conventions():
    """{docs/conventions.md: text} with each chapter's exercise table generated (grader/conventions.py)."""
    import posenc_ref

    from . import conventions

    try:
        return conventions.planned(posenc_ref)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _lock_ids(check):
    """Add new check keys to grader/checks/ids.lock.json (or, with check, report that they are missing);
    a locked key that disappeared or changed meaning stops the build."""
    from . import check_ids
    from .checks import all_checks

    lock = check_ids.load()
    broken = [p for p in check_ids.problems(all_checks(), lock) if "not in the lock yet" not in p]
    if broken:
        raise SystemExit("check ids broken:\n  " + "\n  ".join(broken))
    text = check_ids.dumps(check_ids.updated(all_checks(), lock))
    if check_ids.LOCK.exists() and check_ids.LOCK.read_text() == text:
        return []
    if not check:
        check_ids.LOCK.write_text(text)
    return [check_ids.LOCK]


def build(check=False):
    """Write (or compare) everything; return the list of files that differ."""
    from posenc_selfcheck import store

    from . import authoring

    missing = authoring.problems()
    if missing:
        raise SystemExit("exercises incomplete (docs/authoring.md):\n  "
                         + "\n  ".join(f"{exercise}: {what}" for exercise, what in dict.fromkeys(missing)))
    differ = _lock_ids(check)
    planned = planned_files()  # renders every chapter: once
    for path, text in planned.items():
        current = path.read_text() if path.exists() else None
        if current != text:
            differ.append(path)
            if not check and not holds_edits(path):  # a notebook holding someone's edits is kept
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    stale = {p for p in (ROOT / "notebooks").glob("*.ipynb")} | {p for p in (ROOT / "solutions").glob("*.ipynb")}
    stale -= set(planned)
    differ += sorted(stale)
    if not check:
        for p in stale:
            if not holds_edits(p):
                p.unlink()
    _reload_reference()
    for path, text in _conventions().items():  # the reference's signatures: read from the fresh import
        if path.read_text() != text:
            differ.append(path)
            if not check:
                path.write_text(text)
    data_dir = ROOT / "posenc_selfcheck" / "data"
    for chapter, results in selfcheck_data().items():
        stem = data_dir / chapter
        if check:
            if not _same_data(stem, results):
                differ.append(Path(f"{stem}.json"))
        else:
            data_dir.mkdir(exist_ok=True)
            store.save(str(stem), results)
    return differ


def _same_data(stem, results):
    """Stored self-check data equals a fresh computation (tensors to float32 rounding)."""
    import torch

    from posenc_selfcheck import store

    try:
        stored = store.load(str(stem))
    except (OSError, ValueError):
        return False
    if set(stored) != set(results):
        return False
    for key, fresh in results.items():
        old = stored[key]
        if set(old) != set(fresh):
            return False
        for k, v in fresh.items():
            w = old[k]
            if isinstance(v, torch.Tensor):
                if not isinstance(w, torch.Tensor) or w.shape != v.shape or w.dtype != v.dtype:
                    return False
                if v.is_floating_point() and not torch.allclose(w, v, rtol=1e-6, atol=1e-6, equal_nan=True):
                    return False
                if not v.is_floating_point() and not torch.equal(w, v):
                    return False
            elif _jsonish(w) != _jsonish(v):
                return False
    return True


def _jsonish(value):
    import json

    return json.loads(json.dumps(value, sort_keys=True))


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m grader build", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a file differs")
    args = parser.parse_args(argv)
    differ = build(check=args.check)
    kept = [p for p in differ if holds_edits(p)]
    for path in differ:
        if path not in kept:
            print(f"{'out of date' if args.check else 'wrote'}: {Path(path).relative_to(ROOT)}")
    for path in kept:
        print(f"{'holds edits' if args.check else 'kept'}: {Path(path).relative_to(ROOT)} holds edits the build "
              f"did not make (work saved in it?); `python -m grader build` never overwrites it. Keep your work in "
              f"{LEARNER_COPIES}/ (`bash scripts/lab.sh` opens your copies there): move this file there, or delete "
              "it to get the generated one back.")
    if args.check and len(differ) > len(kept):
        print("generated files are out of sync with chapters/: run `python -m grader build`")
    return 1 if kept or (args.check and differ) else 0
