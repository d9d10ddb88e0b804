"""Progressive hints, one ladder per exercise and one per known mistake: the self-check reveals them one
level at a time.

Level 0 is the `# Hint` block of the exercise's stub in the notebook: the idea and the shapes. When the
self-check fails, it shows level 1 of the ladder that fits the diagnosis (the named mistake's, else the
exercise's); each new attempt that still fails with other answers shows the next level; the last level is
the key line of the solution.

The ladders are declared beside each exercise's checks, in the course's sources, and `python -m grader build`
writes them to data/hints.json: {"exercises": {exercise: levels}, "mistakes": {mistake: {"levels": ...,
"wrong": the key line as the mistake writes it, "also": the other statements it rewrites}}}.
"""

import json
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _load():
    data = json.loads((Path(__file__).with_name("data") / "hints.json").read_text(encoding="utf-8"))
    exercises = {name: tuple(levels) for name, levels in data["exercises"].items()}
    mistakes = {name: {**entry, "levels": tuple(entry["levels"])} for name, entry in data["mistakes"].items()}
    return exercises, mistakes


def __getattr__(name):
    """HINTS ({exercise: levels}) and MISTAKE_HINTS ({mistake: entry}), read on first use: the build imports this
    package while it computes data/hints.json anew, and never reads the one it wrote before."""
    if name in ("HINTS", "MISTAKE_HINTS"):
        return _load()[name == "MISTAKE_HINTS"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
