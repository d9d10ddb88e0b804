"""Which submissions a class folder holds, under which student ids, and whether they changed.

A class folder holds one entry per student: a notebook, a .py file, or a folder of them (its name,
without the suffix, is the student's id), or nbgrader's layout `submitted/<student>/<assignment>/`.
Entries are untrusted: a symbolic link or a device is a submission that scores zero with its reason,
never something to follow. Ids are file names of the output folder, so they are made of safe
characters and short; when that changes a name, or two names would meet, the id gets a short hash of
the original name, so nobody silently overwrites anybody (the gradebook shows both).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..escape import identifier, one_line
from ..files import read_regular
from ..submission import MAX_FILE_BYTES, SUFFIXES, SubmissionError, list_files

MAX_ID = 48


@dataclass(frozen=True)
class Entry:
    student: str  # the id: safe, unique, stable
    path: Path
    name: str  # the entry's own name, printable (what the instructor sees in the gradebook)


def _id(name):
    return identifier(name, MAX_ID) or "submission"


def discover(folder):
    """{student id: Entry}, sorted by id."""
    folder = Path(folder)
    submitted = folder / "submitted"
    if stat.S_ISDIR(os.lstat(submitted).st_mode if os.path.lexists(submitted) else 0):
        return _assign(_nbgrader_entries(submitted))
    raw = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith((".", "_")):
            continue
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        path = Path(entry.path)
        if stat.S_ISDIR(mode) or stat.S_ISLNK(mode) or not stat.S_ISREG(mode) or path.suffix in SUFFIXES:
            stem = path.stem if stat.S_ISREG(mode) else entry.name
            raw.append((stem, entry.name, path))
    return _assign(raw)


def _nbgrader_entries(submitted):
    """nbgrader's submitted/<student>/<assignment>/: one submission per student (all assignments)."""
    return [(e.name, e.name, Path(e.path)) for e in sorted(os.scandir(submitted), key=lambda e: e.name)
            if not e.name.startswith(".")]


def _assign(raw):
    """Ids for [(stem, name, path)]: the stem made safe; with a hash of the name when the stem changed
    or repeats (alice.py and alice.ipynb, bob_smith and bob~smith)."""
    stems = {}
    for stem, _, _ in raw:
        stems[_id(stem)] = stems.get(_id(stem), 0) + 1
    out = {}
    for stem, name, path in raw:
        student = _id(stem)
        if student != stem or stems[student] > 1:
            student = f"{student[:MAX_ID - 9]}-{hashlib.sha256(os.fsencode(name)).hexdigest()[:8]}"
        out[student] = Entry(student, path, one_line(name, 120))
    return dict(sorted(out.items()))


def submission_hash(path):
    """A digest of what would be graded (names and bytes, read without following links); refused
    entries count by their names, so any change to the submission changes the digest."""
    digest = hashlib.sha256()
    try:
        listing = list_files(path)
    except SubmissionError as exc:
        digest.update(f"unusable: {exc}".encode())
        return digest.hexdigest()
    for name, file in listing.files:
        digest.update(name.encode() + b"\0")
        try:
            data = read_regular(file, MAX_FILE_BYTES)
        except OSError as exc:
            data = f"unreadable: {exc.strerror}".encode()
        digest.update(data if data is not None else b"too large: " + str(os.lstat(file).st_size).encode())
        digest.update(b"\0")
    for note in listing.notes:
        digest.update(note.encode() + b"\0")
    return digest.hexdigest()
