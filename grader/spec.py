"""A check is data: which exercise, which probe with which inputs, what counts as right, points."""

from __future__ import annotations

import builtins
import copy
import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

ID = re.compile(r"^[a-z0-9][a-z0-9_]{0,63}$")
GRADER_ONLY = ("twin", "twin_of", "proves_work")  # a check's fields that stay in the grader (left out of Check.spec)


@dataclass(frozen=True)
class Mistake:
    """A known mistake, declared beside its exercise's checks: what the learner reads when an answer is this
    mistake's, and its own ladder of hints. `wrong` is the ladder's key line as the mistake writes it, `also`
    the other statements of the solution it rewrites ({statement: its mistaken form}); the solution with those
    rewritten is the mistake (grader/mistakes.py), unless posenc_ref/mistakes/ writes it by hand."""

    exercise: str  # the contract name it gets wrong
    message: str  # the mistake and the fix, in words a learner reads
    hints: tuple  # (the idea it misses, where to look, "key line: `...`")
    wrong: str  # the key line as the mistake writes it: one statement a line
    also: dict = field(default_factory=dict)  # {statement of the solution: its mistaken form}
    # its answer is its input, unchanged (a permutation left out): on a value-free check's twin it proves no work
    # (grader/twins.py), so a function that does nothing earns nothing by it
    no_work: bool = False


@dataclass(frozen=True, eq=False)
class Check:
    exercise: str  # the contract name, e.g. "sinusoidal_table"
    name: str  # what is checked, in words a learner reads
    probe: str  # a function in posenc_selfcheck's probe catalog
    params: dict = field(default_factory=dict)  # its inputs, as data
    expect: str = "match"  # match | raises | fields | ok | property
    points: float = 1.0
    public: bool = False  # public checks also run in the learner's self-check, on stored answers
    tol: dict | None = None  # {"atol", "rtol", "per_position", "max_position"}
    check_dtype: bool = True
    raises: str = "ValueError"
    mentions: tuple = ()  # words the exception message must contain
    fields: dict | None = None  # for expect="fields"
    property: str | None = None  # for expect="property": a name in posenc_selfcheck.properties
    property_params: dict = field(default_factory=dict)
    hint: str | None = None  # said when the check fails
    mistakes: tuple = ()  # names of known mistakes (its chapter's MISTAKES) recognised in a wrong answer
    cuda: bool = False  # runs only where a GPU is present
    # a main check: its inputs are drawn for each student from the grader's secret (grader/unseen.py), so no
    # learner has seen them; it is its own twin, and value-free checks take it as a twin too (grader/twins.py).
    # Declared with `unseen_like`, never public, hidden until the due date.
    main: bool = False
    # the same case on inputs no learner has seen (grader/twins.py): None derives it (every tensor's seed drawn
    # per student); else a params dict with draws, or a tuple of them and of main-like Checks. A scored check
    # earns its points only when its twins are answered as the reference answers them
    twin: object = None
    twin_of: str = ""  # a twin: the key of the check it stands for (set by grader/twins.py, never declared)
    # a twin that only proves work on unseen inputs (a value-free check's main check): a known mistake's answer
    # there is work too, so it counts as well as the reference's (grading.with_twins)
    proves_work: bool = False
    # readable, unique within the exercise, and never changed once released: gradebooks, feedback,
    # self-check data and Gradescope key on `key` (grader/checks/ids.lock.json guards it)
    id: str = field(default="", kw_only=True)

    @builtins.property  # (the field `property` shadows the builtin in this class body)
    def key(self):
        """The check's stable global id: '<exercise>.<id>'."""
        return f"{self.exercise}.{self.id}"

    def meaning(self):
        """What the check asks, as a digest: the same id must always ask the same thing."""
        what = {"exercise": self.exercise, "probe": self.probe, "params": self.params, "expect": self.expect,
                "property": self.property, "property_params": self.property_params, "fields": self.fields,
                "raises": self.raises if self.expect == "raises" else None, "cuda": self.cuda}
        return hashlib.sha256(json.dumps(what, sort_keys=True, default=repr).encode()).hexdigest()[:16]

    def spec(self):
        """The JSON-able form shared with the self-check and the sandbox."""
        # a copy of every field but the twin's (its draws never leave the grader), taken without copying them first:
        # a twin may hold thousands of drawn prompts, and a judgement asks for its check's spec
        d = {f.name: copy.deepcopy(getattr(self, f.name)) for f in dataclasses.fields(self)
             if f.name not in GRADER_ONLY}
        d["key"] = self.key  # "id" stays the check's id within its exercise
        d["mentions"] = list(self.mentions)
        d["mistakes"] = list(self.mistakes)
        return d

    def needs_reference(self):
        """Only "match" checks compare with the reference; the others judge the answer alone."""
        return self.expect == "match"

    @builtins.property
    def drawn(self):
        """A main check or a twin: its inputs are drawn for each student (grader/unseen.py) and never shown."""
        return self.main or bool(self.twin_of)

    @builtins.property
    def unseen(self):
        """True for a main check or a twin whose params still hold draws (resolved per student by grader/unseen.py)."""
        return self.drawn and has_draws([self.params, self.property_params])

    @builtins.property
    def visible(self):
        """Shown before the due date: public checks only. A main check's and a twin's inputs are drawn for the
        student (the same at every resubmission), so what they expect stays out of sight until the due date."""
        return self.public


