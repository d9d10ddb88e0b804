"""The self-check's chapter code: each chapter's public probes and properties, written in its folder
(course/NN_name/probes.py, course/NN_name/properties.py), shipped in the self-check package.

    course/NN_name/probes.py      ->  posenc_selfcheck/probes_chNN.py      (the sandbox copies it too)
    course/NN_name/properties.py  ->  posenc_selfcheck/properties_chNN.py
    the chapters that have some   ->  posenc_selfcheck/chapter_probes.py, posenc_selfcheck/chapter_properties.py

A shipped module is its source with one line of header above it, so it imports and reads as the source does
(`from .probes_base import ...`, a chapter's modules by their shipped names: `from .probes_ch04 import ...`).
The two lists are what probes.py and properties.py import: a chapter with probes counts once its folder holds
them. The learner's package is complete without course/ (the student release ships it alone). Standard library
only: the build computes these texts in memory (grader/build.py), and serves them to its own imports
(grader/memory_import.py), never reading the files it writes.
"""

from __future__ import annotations

from . import course

PACKAGE = "posenc_selfcheck"
FOLDER = course.ROOT / PACKAGE
PARTS = {"probes": "chapter_probes", "properties": "chapter_properties"}  # {part: the module listing them}
FLAT = ("probes",)  # parts the sandbox also imports flat from its folder (grader/sandbox/host/runtime_files.py)
SHIPPED = {part: f"{part}_ch[0-9][0-9].py" for part in PARTS}  # {part: its shipped modules' names, as a glob}
SHIPPED_GLOBS = tuple(f"{PACKAGE}/{pattern}" for pattern in SHIPPED.values())


def shipped_name(chapter, part):
    """'probes_ch04': the module a chapter's part is shipped as."""
    return f"{part}_{chapter.key}"


def _header(chapter, part):
    return f"# Generated from {chapter.relative(part)} by `python -m grader build`: edit there.\n"


def _listing(part, names):
    """The module that imports every chapter's `part` module (in the package; probes flat in the sandbox too)."""
    lines = [f'"""Every chapter\'s {part} module ({part}.py imports them from here).',
             "",
             f"Generated from course/*/{part}.py by `python -m grader build`: edit there.",
             '"""', ""]
    # one name a line, with a trailing comma (isort keeps that form however many chapters there are)
    relative = ["from . import (", *(f"    {name}," for name in names), ")"] if names else []
    if names and part in FLAT:
        lines += ["try:", *(f"    {line}" for line in relative), "except ImportError:  # flat in the sandbox"]
        lines += [f"    import {name}" for name in names]
    else:
        lines += relative
    # a tuple of the modules, one per line
    lines += ["", "MODULES = (", *(f"    {name}," for name in names), ")"]
    return "\n".join(lines) + "\n"


def planned(chapters=None):
    """{module name (posenc_selfcheck.probes_ch04): its text}: every chapter's shipped modules and the lists."""
    chapters = course.chapters() if chapters is None else chapters
    texts = {}
    for part, listing in PARTS.items():
        names = []
        for chapter in chapters:
            if chapter.has(part):
                name = shipped_name(chapter, part)
                texts[f"{PACKAGE}.{name}"] = _header(chapter, part) + chapter.path(part).read_text(encoding="utf-8")
                names.append(name)
        texts[f"{PACKAGE}.{listing}"] = _listing(part, names)
    return texts


def path(module):
    """Where the build writes a module of `planned`."""
    return FOLDER / f"{module.rpartition('.')[2]}.py"


def sources(chapters=None):
    """Every chapter's probes.py and properties.py, in the chapters' order."""
    chapters = course.chapters() if chapters is None else chapters
    return [chapter.path(part) for chapter in chapters for part in PARTS if chapter.has(part)]
