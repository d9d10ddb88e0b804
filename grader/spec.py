"""A check is data: which exercise, which probe with which inputs, what counts as right, points."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, eq=False)
class Check:
    exercise: str  # the contract name, e.g. "sinusoidal_table"
    name: str  # what is checked, in words a learner reads
    probe: str  # a function in posenc_selfcheck.probes
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
    id: str = ""  # filled in when the chapter's checks are collected

    def spec(self):
        """The JSON-able form shared with the self-check and the sandbox."""
        d = asdict(self)
        d["mentions"] = list(self.mentions)
        d["mistakes"] = list(self.mistakes)
        return d

    def needs_reference(self):
        """Only "match" checks compare with the reference; the others judge the answer alone."""
        return self.expect == "match"
