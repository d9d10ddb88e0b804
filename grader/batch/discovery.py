"""Which submissions a class folder holds, under which student ids, when they were handed in, and
whether they changed.

The layout is the instructor's to decide (`--layout`), never a student's:
  - plain: every entry of the class folder is one student's submission: a notebook, a .py file, or a
    folder of them (its name, without the suffix, is the student's id);
  - nbgrader: the folder is nbgrader's `submitted/` (or the course folder: nbgrader_config.py and submitted/):
    `<student>/<assignment>/`; with an assignment, each student's `<student>/<assignment>/` is graded
    (a student without it is listed, with a zero and the reason);
  - auto (default): nbgrader only when every entry fits that layout (a real folder holding only real
    folders), plain otherwise. A student's folder named `submitted` changes nothing.
When a submission was handed in is this machine's record, never a file the student wrote: the latest
modification time of the files that are graded ("file time"), in either layout. nbgrader's timestamp.txt is
written on the student's side; it is kept as the student's claim (`Entry.claimed`), shown, never used for late.
Entries are untrusted: a symbolic link or a device is a submission that scores zero with its reason,
never something to follow. Ids are file names of the output folder: safe characters, short, and
distinct even where the file system ignores case. An entry whose name had to change gets a short hash
of its real name; an id another entry already has is never shared: the later one gets a suffix and a
note saying so, shown in the gradebook.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..escape import identifier, one_line
from ..files import read_regular
from ..records import messages
from ..settings import REPORT, ReadLimits
from ..submission import SUFFIXES, SubmissionError, list_files

TIMESTAMP = "timestamp.txt"  # when a submission was handed in, as the student's `nbgrader submit` wrote it


class DiscoveryError(ValueError):
    """The class folder does not have the layout the instructor asked for: `message` says how (a message; str() its
    English)."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


@dataclass(frozen=True)
class Entry:
    student: str  # the id: safe, unique, stable
    path: Path | None  # None: nothing handed in for this assignment
    name: str  # the entry's own name, printable (what the instructor sees in the gradebook)
    note: object = ""  # said in the gradebook (a message, or ""): an id that had to change, nothing handed in
    submitted: str = ""  # when it was handed in, as this machine records it (ISO 8601, UTC); "" when unknown
    time_source: str = ""  # where that time comes from: "file time" (the handed-in files' time here), or ""
    folder: str = ""  # nbgrader: the student's folder name as nbgrader knows it (its student id)
    claimed: str = ""  # nbgrader: the time the student's own timestamp.txt states (ISO 8601, UTC); shown, never used


def _id(name):
    return identifier(name, REPORT.student_chars) or "submission"


def _mode(path):
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def _visible(folder):
    """A folder's entries a class could hand in (no hidden files, no '_' helpers), sorted by name."""
    return [e for e in sorted(os.scandir(folder), key=lambda e: e.name) if not e.name.startswith((".", "_"))]


def fits_nbgrader(folder):
    """Every entry a real folder (no link) holding only real folders: `<student>/<assignment>/`."""
    entries = _visible(folder)
    if not entries:
        return False
    for entry in entries:
        if not stat.S_ISDIR(_mode(entry.path)):
            return False
        inside = [e for e in os.scandir(entry.path) if not e.name.startswith(".")]
        if not inside or not all(stat.S_ISDIR(_mode(e.path)) for e in inside):
            return False
    return True


def discover(folder, layout="auto", assignment=None):
    """(the layout used, {student id: Entry} sorted by id). `assignment`: the nbgrader folder name
    (`<student>/<assignment>/`) to grade in the nbgrader layout."""
    folder = Path(folder)
    if layout == "nbgrader":
        if stat.S_ISREG(_mode(folder / "nbgrader_config.py")) and stat.S_ISDIR(_mode(folder / "submitted")):
            folder = folder / "submitted"  # the course folder (nbgrader's config beside submitted/)
        if not fits_nbgrader(folder):
            raise DiscoveryError(messages.msg("{folder} is not nbgrader's submitted/ folder: every entry must be a "
                                              "folder <student>/ holding only <assignment>/ folders (or use `--layout "
                                              "plain`)", folder=messages.verbatim(folder)))
        return "nbgrader", _assign(_nbgrader_entries(folder, assignment))
    if layout == "auto" and fits_nbgrader(folder):
        return "nbgrader", _assign(_nbgrader_entries(folder, assignment))
    if layout not in ("auto", "plain"):
        raise DiscoveryError(messages.msg("unknown layout {layout}", layout=messages.verbatim(repr(layout))))
    raw = []
    for entry in _visible(folder):
        mode = _mode(entry.path)
        path = Path(entry.path)
        if stat.S_ISDIR(mode) or stat.S_ISLNK(mode) or not stat.S_ISREG(mode) or path.suffix in SUFFIXES:
            stem = path.stem if stat.S_ISREG(mode) else entry.name
            when = _file_time(path)
            raw.append({"stem": stem, "name": entry.name, "path": path, "submitted": when,
                        "time_source": "file time" if when else ""})
    return "plain", _assign(raw)


