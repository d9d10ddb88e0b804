"""Assignments: one named set of exercises, with their points and which checks are hidden.

Every chapter of the check registry (grader/checks/__init__.py CHAPTERS) is an assignment by default,
named after it (`ch01`; nbgrader's folder name `ch01_sinusoidal` is accepted too). An instructor defines
others in the course file, `course.json` at the repository root (docs/instructor.md, "Assignments"):

    {"assignments": {
        "week1": {"title": "Attention and the sinusoidal table",
                  "chapters": ["ch00", "ch01"],
                  "exercises": ["scaled_dot_product_attention", "sinusoidal_table"],   (optional: a subset)
                  "points": {"sinusoidal_table": 20},      (optional: an exercise's total, CUDA checks aside)
                  "hidden": ["sinusoidal_table.single_position", "shift_matrix"]}}}  (optional: check keys
                                                                                      or whole exercises)

`grade`, `batch`, `gradescope`, `nbgrader` and `release` take `--assignment NAME`; everything they write is
then as if the assignment's exercises were the course. Grading asks the grader for the assignment's checks
only (Grader's `checks=`); `apply` then gives each verdict the assignment's points and visibility, so the
sandbox and the judging never see the course file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .checks import CHAPTERS, chapter_checks
from .course import chapter as chapter_folder

REPO = Path(__file__).resolve().parent.parent
COURSE_FILE = REPO / "course.json"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
KEYS = {"title", "chapters", "exercises", "points", "hidden"}


class CourseError(ValueError):
    """The course file or an --assignment name is wrong; the message says what to change."""


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    chapters: tuple  # registry chapters, e.g. ("ch00", "ch01")
    checks: tuple  # grader.spec.Check with the assignment's points and visibility, in registry order
    nbgrader_name: str  # the folder nbgrader knows it by (source/<name>/, submitted/<student>/<name>/)

    @property
    def exercises(self):
        return list(dict.fromkeys(c.exercise for c in self.checks))

    @property
    def keys(self):
        return {c.key for c in self.checks}

    def registry_checks(self):
        """The registry's own checks of this assignment: what the grader runs (points do not matter there)."""
        from .checks import by_key

        registry = by_key()
        return [registry[c.key] for c in self.checks]

    def max_points(self, cuda=False):
        """The assignment's maximum: without a GPU the CUDA checks are skipped and worth nothing."""
        return sum(c.points for c in self.checks if cuda or not c.cuda)

    def exercise_points(self, exercise, cuda=False):
        return sum(c.points for c in self.checks if c.exercise == exercise and (cuda or not c.cuda))

    def apply(self, grade):
        """The grade as this assignment counts it: only its checks, with its points and visibility."""
        from .records import Verdict

        mine = {c.key: c for c in self.checks}
        verdicts = [Verdict(mine[v.check.key], v.status, v.feedback, v.mistake)
                    for v in grade.verdicts if v.check.key in mine]
        return dataclasses.replace(grade, verdicts=verdicts)

    def spec(self):
        """The JSON form that rebuilds it (what the Gradescope bundle carries)."""
        return {"name": self.name, "title": self.title, "nbgrader_name": self.nbgrader_name,
                "checks": [[c.key, c.points, c.public] for c in self.checks]}

    @classmethod
    def from_spec(cls, data):
        from .checks import by_key

        registry = by_key()
        missing = [key for key, _, _ in data["checks"] if key not in registry]
        if missing:
            raise CourseError(f"assignment {data['name']!r} names checks this grader does not have: {missing[:5]}")
        checks = tuple(dataclasses.replace(registry[key], points=float(points), public=bool(public))
                       for key, points, public in data["checks"])
        return cls(data["name"], data["title"], tuple(dict.fromkeys(_chapter_of_key(k) for k, _, _ in data["checks"])),
                   checks, data["nbgrader_name"])


def _chapter_of_key(key):
    from .checks import chapter_of

    return chapter_of()[key.split(".", 1)[0]]


def chapter_folder_name(chapter):
    """'ch01' -> 'ch01_sinusoidal' (after course/01_sinusoidal/); 'chNN' where no folder exists."""
    folder = chapter_folder(chapter)
    return f"ch{folder.stem}" if folder else chapter


def _chapter_title(chapter):
    from .report import chapter_title

    return chapter_title(chapter)


def default_assignments():
    """One per chapter of the registry, in its order."""
    out = {}
    for chapter in CHAPTERS:
        out[chapter] = Assignment(chapter, _chapter_title(chapter), (chapter,), tuple(chapter_checks(chapter)),
                                  chapter_folder_name(chapter))
    return out


