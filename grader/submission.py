"""Read a submission (a notebook, a .py file, or a folder of them) as untrusted data.

Nothing here executes learner code, and nothing trusts the file system a submission brings:
- only regular files count: every entry is looked at with lstat, files are opened with O_NOFOLLOW
  and checked again after opening, so symbolic links (to the reference, to a classmate's file, to
  /proc/self/mem), devices, FIFOs and sockets are refused, each with a note;
- names, depth, the number of files and their sizes are capped before anything is parsed;
- parsing (JSON, then Python's ast) happens in a child process with bounded memory and time
  (grader/parse.py), so a hostile file costs only itself; a file with more code than ReadLimits.code_kb is left
  out with a note, and reading counts against the submission's wall-clock budget (grader/grading.py).
Everything here is linear in the submission's size: a statement travels as its own text and the line it starts
on, never padded with the lines above it.
Every refusal is a note in the learner's report; only a path that holds nothing gradable at all
raises SubmissionError (and the batch turns that into a zero with its reason).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .escape import one_line
from .files import read_regular
from .parse import parse_limited
from .records import Statement, messages
from .settings import ReadLimits

SUFFIXES = (".ipynb", ".py")
# the caps on names, depth, the number of files and their sizes: grader.settings.ReadLimits (Settings.read)
# the public self-check package, which nbgrader copies beside each submitted notebook (and a learner may
# hand in with the release folder): the course's code, not the learner's
# posenc_mine/: the learner's exported copies of their notebooks' exercises (the notebooks are the source)
SKIP_FOLDERS = {"posenc_selfcheck", "posenc_mine"}


msg, verbatim = messages.msg, messages.verbatim


class SubmissionError(ValueError):
    """The submission path itself is unusable (missing, a link, or holding no notebook or .py file): `message` says
    why (a message; str() its English)."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


@dataclass
class SourceFile:
    name: str  # its path inside the submission, printable
    statements: list = field(default_factory=list)  # [Statement]
    defines: set = field(default_factory=set)
    notes: list = field(default_factory=list)  # what was dropped, and why (messages)
    flags: list = field(default_factory=list)  # grader.parse.FLAGS found in its code


@dataclass
class Listing:
    files: list = field(default_factory=list)  # [(printable relative name, Path)]
    notes: list = field(default_factory=list)  # messages


def _kind(mode):
    if stat.S_ISLNK(mode):
        return msg("a symbolic link")
    if stat.S_ISDIR(mode):
        return msg("a folder")
    if stat.S_ISREG(mode):
        return msg("a file")
    return msg("a device, FIFO or socket")


