"""A seeded fuzz of the ways to buy a grade without the work (issue 25): partial implementations of chapter 1,
each exercise honest, a stub, or a stub behind a lookup of the release's answers; the same file re-salted and
renamed, resubmitted by the same student. Whatever the mix:

- the lookup adds nothing: the file scores what it scores without it (a lookup earns nothing);
- an honest exercise keeps full marks whatever else the file does (partial work earns what it computes);
- a re-salted, renamed copy from the same student gets the same grade, check by check (draws are keyed on the
  student, so resubmitting fishes for nothing).
"""

from __future__ import annotations

import random

from grader.checks import chapter_checks
from grader.grading import Grader
from tests.conftest import settings
from tests.test_hostile import honest_source
from tests.test_unseen_inputs import LIMITS, _forged

CH01 = chapter_checks("ch01")
EXERCISES = ["sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"]
STUB = {"sinusoidal_table": "def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):\n"
                            "    raise ValueError('seq_len d_model')\n",
        "shift_matrix": "def shift_matrix(k, d_model, base=10000.0):\n    raise ValueError('d_model')\n",
        "SinusoidalPositionalEncoding": "class SinusoidalPositionalEncoding:\n    pass\n"}


def _scores(grade):
    return {v.check.key: (str(v.status), v.score) for v in grade.verdicts}


def _by_exercise(grade):
    out = {}
    for v in grade.verdicts:
        got, full = out.get(v.check.exercise, (0.0, 0.0))
        out[v.check.exercise] = (got + v.score, full + v.max_score)
    return out


def test_seeded_partial_work_lookups_and_resalted_files(tmp_path):
    rng = random.Random(20261202)
    grader = Grader(settings(**LIMITS), CH01)
    for n in range(2):
        kinds = {ex: rng.choice(["honest", "stub", "lookup"]) for ex in EXERCISES}
        if n == 0:
            kinds[EXERCISES[0]] = "honest"  # at least one honest and one looked-up exercise in the first mix
            kinds[EXERCISES[1]] = "lookup"
        if "lookup" not in kinds.values():
            kinds[rng.choice([ex for ex in EXERCISES if kinds[ex] != "honest"] or EXERCISES[1:])] = "lookup"
        stubs = "\n\n".join(STUB[ex] for ex, kind in kinds.items() if kind != "honest")
        plain = honest_source() + "\n\n" + stubs + "\n"
        # the release's answers to the looked-up exercises' public checks, served in place of the stubs
        lookup = _forged(tmp_path, [ex for ex, kind in kinds.items() if kind == "lookup"], "expected").read_text()
        looked_up = plain + "\n" + _lookup_part(lookup)
        a, b = tmp_path / f"plain{n}.py", tmp_path / f"lookup{n}.py"
        a.write_text(plain)
        b.write_text(looked_up)
        graded_plain = grader.grade(a, student=f"student{n}")
        graded_lookup = grader.grade(b, student=f"student{n}")
        assert graded_lookup.total == graded_plain.total, (kinds, _scores(graded_lookup))
        groups = _by_exercise(graded_plain)
        for ex, kind in kinds.items():
            if kind == "honest" and (ex != "SinusoidalPositionalEncoding" or kinds["sinusoidal_table"] == "honest"):
                assert groups[ex][0] == groups[ex][1], (kinds, ex, groups)
        # the same file, re-salted and renamed, from the same student: the same grade, check by check
        resalted = tmp_path / f"renamed_{rng.randrange(10 ** 6)}.py"
        resalted.write_text(looked_up + f"\nSALT = {rng.randrange(10 ** 9)}\n")
        again = grader.grade(resalted, student=f"student{n}")
        assert _scores(again) == _scores(graded_lookup), kinds


def _lookup_part(forged_text):
    """The lookup of the release's answers (forged_from_release.py) without its stubs: it serves the public inputs
    and passes every other request to the real probe runner."""
    starts = [forged_text.find(f"\ndef {ex}(*args, **kwargs)") for ex in EXERCISES]
    starts += [forged_text.find(f"\nclass {ex}:\n    pass") for ex in EXERCISES]
    return forged_text[:min(i for i in starts if i >= 0)] + "\n"