def _build(name, entry, where):
    if not isinstance(entry, dict):
        raise CourseError(f"{where}: assignment {name!r} must be an object with 'chapters'")
    unknown = set(entry) - KEYS
    if unknown:
        raise CourseError(f"{where}: assignment {name!r} has unknown keys {sorted(unknown)} (allowed: {sorted(KEYS)})")
    chapters = entry.get("chapters")
    if not isinstance(chapters, list) or not chapters or not all(isinstance(c, str) for c in chapters):
        raise CourseError(f"{where}: assignment {name!r} needs 'chapters', a list such as [\"ch00\", \"ch01\"]")
    bad = [c for c in chapters if c not in CHAPTERS]
    if bad:
        raise CourseError(f"{where}: assignment {name!r}: no chapter {bad} (chapters: {', '.join(CHAPTERS)})")
    checks = [c for chapter in CHAPTERS if chapter in chapters for c in chapter_checks(chapter)]
    known = list(dict.fromkeys(c.exercise for c in checks))
    exercises = entry.get("exercises", known)
    if not isinstance(exercises, list) or not all(isinstance(e, str) for e in exercises):
        raise CourseError(f"{where}: assignment {name!r}: 'exercises' must be a list of exercise names")
    bad = [e for e in exercises if e not in known]
    if bad:
        raise CourseError(f"{where}: assignment {name!r}: {bad} are not exercises of {chapters} ({', '.join(known)})")
    checks = [c for c in checks if c.exercise in exercises]
    points = entry.get("points", {})
    if not isinstance(points, dict):
        raise CourseError(f"{where}: assignment {name!r}: 'points' maps an exercise to its total, e.g. "
                          "{\"sinusoidal_table\": 20}")
    scale = {}
    for exercise, total in points.items():
        if exercise not in exercises:
            raise CourseError(f"{where}: assignment {name!r}: points for {exercise!r}, which is not one of its "
                              "exercises")
        if not isinstance(total, (int, float)) or isinstance(total, bool) or total < 0:
            raise CourseError(f"{where}: assignment {name!r}: the points of {exercise!r} must be a number >= 0")
        own = sum(c.points for c in checks if c.exercise == exercise and not c.cuda)
        # each check keeps its share of the exercise: points_c * total / sum(points of its CPU checks)
        scale[exercise] = total / own if own else 0.0
    hidden = entry.get("hidden", [])
    keys = {c.key for c in checks}
    if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
        raise CourseError(f"{where}: assignment {name!r}: 'hidden' is a list of check keys or exercise names")
    bad = [h for h in hidden if h not in keys and h not in exercises]
    if bad:
        raise CourseError(f"{where}: assignment {name!r}: 'hidden' names {bad}, which are neither a check key "
                          "(exercise.id, see grader/checks/ids.lock.json) nor an exercise of it")
    hide = set(hidden)
    final = tuple(dataclasses.replace(c, points=c.points * scale.get(c.exercise, 1.0),
                                      public=c.public and c.key not in hide and c.exercise not in hide)
                  for c in checks)
    title = entry.get("title", name)
    if not isinstance(title, str):
        raise CourseError(f"{where}: assignment {name!r}: 'title' must be text")
    return Assignment(name, title, tuple(c for c in CHAPTERS if c in chapters), final, name)


def load_course(path=None):
    """{name: Assignment}: the chapters' defaults, then the course file's own."""
    path = Path(path) if path else COURSE_FILE
    out = default_assignments()
    if not path.exists():
        return out
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise CourseError(f"{path}: not valid JSON ({exc})") from None
    entries = data.get("assignments", {}) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise CourseError(f"{path}: expected {{\"assignments\": {{NAME: {{...}}}}}}")
    for name, entry in entries.items():
        if not NAME.match(name):
            raise CourseError(f"{path}: assignment name {name!r}: letters, digits, '_' and '-' only")
        if name in out or any(a.nbgrader_name == name for a in out.values()):
            raise CourseError(f"{path}: {name!r} is a chapter's own assignment; choose another name")
        out[name] = _build(name, entry, path)
    return out


def get(name, course_file=None):
    """The assignment called `name` (a chapter's nbgrader folder name works too); None for the whole course."""
    if not name:
        return None
    course = load_course(course_file)
    for assignment in course.values():
        if name in (assignment.name, assignment.nbgrader_name):
            return assignment
    raise CourseError(f"no assignment {name!r}; defined: {', '.join(course)}")


def whole_course():
    """The course as one assignment (what a run without --assignment grades)."""
    checks = tuple(c for chapter in CHAPTERS for c in chapter_checks(chapter))
    return Assignment("course", "the whole course", tuple(CHAPTERS), checks, "course")


def resolve(settings):
    """The assignment `settings` names, else the whole course."""
    return get(settings.assignment, settings.course_file or None) or whole_course()


def heading(assignment, language="en"):
    """'Assignment ch01: Chapter 1 — sinusoidal' in `language` (a chapter's title translated, the course file's
    as written); "" for the whole course."""
    from .language import phrasebook
    from .report import chapter_title

    if not assignment or assignment.name == "course":
        return ""
    say = phrasebook(language)
    title = assignment.title
    if re.fullmatch(r"ch\d\d", assignment.name) and title == chapter_title(assignment.name):  # a chapter's own
        title = chapter_title(assignment.name, say)
    return say("Assignment {name}: {title}", name=assignment.name, title=title)


def report_for(grade, assignment=None, language="en"):
    """The text report, headed by the assignment it covers, in `language`."""
    from .report import text_report

    head = heading(assignment, language)
    return (head + "\n" if head else "") + text_report(grade, language)