def list_files(root, limits=None) -> Listing:
    """The gradable files below `root` (or `root` itself), without following any link, within `limits`
    (grader.settings.ReadLimits; None: its defaults)."""
    limits = limits or ReadLimits()
    root = Path(root)
    try:
        info = os.lstat(root)
    except OSError:
        raise SubmissionError(msg("submission {name} does not exist", name=verbatim(repr(one_line(root))))) from None
    listing = Listing()
    if stat.S_ISLNK(info.st_mode):
        raise SubmissionError(msg("submission {name} is a symbolic link; submit the file itself",
                                  name=verbatim(repr(one_line(root.name)))))
    if not stat.S_ISDIR(info.st_mode):
        if not stat.S_ISREG(info.st_mode):
            name = verbatim(repr(one_line(root.name)))
            raise SubmissionError(msg("submission {name} is {kind}, not a file", name=name,
                                      kind=_kind(info.st_mode)))
        if root.suffix not in SUFFIXES:
            raise SubmissionError(msg("submission {name} is neither a notebook (.ipynb) nor a .py file",
                                      name=verbatim(repr(one_line(root.name)))))
        listing.files.append((one_line(root.name, limits.name_chars), root))
        return listing
    seen = 0
    todo = [(root, "", 0)]
    while todo:
        folder, prefix, depth = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            listing.notes.append(msg("{folder}: could not be listed ({error}); not graded",
                                     folder=verbatim(one_line(prefix or ".")), error=verbatim(exc.strerror)))
            continue
        for entry in entries:
            seen += 1
            if seen > limits.dir_entries:
                listing.notes.append(msg("the submission holds more than {n} entries: the rest was not looked at",
                                         n=limits.dir_entries))
                todo.clear()
                break
            name = prefix + entry.name
            if entry.name.startswith((".", "__pycache__")) or entry.name in SKIP_FOLDERS:
                continue
            shown = one_line(name, limits.name_chars)
            if len(entry.name) > limits.name_chars:
                listing.notes.append(msg("{name}: a name longer than {n} characters; not graded",
                                         name=verbatim(shown), n=limits.name_chars))
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if depth + 1 > limits.dir_depth:
                    listing.notes.append(msg("{name}: folders nested deeper than {n} levels; not graded",
                                             name=verbatim(shown), n=limits.dir_depth))
                else:
                    todo.append((Path(entry.path), name + "/", depth + 1))
                continue
            if not entry.name.endswith(SUFFIXES):
                continue
            if not stat.S_ISREG(mode):
                listing.notes.append(msg("{name} is {kind}, not a regular file; not graded", name=verbatim(shown),
                                         kind=_kind(mode)))
                continue
            listing.files.append((shown, Path(entry.path)))
    listing.files.sort()
    if len(listing.files) > limits.source_files:
        listing.notes.append(msg("only the first {graded} of {n} .py/.ipynb files were graded",
                                 graded=limits.source_files, n=len(listing.files)))
        listing.files = listing.files[:limits.source_files]
    if not listing.files:
        name = verbatim(repr(one_line(root.name)))
        raise SubmissionError(msg("folder {name} holds no .ipynb or .py file", name=name))
    return listing


def read_submission(path, limits=None, seconds=None) -> list[SourceFile]:
    """Every gradable file of the submission at `path`, parsed (in a limited child) into its statements, within
    `limits` (grader.settings.ReadLimits; None: its defaults) and, when given, `seconds` of wall clock for all of it
    (what the submission's budget has: grader.grading counts reading against it)."""
    limits = limits or ReadLimits()
    deadline = None if seconds is None else time.monotonic() + seconds
    file_bytes = limits.source_file_mb << 20
    listing = list_files(path, limits)
    out, budget = [], limits.source_total_mb << 20
    for name, file in listing.files:
        sf = SourceFile(name)
        out.append(sf)
        try:
            size = os.lstat(file).st_size
            data = read_regular(file, min(file_bytes, budget)) if size <= file_bytes else None
        except OSError as exc:
            sf.notes.append(msg("{name} could not be read ({error}); not graded", name=verbatim(name),
                                error=verbatim(one_line(exc.strerror or exc))))
            continue
        if data is None:
            limit = (msg("the {mb} MB limit", mb=limits.source_file_mb) if size > file_bytes
                     else msg("what is left of the {mb} MB per submission", mb=limits.source_total_mb))
            sf.notes.append(msg("{name} is {mb:.0f} MB, over {limit}, or not a regular file; not graded (clear the "
                                "outputs and submit again)", name=verbatim(name), mb=size / 2**20, limit=limit))
            continue
        budget -= len(data)
        parsed = parse_limited(name, data, limits, None if deadline is None else deadline - time.monotonic())
        sf.statements = [Statement(label, source, line) for label, source, line in parsed["statements"]]
        sf.defines = set(parsed["defines"])
        sf.notes += parsed["notes"]
        sf.flags = parsed["flags"]
    if out:
        out[0].notes[:0] = listing.notes
    return out


def defining_file(files, name):
    """The last file that defines `name` (files are in sorted order), or None."""
    found = [f for f in files if name in f.defines]
    return found[-1] if found else None
