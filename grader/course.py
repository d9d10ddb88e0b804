"""The course's chapters, one folder each: `course/NN_name/` holds everything of chapter NN written by hand.

    chapter.py        the source (jupytext py:percent): the text, the exercises and their solutions
    exercises.py      the declaration: EXERCISES, one grader.exercise.Exercise record per exercise, and the flat
                      tables derived from them, CONVENTIONS, CHECKS, HINTS, MISTAKES (imported as grader.checks.chNN)
    zh_CN.po          the Chinese catalog: one message per paragraph (grader/i18n_build.py)
    mistakes.py       only where a mistake is written by hand: IMPLEMENTATIONS (imported as posenc_ref.mistakes.chNN)
    hidden_probes.py  only where the grader keeps probes to itself (imported as grader.hidden_probes.probes_chNN_hidden,
                      the name it has in the sandbox's folder: grader/hidden_probes/__init__.py)
    probes.py         only where the chapter adds public probes (the self-check's and the grader's): shipped by the
                      build as posenc_selfcheck/probes_chNN.py (grader/selfcheck_code.py), imported from there
    properties.py     only where the chapter adds properties: shipped as posenc_selfcheck/properties_chNN.py

This is the one list of chapters: whatever reads a chapter's part asks here for its path or its module, and a
chapter counts once its folder is here. Standard library only: the sandbox's host side reads it too (the hidden
probes' files). The Gradescope bundle carries the folders without chapter.py and zh_CN.po, which the grader never
reads (grader/gradescope.py).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "course"

# {part: its file in a chapter's folder}
FILES = {"source": "chapter.py", "exercises": "exercises.py", "catalog": "zh_CN.po", "mistakes": "mistakes.py",
         "hidden_probes": "hidden_probes.py", "probes": "probes.py", "properties": "properties.py"}
# {part: the module name it is imported under}: the names its importers used before the folders existed
MODULES = {"exercises": "grader.checks.{key}", "mistakes": "posenc_ref.mistakes.{key}",
           "hidden_probes": "grader.hidden_probes.probes_{key}_hidden"}


@dataclass(frozen=True)
class Chapter:
    folder: Path  # course/NN_name

    @property
    def stem(self):
        """'01_sinusoidal': the folder's name, and the generated notebooks' and reference module's."""
        return self.folder.name

    @property
    def key(self):
        """'ch01': the assignment, the self-check data, the check registry."""
        return f"ch{self.stem[:2]}"

    def path(self, part):
        return self.folder / FILES[part]

    def has(self, part):
        return self.path(part).is_file()

    def relative(self, part):
        """'course/01_sinusoidal/chapter.py': what generated files and messages name."""
        return self.path(part).relative_to(self.folder.parent.parent).as_posix()


_LISTED = {}  # {course folder: (its modification time, its chapters)}: a folder added or renamed changes the time
SETTLED_NS = 2_000_000_000  # a folder's time has a clock tick's resolution: one changed this recently is listed again


def chapters(course=COURSE):
    """Every chapter, in order (the folder is listed again only once it changed: the catalogs ask for a chapter
    hundreds of thousands of times in one build)."""
    stamp = course.stat().st_mtime_ns if course.is_dir() else None
    listed = _LISTED.get(course)
    if listed is None or listed[0] != stamp or stamp is None or time.time_ns() - stamp < SETTLED_NS:
        found = [Chapter(folder) for folder in sorted(course.glob("[0-9][0-9]_*")) if folder.is_dir()]
        _LISTED[course] = listed = (stamp, tuple(found))
    return list(listed[1])


def chapter(key, course=COURSE):
    """'ch01' -> its Chapter; None where no folder has that number."""
    return next((c for c in chapters(course) if c.key == key), None)


def of_file(path):
    """The Chapter whose folder holds `path` (course/NN_name/chapter.py, say)."""
    return Chapter(Path(path).resolve().parent)


def load(chapter, part):
    """The module of a chapter's part (MODULES), executed from its file once and kept in sys.modules."""
    name = MODULES[part].format(key=chapter.key)
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, chapter.path(part))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:  # as an import of a submodule does: `from grader.checks import ch03`
            setattr(sys.modules[parent], child, module)
    return sys.modules[name]