# ---- draws: inputs decided per submission ---------------------------------------------------------------
def draw_int(lo, hi, step=1, name=None):
    """An int from range(lo, hi + 1, step), drawn per submission; `name` lets a later `same(name)` reuse it."""
    return {"draw": "int", "lo": lo, "hi": hi, "step": step, "name": name}


def draw_float(lo, hi, digits=4, log=False, name=None):
    """A float in [lo, hi] with `digits` significant digits, drawn per student (`log`: uniform in log scale)."""
    return {"draw": "float", "lo": lo, "hi": hi, "digits": digits, "log": log, "name": name}


def draw_choice(*options, name=None):
    return {"draw": "choice", "of": list(options), "name": name}


class Options(Sequence):
    """The options of `draw_among`, made by `make()` the first time a draw (or a count) needs them, then kept."""

    def __init__(self, make):
        self._make, self._made = make, None

    def _options(self):
        if self._made is None:
            self._made = list(self._make())
        return self._made

    def __len__(self):
        return len(self._options())

    def __getitem__(self, index):
        return self._options()[index]


def draw_among(make):
    """draw_choice among the options `make()` returns, made only when a student's draw needs them: a twin's thousands
    of prompts cost nothing to load the course, nor to grade another exercise. For twins only (a main check's
    params are part of its meaning), and with no named draw in them (unseen._Draws does not look for names there:
    `named_among` finds one, and build --check refuses it)."""
    return {"draw": "choice", "of": Options(make), "name": None}


def named_among(value):
    """True when draw_among's options somewhere in `value` hold a named draw."""
    if isinstance(value, dict):
        if isinstance(value.get("of"), Options):
            return any(_named_draws(o) for o in value["of"])
        return any(named_among(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(named_among(v) for v in value)
    return False


def _named_draws(value):
    if isinstance(value, dict):
        named = value.get("draw") not in (None, "same") and value.get("name")  # what unseen._Draws declares
        return bool(named) or any(_named_draws(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_named_draws(v) for v in value)
    return False


def same(name, times=1, plus=0):
    """The value drawn earlier (params first, then property_params, each in order) under `name`, times `times`,
    plus `plus`."""
    return {"draw": "same", "name": name, "times": times, "plus": plus}


def shuffled(*items):
    """The items (draws among them) in an order drawn per submission."""
    return {"draw": "shuffle", "of": list(items)}


def pairs(*items):
    """A dict whose keys may be draws: pairs((same("good"), True), ...)."""
    return {"draw": "pairs", "items": [list(item) for item in items]}


SEED = {"draw": "seed"}  # a tensor spec's seed, drawn per submission
MAIN = "main"  # in a declared twin (grader/twins.py): the exercise's main check, drawn anew under the twin's key
RESEEDED = "reseeded"  # in a declared twin: the check's own params with every seed drawn (the derived twin)


def has_draws(value):
    if isinstance(value, dict):
        return "draw" in value or any(has_draws(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_draws(v) for v in value)
    return False


def unseen_like(check, params, name, id, points=1.0, **changes):
    """A main check modelled on a public one (its probe, expectation, tolerance, known mistakes and hint) on
    inputs drawn for each submission: `params` holds draws (draw_int, draw_choice, same, shuffled, SEED).
    Hidden until the due date (its inputs are the student's for every resubmission), never in the self-check data."""
    if not has_draws([params, changes.get("property_params")]):
        raise ValueError(f"{check.exercise}: a main check needs draws in its params")
    return dataclasses.replace(check, name=name, params=params, main=True, public=False, points=points, id=id,
                               **changes)


def find(checks, exercise, check_id):
    """The check `exercise.check_id` in a chapter's list (to model a main check on it)."""
    found = [c for c in checks if c.exercise == exercise and c.id == check_id]
    if len(found) != 1:
        raise KeyError(f"{exercise}.{check_id}")
    return found[0]
