"""python -m grader: the grader's command line (a thin layer over grader.grading and friends).

Settings are built here, once, from the options and the environment (grader/settings.py), and
passed down; nothing below reads the environment again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from .settings import (
    BATCH_TIMEOUT_SECONDS,
    GRADESCOPE_MEMORY_MB,
    GRADESCOPE_WALL_SECONDS,
    LANES_AUTO,
    LAYOUTS,
    VISIBILITIES,
    WAITS,
    Limits,
    Settings,
    default_jobs,
)

DEFAULTS = Limits()
REPO = Path(__file__).resolve().parent.parent

EXAMPLES = {
    "grade": "python -m grader grade examples/complete --assignment ch01 --json out/results.json",
    "build": "python -m grader build --check",
    "batch": "python -m grader batch submissions/ --out grading/ --assignment ch01 --due 2026-03-01T23:59",
    "gradescope": "python -m grader gradescope instructor/autograder-ch01.zip --assignment ch01",
    "release": "python -m grader release student-bundle/ --assignment ch01",
    "nbgrader": "python -m grader nbgrader instructor/nbgrader/ --assignment ch01",
    "i18n": "python -m grader i18n --update",
}
MEMORY_WHY = {
    "local": f"{DEFAULTS.memory_mb / 1024:g} GB leaves a wrong but honest answer room to fail on its numbers, "
             "not on memory",
    "gradescope": "fits inside the container the docs recommend; a memory bomb meets this limit first",
}


def version():
    """The project's version, from pyproject.toml (the project is run from its folder, never installed)."""
    found = re.search(r'^version\s*=\s*"([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    return found.group(1) if found else "unknown"


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


def _limits_options(p, wall, memory=None, why="local"):
    p.add_argument("--wall-seconds", type=float, default=wall, metavar="S",
                   help="wall-clock limit for one exercise (its definitions and all its checks)")
    shown = f"$POSENC_SANDBOX_MEMORY_MB or {DEFAULTS.memory_mb}" if memory is None else str(memory)
    p.add_argument("--memory-mb", type=int, default=memory, metavar="MB",
                   help=f"memory one exercise may add (default: {shown}: {MEMORY_WHY[why]})")


def _lanes_option(p, what):
    p.add_argument("--lanes", type=_lanes, default=None, metavar="N",
                   help="children of one submission that run at once, each with --memory-mb of its own (default: "
                        f"$POSENC_SANDBOX_LANES or 0: {what}, at most {LANES_AUTO})")


def _assignment_options(p, what):
    p.add_argument("--assignment", metavar="NAME", default=None,
                   help=f"{what} one assignment only: a chapter (ch00, ch01, ...) or one defined in the course "
                        "file (default: the whole course)")
    p.add_argument("--course", metavar="FILE", default=None,
                   help="the course file that defines assignments (default: course.json at the repository root)")


def _language(p, what):
    from .language import ENV, available

    p.add_argument("--lang", choices=available(), default=None, metavar="LANG",
                   help=f"the language of {what}: {', '.join(available())} (default: ${ENV} or en)")


def _quiet(p, what="no progress lines on stderr"):
    p.add_argument("--quiet", action="store_true", help=what)


def _whole(least, why):
    """An argparse type: a whole number of at least `least` (`why`: the error's words for a smaller one)."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(why.format(value=value))
        return value

    return parse


_lanes = _whole(0, "0 (one per core) or more, not {value}")
_jobs = _whole(1, "at least 1 (got {value})")


def parser():
    p = argparse.ArgumentParser(prog="python -m grader", formatter_class=_Formatter,
                                description="Grade positional-encoding exercises, build the course, package it.",
                                epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES.values()))
    p.add_argument("--version", action="version", version=f"posenc-course grader {version()}",
                   help="print the grader's version and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    g = _sub(sub, "grade", "grade one submission (a notebook, a .py file, or a folder of them)",
             "Grade one submission and print the report. Learner code runs in the sandbox; exit status 0 "
             "whenever grading completed, whatever the score; 2 when the path holds nothing gradable.")
    g.add_argument("submission", help="a notebook (.ipynb), a .py file, or a folder of them")
    g.add_argument("--json", metavar="PATH", default=None,
                   help="also write Gradescope-compatible results.json here ('-': to stdout, the report to stderr)")
    g.add_argument("--cuda-only", action="store_true", help="run only the checks that need a CUDA device")
    g.add_argument("--student", metavar="ID", default=None,
                   help="the student's id as your platform records it: the inputs drawn for the main checks and twins "
                        "are this student's (the same at every regrade). Without it every submission gets one fixed "
                        "set of draws, and the report says so")
    _assignment_options(g, "grade")
    _language(g, "the report and the feedback in results.json")
    _quiet(g)
    _limits_options(g, DEFAULTS.wall_seconds)
    _lanes_option(g, "one per core")
    b = _sub(sub, "build", "generate notebooks, solutions, reference and self-check data from course/")
    b.add_argument("--check", action="store_true", help="only compare; exit 1 when something is out of sync")
    bt = _sub(sub, "batch", "grade a folder of submissions (one per student) into a gradebook",
              "Grade a class: parallel, resumable, deterministic. Writes gradebook.csv (a column per exercise), "
              "gradebook_checks.csv (a column per check key), lms.csv, per-student feedback, a class summary with "
              "plots. Reads one entry per student, or nbgrader's "
              "submitted/<student>/<assignment>/ layout (--layout).")
    bt.add_argument("folder", help="one notebook, .py file or folder per student (or nbgrader's submitted/)")
    bt.add_argument("--out", required=True, metavar="DIR", help="results, feedback, gradebook.csv, summary")
    _assignment_options(bt, "grade")
    bt.add_argument("--layout", choices=LAYOUTS, default="auto",
                    help="plain: every entry of FOLDER is a student; nbgrader: FOLDER is nbgrader's submitted/ "
                         "(<student>/<assignment>/); auto: nbgrader only when every entry fits that layout")
    bt.add_argument("--due", metavar="TIME", default=None,
                    help="due time (ISO 8601, e.g. 2026-03-01T23:59 or 2026-03-01T23:59+01:00; without an offset: "
                         "UTC): submissions after it are flagged late in the gradebook")
    bt.add_argument("--nbgrader-gradebook", action="store_true",
                    help="also write the grades into the gradebook.db of the nbgrader course that holds FOLDER "
                         "(needs --assignment and nbgrader; generate_feedback and export then work on them)")
    bt.add_argument("--jobs", type=_jobs, default=default_jobs(), metavar="N",
                    help="submissions graded at once, at least 1 (default: %(default)s, the cores this process "
                         "may use; each job uses one core and about 0.7 GB)")
    bt.add_argument("--timeout", type=float, default=BATCH_TIMEOUT_SECONDS, metavar="S",
                    help="time limit for one submission")
    _language(bt, "the feedback files and the feedback written into nbgrader's gradebook")
    _quiet(bt, "no progress bar on stderr")
    bt.add_argument("--no-progress", action="store_true", dest="quiet", help=argparse.SUPPRESS)  # the old spelling
    _limits_options(bt, DEFAULTS.wall_seconds)
    _lanes_option(bt, "the cores left to each of the --jobs")
    gs = _sub(sub, "gradescope", "build the Gradescope autograder zip (one per assignment)")
    gs.add_argument("zip", metavar="OUT.zip", help="where to write the autograder: outside the repository or under "
                                                   "instructor/ (git-ignored; it holds the grader's secret)")
    _assignment_options(gs, "grade")
    gs.add_argument("--hidden-visibility", default=Settings.hidden_visibility, choices=VISIBILITIES,
                    help="when students see the checks that are not public")
    _language(gs, "the feedback students read")
    _limits_options(gs, GRADESCOPE_WALL_SECONDS, GRADESCOPE_MEMORY_MB, why="gradescope")
    i18n = _sub(sub, "i18n", "update or check the translation catalogs (course/*/zh_CN.po, locale/zh_CN/)")
    i18n.add_argument("--update", action="store_true",
                      help="re-extract the chapters' paragraphs; changed ones become fuzzy")
    rl = _sub(sub, "release", "write the student bundle: notebooks and self-checks, no solutions")
    rl.add_argument("out", metavar="OUT", help="the bundle's folder (an earlier release there is replaced)")
    _assignment_options(rl, "release")
    rl.add_argument("--no-check", action="store_true", help="skip `build --check` (generated files up to date)")
    _quiet(rl)
    nb = _sub(sub, "nbgrader", "write an nbgrader course source: one assignment per chapter, or --assignment",
              "Write OUT/nbgrader_config.py and OUT/source/<assignment>/ (grader/nbgrader_export.py): solution "
              "cells, locked self-checks, and one autograded test cell per exercise worth the grader's points.")
    nb.add_argument("out", metavar="OUT", help="the nbgrader course folder to write (its source/ is replaced): outside "
                                               "the repository or under instructor/ (git-ignored)")
    _assignment_options(nb, "write")
    nb.add_argument("--timeout", type=float, default=BATCH_TIMEOUT_SECONDS, metavar="S",
                    help="time limit for grading one notebook in its first test cell (nbgrader's limit on a cell is "
                         f"this plus {WAITS.nbgrader_cell_margin_seconds:g} s)")
    return p


def _settings(args, **extra):
    limits = {"wall_seconds": getattr(args, "wall_seconds", None), "memory_mb": getattr(args, "memory_mb", None)}
    from . import language

    return Settings.from_env(limits=limits, lanes=getattr(args, "lanes", None),
                             assignment=getattr(args, "assignment", None) or "",
                             course_file=getattr(args, "course", None) or "",
                             language=getattr(args, "lang", None) or language.from_env(), **extra)


def _assignment(args):
    """The assignment named by --assignment (None for the whole course); CourseError when there is none."""
    from .assignment import get

    return get(args.assignment, args.course)


def cmd_grade(args):
    from .remote import RemoteGrader, SandboxError, start_sandbox

    start = time.perf_counter()
    settings = _settings(args, cuda_only=args.cuda_only)
    # the sandbox's zygote first: its torch import, and the trusted grading process it forks as soon as torch is
    # loaded, overlap what this process imports and reads meanwhile (the course's checks, the assignment)
    zygote = start_sandbox(settings)
    from .assignment import report_for
    from .files import write_json
    from .language import phrasebook
    from .progress import Progress, announce
    from .report import gradescope_json
    from .submission import SubmissionError

    assignment = _assignment(args)
    say = phrasebook(settings.language)
    announce(say("starting the sandbox and loading the reference…"), enabled=not args.quiet)
    # grades in a fork of the sandbox's zygote: this process never loads torch
    grader = RemoteGrader(settings, assignment.registry_checks() if assignment else None, zygote)
    startup = time.perf_counter() - start
    bar = None

    def progress(exercise, done, total):
        nonlocal bar
        if args.quiet:
            return
        bar = bar or Progress(say("grading"), total, every=0.0, say=say)
        bar.update(done, exercise or "")

    try:
        grade = grader.grade(args.submission, progress, student=args.student)
    except (SubmissionError, SandboxError) as exc:  # SandboxError: a mode this machine refuses, with remedies
        print(say("error: {problem}", problem=exc.message), file=sys.stderr)
        return 2
    if assignment:
        grade = assignment.apply(grade)
    grade.seconds += startup  # start-up plus the visible work: a hidden child's time would tell its inputs
    if bar is not None and bar.tty:
        sys.stderr.write("\r\x1b[K")
    to_stdout = args.json == "-"
    print(report_for(grade, assignment, settings.language), file=sys.stderr if to_stdout else sys.stdout)
    if to_stdout:
        print(json.dumps(gradescope_json(grade, settings.hidden_visibility, settings.language), indent=1))
    elif args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, gradescope_json(grade, settings.hidden_visibility, settings.language))
    return 0


def cmd_batch(args):
    from .batch.discovery import DiscoveryError
    from .batch.run import parse_due, run_batch
    from .language import phrasebook
    from .records import messages

    settings = _settings(args, progress=not args.quiet)
    say = phrasebook(settings.language)
    if not Path(args.folder).is_dir():
        print(say("error: {folder} is not a folder", folder=messages.verbatim(repr(args.folder))), file=sys.stderr)
        return 2
    if args.nbgrader_gradebook and not args.assignment:
        print(say("error: --nbgrader-gradebook needs --assignment (the nbgrader assignment to write)"),
              file=sys.stderr)
        return 2
    _assignment(args)  # an unknown name fails here, before any worker starts
    try:
        due = parse_due(args.due) if args.due else None
    except ValueError:
        print(say("error: --due: {value} is not a time in ISO 8601 (2026-03-01T23:59, UTC without an offset)",
                  value=messages.verbatim(repr(args.due))), file=sys.stderr)
        return 2
    try:
        summary = run_batch(args.folder, args.out, settings, jobs=args.jobs, timeout=args.timeout,
                            layout=args.layout, due=due, nbgrader_gradebook=args.nbgrader_gradebook)
    except KeyboardInterrupt:
        return 130
    except DiscoveryError as exc:
        print(say("error: {problem}", problem=exc.message), file=sys.stderr)
        return 2
    print(say("{graded} of {submissions} submissions graded ({layout} layout); gradebook: {gradebook}; summary: "
              "{summary}", graded=summary["graded"], submissions=summary["submissions"], layout=summary["layout"],
              gradebook=str(Path(args.out) / "gradebook.csv"), summary=str(Path(args.out) / "summary.md")))
    return 0 if not summary["errors"] else 1


def _private_output(path, what):
    """`path` where instructor-only output may go; None (said on stderr) inside the repository's tracked tree."""
    from .release import private_output

    try:
        return private_output(path, what)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def cmd_gradescope(args):
    from .gradescope import build_zip, container_mb

    if _private_output(args.zip, "the Gradescope bundle") is None:
        return 2
    assignment = _assignment(args)
    settings = _settings(args)
    names = build_zip(args.zip, args.hidden_visibility, args.wall_seconds, args.memory_mb, assignment,
                      secret_file=settings.secret_file, language=settings.language)
    what = f"assignment {assignment.name}" if assignment else "the whole course"
    need = container_mb(assignment)
    print(f"wrote {args.zip} ({len(names)} files, {what}): upload it as the assignment's autograder"
          + (f"; choose a container of at least {need} MB (docs/instructor.md, Gradescope)" if need else
             "; see docs/instructor.md for the container memory to choose"))
    return 0


def cmd_release(args):
    from .release import build_release

    try:
        files = build_release(args.out, check_sync=not args.no_check, progress=not args.quiet,
                              assignment=_assignment(args))
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({len(files)} files)")
    return 0


def cmd_build(args):
    from . import build  # imports nbformat and jupytext: only when building

    return build.main(["--check"] if args.check else [])


def cmd_i18n(args):
    from . import i18n_cli

    return i18n_cli.main(["--update"] if args.update else [])


def cmd_nbgrader(args):
    from .nbgrader_export import main as nbgrader_main

    if _private_output(args.out, "an nbgrader course") is None:
        return 2
    return nbgrader_main(args.out, _assignment(args), args.course, args.timeout)


COMMANDS = {"grade": cmd_grade, "batch": cmd_batch, "gradescope": cmd_gradescope, "release": cmd_release,
            "build": cmd_build, "nbgrader": cmd_nbgrader, "i18n": cmd_i18n}


def main(argv=None):
    from .assignment import CourseError

    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
