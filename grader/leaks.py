"""Solution markers and solution lines, in one place: the build rewrites what the markers enclose, the
release, the nbgrader export and the tests prove that none of it reaches a student.

A chapter source marks each exercise's solution with `### BEGIN SOLUTION` ... `### END SOLUTION`.
A line of a region is *distinctive* when it is code (not a comment), at least `AUTHORING.leak_line_chars`
characters long (grader/settings.py), and not also shown outside any region (scaffolding, demos): such a line in a
student's file is a leak.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import course
from .settings import AUTHORING

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")


def chapter_sources():
    """The hand-edited chapter sources (course/NN_name/chapter.py), in order."""
    return [chapter.path("source") for chapter in course.chapters()]


def code(line):
    """A line without its comment, stripped ("" for a comment line)."""
    return "" if line.strip().startswith("#") else line.split("  #")[0].strip()


def solution_regions(sources=None):
    """[(course/NN_name/chapter.py, distinctive lines)] for every solution region of the chapter sources. A line
    counts as shown only when its own chapter shows it: another chapter quoting it is a leak too."""
    out = []
    for chapter in sources or chapter_sources():
        regions, shown, current = [], set(), None
        for line in Path(chapter).read_text().splitlines():
            if BEGIN.match(line):
                current = []
            elif END.match(line):
                regions.append(current or [])
                current = None
            elif len(code(line)) >= AUTHORING.leak_line_chars:
                (shown.add(code(line)) if current is None else current.append(code(line)))
        where = course.of_file(chapter).relative("source")
        out += [(where, [line for line in lines if line not in shown]) for lines in regions]
    return out


def leaked_lines(text, regions=None):
    """The distinctive solution lines that appear in `text` (a student's notebook sources, say)."""
    every = {line for _, lines in (regions if regions is not None else solution_regions()) for line in lines}
    return sorted(every & {code(line) for line in text.splitlines()})


def has_markers(text):
    return "### BEGIN SOLUTION" in text or "### END SOLUTION" in text
