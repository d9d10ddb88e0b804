"""python -m grader {grade, build, batch, gradescope, release}: the grader's command line.

    grade SUBMISSION [--json PATH]        one submission: a report, and Gradescope's results.json
    build [--check]                       generate notebooks, solutions, reference, self-check data
    batch FOLDER --out DIR [--jobs N]     a class: gradebook, feedback, summary (grader/batch.py)
    gradescope OUT.zip                    the Gradescope autograder (grader/gradescope.py)
    release OUT                           the student bundle (grader/release.py)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pytest

from .report import gradescope_json, text_report, write_json
from .submission import SubmissionError, read_submission

CHECKS_DIR = Path(__file__).resolve().parent / "checks"


class _Collect:
    """A pytest plugin that keeps the check items so their results can be read afterwards."""

    def __init__(self):
        self.items = []

    def pytest_collection_modifyitems(self, session, config, items):
        self.items = list(items)

    def pytest_unconfigure(self, config):
        from .pytest_plugin import ENGINE

        engine = config.stash.get(ENGINE, None)
        self.notes = engine.notes() if engine is not None else []


def _deselected(item, cuda_only):
    return cuda_only and not item.check.cuda


def grade(submission, json_path=None, cuda_only=False, wall_seconds=None, out=sys.stdout):
    """Grade one submission through pytest; print the report; return (results, notes)."""
    read_submission(submission)  # fail early, with a clear message, on an unusable path
    start = time.perf_counter()
    collector = _Collect()
    # no:unraisableexception: it runs gc.collect() five times per session, ~0.4 s each with torch loaded
    args = [str(CHECKS_DIR), "--submission", str(submission), "-p", "no:terminal", "-p", "no:cacheprovider",
            "-p", "no:unraisableexception",
            "--rootdir", str(CHECKS_DIR), "-c", str(CHECKS_DIR / "pytest.ini")]
    if cuda_only:
        args += ["-m", "cuda"]
    if wall_seconds:
        args += ["--wall-seconds", str(wall_seconds)]
    # plugins installed for other purposes (nbval loads jupyter, about 3 s) have no business here
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        code = pytest.main(args, plugins=[collector])
    finally:
        if autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload
    if code not in (0, 1, 5):  # 1: some checks failed (a grade); 5: none selected
        raise RuntimeError(f"the grader's pytest run failed with exit code {int(code)}")
    broken = [item.nodeid for item in collector.items if item.result is None and not _deselected(item, cuda_only)]
    if broken:
        raise RuntimeError(f"the grader failed on {len(broken)} check(s), e.g. {broken[0]}; "
                           "run `pytest grader/checks --submission ...` to see why")
    results = [item.result for item in collector.items if item.result is not None]
    seconds = time.perf_counter() - start
    notes = getattr(collector, "notes", [])
    print(text_report(submission, results, notes, seconds), file=out)
    if json_path:
        write_json(json_path, gradescope_json(results, notes, seconds))
    return results, notes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader", description="Grade positional-encoding exercises.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission (a notebook, a .py file, or a folder of them)")
    g.add_argument("submission")
    g.add_argument("--json", metavar="PATH", help="also write Gradescope-compatible results.json here")
    g.add_argument("--cuda-only", action="store_true", help="run only the CUDA checks")
    g.add_argument("--wall-seconds", type=float, default=None, help="time limit for one exercise")
    b = sub.add_parser("build", help="generate notebooks, solutions, reference and self-check data")
    b.add_argument("--check", action="store_true", help="only compare; exit 1 when something is out of sync")
    bt = sub.add_parser("batch", help="grade a folder of submissions (one per student) into a gradebook")
    bt.add_argument("folder", help="one notebook, .py file or folder per student")
    bt.add_argument("--out", required=True, metavar="DIR", help="results, feedback, gradebook.csv, summary")
    bt.add_argument("--jobs", type=int, default=1, help="submissions graded at once (default 1)")
    bt.add_argument("--wall-seconds", type=float, default=None, help="time limit for one exercise")
    bt.add_argument("--timeout", type=float, default=1800.0, help="time limit for one submission (default 1800 s)")
    bt.add_argument("--memory-mb", type=int, default=None, help="address space a submission may add (default 6144)")
    bt.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    gs = sub.add_parser("gradescope", help="build the Gradescope autograder zip")
    gs.add_argument("zip", metavar="OUT.zip")
    gs.add_argument("--hidden-visibility", default="after_due_date",
                    choices=("hidden", "after_due_date", "after_published", "visible"),
                    help="visibility of the checks that are not public (default after_due_date)")
    gs.add_argument("--wall-seconds", type=float, default=30.0, help="time limit for one exercise")
    gs.add_argument("--memory-mb", type=int, default=512, help="address space a submission may add")
    rl = sub.add_parser("release", help="write the student bundle: notebooks and self-checks, no solutions")
    rl.add_argument("out", metavar="OUT")
    rl.add_argument("--no-check", action="store_true", help="skip `build --check` (generated files up to date)")
    nb = sub.add_parser("nbgrader", help="write an nbgrader course source: one assignment per chapter",
                        description="Write OUT/nbgrader_config.py and OUT/source/chNN_name/ for every chapter "
                                    "(grader/nbgrader_export.py). Example: python -m grader nbgrader course/")
    nb.add_argument("out", metavar="OUT", help="the nbgrader course folder to write (its source/ is replaced)")
    args = parser.parse_args(argv)
    if args.command == "nbgrader":
        from .nbgrader_export import main as nbgrader_main

        return nbgrader_main(args.out)
    if args.command == "batch":
        from .batch import run_batch

        if not Path(args.folder).is_dir():
            print(f"error: {args.folder!r} is not a folder", file=sys.stderr)
            return 2
        try:
            summary = run_batch(args.folder, args.out, args.jobs, args.wall_seconds, args.timeout, args.memory_mb,
                                progress=not args.no_progress)
        except KeyboardInterrupt:
            return 130
        print(f"{summary['graded']} of {summary['submissions']} submissions graded; gradebook: "
              f"{Path(args.out) / 'gradebook.csv'}; summary: {Path(args.out) / 'summary.md'}")
        return 0 if not summary["errors"] else 1
    if args.command == "gradescope":
        from .gradescope import build_zip

        names = build_zip(args.zip, args.hidden_visibility, args.wall_seconds, args.memory_mb)
        print(f"wrote {args.zip} ({len(names)} files): upload it as the assignment's autograder")
        return 0
    if args.command == "release":
        from .release import build_release

        try:
            files = build_release(args.out, check_sync=not args.no_check)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {args.out} ({len(files)} files)")
        return 0
    if args.command == "build":
        from . import build as build_mod  # imports nbformat and jupytext: only when building

        return build_mod.main(["--check"] if args.check else [])
    try:
        grade(args.submission, args.json, args.cuda_only, args.wall_seconds)
    except SubmissionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
