"""python -m grader: the grader's command line (a thin layer over grader.grading and friends).

Settings are built here, once, from the options and the environment (grader/settings.py), and
passed down; nothing below reads the environment again.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .settings import VISIBILITIES, Limits, Settings

DEFAULTS = Limits()

EXAMPLES = {
    "grade": "python -m grader grade examples/complete --json out/results.json",
    "build": "python -m grader build --check",
    "batch": "python -m grader batch submissions/ --out grading/ --jobs 2",
    "gradescope": "python -m grader gradescope autograder.zip --hidden-visibility after_due_date",
    "release": "python -m grader release student-bundle/",
    "nbgrader": "python -m grader nbgrader course/",
}


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; every option's default shown (where it has one worth showing)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


def _sub(subparsers, name, help_text, description=""):
    return subparsers.add_parser(name, help=help_text, formatter_class=_Formatter,
                                 description=(description or help_text).strip() + "\n",
                                 epilog=f"example:\n  {EXAMPLES[name]}")


def _limits_options(p, wall):
    p.add_argument("--wall-seconds", type=float, default=wall, metavar="S",
                   help="wall-clock limit for one exercise (its definitions and all its checks)")
    p.add_argument("--memory-mb", type=int, default=None, metavar="MB",
                   help=f"memory one exercise may add (default: $POSENC_SANDBOX_MEMORY_MB or {DEFAULTS.memory_mb})")


def parser():
    p = argparse.ArgumentParser(prog="python -m grader", formatter_class=_Formatter,
                                description="Grade positional-encoding exercises, build the course, package it.",
                                epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES.values()))
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    g = _sub(sub, "grade", "grade one submission (a notebook, a .py file, or a folder of them)",
             "Grade one submission and print the report. Learner code runs in the sandbox; exit status 0 "
             "whenever grading completed, whatever the score; 2 when the path holds nothing gradable.")
    g.add_argument("submission", help="a notebook (.ipynb), a .py file, or a folder of them")
    g.add_argument("--json", metavar="PATH", default=None, help="also write Gradescope-compatible results.json here")
    g.add_argument("--cuda-only", action="store_true", help="run only the checks that need a CUDA device")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    _limits_options(g, DEFAULTS.wall_seconds)
    b = _sub(sub, "build", "generate notebooks, solutions, reference and self-check data from chapters/")
    b.add_argument("--check", action="store_true", help="only compare; exit 1 when something is out of sync")
    bt = _sub(sub, "batch", "grade a folder of submissions (one per student) into a gradebook",
              "Grade a class: parallel, resumable, deterministic. Writes gradebook.csv, per-student feedback, "
              "a class summary with plots. Also reads nbgrader's submitted/<student>/<assignment>/ layout.")
    bt.add_argument("folder", help="one notebook, .py file or folder per student")
    bt.add_argument("--out", required=True, metavar="DIR", help="results, feedback, gradebook.csv, summary")
    bt.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at once (one core each)")
    bt.add_argument("--timeout", type=float, default=1800.0, metavar="S", help="time limit for one submission")
    bt.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    _limits_options(bt, DEFAULTS.wall_seconds)
    gs = _sub(sub, "gradescope", "build the Gradescope autograder zip")
    gs.add_argument("zip", metavar="OUT.zip", help="where to write the autograder")
    gs.add_argument("--hidden-visibility", default="after_due_date", choices=VISIBILITIES,
                    help="when students see the checks that are not public")
    gs.add_argument("--wall-seconds", type=float, default=30.0, metavar="S", help="time limit for one exercise")
    gs.add_argument("--memory-mb", type=int, default=512, metavar="MB", help="memory one exercise may add")
    rl = _sub(sub, "release", "write the student bundle: notebooks and self-checks, no solutions")
    rl.add_argument("out", metavar="OUT", help="the bundle's folder (an earlier release there is replaced)")
    rl.add_argument("--no-check", action="store_true", help="skip `build --check` (generated files up to date)")
    rl.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    nb = _sub(sub, "nbgrader", "write an nbgrader course source: one assignment per chapter",
              "Write OUT/nbgrader_config.py and OUT/source/chNN_name/ for every chapter (grader/nbgrader_export.py).")
    nb.add_argument("out", metavar="OUT", help="the nbgrader course folder to write (its source/ is replaced)")
    return p


def _settings(args, **extra):
    limits = {"wall_seconds": getattr(args, "wall_seconds", None), "memory_mb": getattr(args, "memory_mb", None)}
    return Settings.from_env(limits=limits, **extra)


def cmd_grade(args):
    from .files import write_json
    from .progress import Progress, say
    from .remote import RemoteGrader, SandboxError
    from .report import gradescope_json, text_report
    from .submission import SubmissionError

    start = time.perf_counter()
    settings = _settings(args, cuda_only=args.cuda_only)
    say("starting the sandbox and loading the reference…", enabled=not args.quiet)
    grader = RemoteGrader(settings)  # grades in a fork of the sandbox's zygote: this process never loads torch
    bar = None

    def progress(exercise, done, total):
        nonlocal bar
        if args.quiet:
            return
        bar = bar or Progress("grading", total, every=0.0)
        bar.update(done, exercise or "")

    try:
        grade = grader.grade(args.submission, progress)
    except (SubmissionError, SandboxError) as exc:  # SandboxError: a mode this machine refuses, with remedies
        print(f"error: {exc}", file=sys.stderr)
        return 2
    grade.seconds = time.perf_counter() - start  # the whole command, start-up included
    if bar is not None and bar.tty:
        sys.stderr.write("\r\x1b[K")
    print(text_report(grade))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, gradescope_json(grade))
    return 0


def cmd_batch(args):
    from .batch.run import run_batch

    if not Path(args.folder).is_dir():
        print(f"error: {args.folder!r} is not a folder", file=sys.stderr)
        return 2
    settings = _settings(args, progress=not args.no_progress)
    try:
        summary = run_batch(args.folder, args.out, settings, jobs=args.jobs, timeout=args.timeout)
    except KeyboardInterrupt:
        return 130
    print(f"{summary['graded']} of {summary['submissions']} submissions graded; gradebook: "
          f"{Path(args.out) / 'gradebook.csv'}; summary: {Path(args.out) / 'summary.md'}")
    return 0 if not summary["errors"] else 1


def cmd_gradescope(args):
    from .gradescope import build_zip

    names = build_zip(args.zip, args.hidden_visibility, args.wall_seconds, args.memory_mb)
    print(f"wrote {args.zip} ({len(names)} files): upload it as the assignment's autograder")
    return 0


def cmd_release(args):
    from .release import build_release

    try:
        files = build_release(args.out, check_sync=not args.no_check, progress=not args.quiet)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({len(files)} files)")
    return 0


def cmd_build(args):
    from . import build  # imports nbformat and jupytext: only when building

    return build.main(["--check"] if args.check else [])


def cmd_nbgrader(args):
    from .nbgrader_export import main as nbgrader_main

    return nbgrader_main(args.out)


COMMANDS = {"grade": cmd_grade, "batch": cmd_batch, "gradescope": cmd_gradescope, "release": cmd_release,
            "build": cmd_build, "nbgrader": cmd_nbgrader}


def main(argv=None):
    args = parser().parse_args(argv)
    return COMMANDS[args.command](args)