def _nbgrader_entries(submitted, assignment):
    """nbgrader's submitted/<student>/<assignment>/: one submission per student (with `assignment`, that
    folder; without, all of the student's assignments together)."""
    raw = []
    for e in _visible(submitted):
        path = Path(e.path) / assignment if assignment else Path(e.path)
        item = {"stem": e.name, "name": e.name, "path": path, "folder": e.name}
        if assignment and not stat.S_ISDIR(_mode(path)):
            item.update(path=None, note=messages.msg("nothing handed in for {assignment}", assignment=assignment))
        elif assignment:
            # the collected files' time on this machine; timestamp.txt is the student's side's (`nbgrader submit`
            # writes it, and a student can write any): kept as their claim, never used for late
            when = _file_time(path)
            item.update(submitted=when, time_source="file time" if when else "", claimed=_nbgrader_time(path))
        raw.append(item)
    return raw


def _assign(raw):
    """Ids for the entries: the stem made safe; with a hash of the name when the stem changed or repeats
    (alice.py and alice.ipynb, bob_smith and bob~smith); distinct whatever the names (compared without
    case): an id already taken gets a numbered suffix and a note."""
    def base(stem):
        return _id(stem)

    counts = {}
    for item in raw:
        key = base(item["stem"]).casefold()
        counts[key] = counts.get(key, 0) + 1
    proposed = []
    for item in raw:
        student = base(item["stem"])
        natural = student == item["stem"] and counts[student.casefold()] == 1
        if not natural:
            digest = hashlib.sha256(os.fsencode(item["name"])).hexdigest()[:8]
            student = f"{student[:REPORT.student_chars - 9]}-{digest}"
        proposed.append((not natural, item["name"], student, item))
    out, taken = {}, set()
    for _, _, student, item in sorted(proposed, key=lambda p: (p[0], p[1])):  # unchanged names first
        note = item.get("note", "")
        if student.casefold() in taken:
            wanted, n = student, 2
            while f"{wanted[:REPORT.student_chars - 4]}-{n}".casefold() in taken:
                n += 1
            student = f"{wanted[:REPORT.student_chars - 4]}-{n}"
            renamed = messages.msg("id {wanted} is another entry's: this one is {student}", wanted=wanted,
                                   student=student)
            note = messages.joined([note, renamed]) if note else renamed
        taken.add(student.casefold())
        out[student] = Entry(student, item["path"], one_line(item["name"], REPORT.entry_chars), note,
                             item.get("submitted", ""), item.get("time_source", ""), item.get("folder", ""),
                             item.get("claimed", ""))
    return dict(sorted(out.items()))


def _iso(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _file_time(path):
    """The latest modification time of what would be graded (read with lstat, never following links)."""
    try:
        times = [os.lstat(path).st_mtime] if stat.S_ISREG(_mode(path)) else \
            [os.lstat(file).st_mtime for _, file in list_files(path).files]
    except (OSError, SubmissionError):
        return ""
    return _iso(max(times)) if times else ""


def parse_time(text):
    """A time as nbgrader writes it ('2026-03-01 23:59:00.123456 UTC') or in ISO 8601; naive means UTC."""
    text = text.strip()
    for suffix in (" UTC", "Z", " Z"):
        if text.endswith(suffix):
            text = text[:-len(suffix)] + "+00:00"
    moment = datetime.fromisoformat(text.replace(" +", "+"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _nbgrader_time(path):
    """nbgrader's timestamp.txt in the submission folder, as ISO UTC; "" when absent or unreadable."""
    try:
        data = read_regular(Path(path) / TIMESTAMP, ReadLimits().timestamp_bytes)
        return parse_time(data.decode("ascii")).isoformat(timespec="seconds") if data else ""
    except (OSError, ValueError, UnicodeDecodeError):
        return ""


def submission_hash(path, limits=None):
    """A digest of what would be graded (names and bytes, read without following links, within `limits`:
    grader.settings.ReadLimits); refused entries count by their names, so any change to the submission
    changes the digest."""
    limits = limits or ReadLimits()
    digest = hashlib.sha256()
    if path is None:
        digest.update(b"nothing handed in")
        return digest.hexdigest()
    try:
        listing = list_files(path, limits)
    except SubmissionError as exc:
        digest.update(f"unusable: {exc}".encode())
        return digest.hexdigest()
    for name, file in listing.files:
        digest.update(name.encode() + b"\0")
        try:
            data = read_regular(file, limits.source_file_mb << 20)
        except OSError as exc:
            data = f"unreadable: {exc.strerror}".encode()
        digest.update(data if data is not None else b"too large: " + str(os.lstat(file).st_size).encode())
        digest.update(b"\0")
    for note in listing.notes:
        digest.update(str(note).encode() + b"\0")  # a note is a message: its English
    return digest.hexdigest()
