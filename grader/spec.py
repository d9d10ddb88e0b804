"""A check is data: which exercise, which probe with which inputs, what counts as right, points."""

from __future__ import annotations

import builtins
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field

ID = re.compile(r"^[a-z0-9][a-z0-9_]{0,63}$")


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
    mistakes: tuple = ()  # names in posenc_ref.mistakes recognised in a wrong answer
    cuda: bool = False  # runs only where a GPU is present
    # one of the exercise's main inputs: its other checks count once one of these is answered with the
    # reference's answer or a named mistake's (grading.gate); public, and compared with the reference
    main: bool = False
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
        d = asdict(self)
        d["id"] = self.key
        d["mentions"] = list(self.mentions)
        d["mistakes"] = list(self.mistakes)
        return d

    def needs_reference(self):
        """Only "match" checks compare with the reference; the others judge the answer alone."""
        return self.expect == "match"
