"""Chapter 8 names the mistakes other hands make (issue 28). Five sets of 20 whole chapter 8 submissions
(tests/submissions/ch08_indep_A … _E), each written by a separate session from the chapter's text alone, without
reading the declared mistakes, the held-out set or the other sets: one realistic mistake per file, said on its
first line. tests/submissions/ch08_independent.json says, for each file, what names its cause:

    mistake   a known mistake: the self-check's diagnosis (the ladder it shows) is that mistake's
    says      words of the first failing check's feedback: a wrong dtype, a check's note, a property test's verdict on
              the candidate it got wrong, the ValueError it should raise
    passes    right code written another way: full marks

Each set was measured when it was written, before the mistakes it found unnamed were declared (the closing note of
issue 28 gives those numbers); since then each is a regression test. The grader's verdicts name the same mistakes
(tests/test_ch08_mistakes_named.py grades its held-out set both ways); here the self-check runs in this process on
the one exercise each file gets wrong, so that 100 files cost seconds."""

import importlib.util
import json
from collections import defaultdict

import pytest

from posenc_selfcheck import FAILED
from posenc_selfcheck.messages import render
from posenc_selfcheck.runner import diagnosis, run_checks
from tests.conftest import ROOT

SUBMISSIONS = ROOT / "tests" / "submissions"
EXPECTED = json.loads((SUBMISSIONS / "ch08_independent.json").read_text())


def _exercise(relative, exercise):
    """The learner's function of that exercise (trusted test data, imported here)."""
    path = SUBMISSIONS / relative
    spec = importlib.util.spec_from_file_location(f"ch08_independent_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, exercise)


def named(relative):
    """True when the self-check's feedback on the file names what EXPECTED says is its cause."""
    want = EXPECTED[relative]
    runs = run_checks(want["exercise"], _exercise(relative, want["exercise"]))
    failed = [render(message, "en") for _, status, message in runs if status == FAILED]
    if "passes" in want:
        return not failed
    if "mistake" in want:
        return diagnosis(runs) == want["mistake"]
    return bool(failed) and want["says"] in failed[0]


def test_the_manifest_lists_every_file_of_every_set():
    files = {p.relative_to(SUBMISSIONS).as_posix() for p in SUBMISSIONS.glob("ch08_indep_*/*.py")}
    assert files == set(EXPECTED) and len(files) == 100
    assert all(len(list(SUBMISSIONS.glob(f"ch08_indep_{s}/*.py"))) == 20 for s in "ABCDE")


@pytest.mark.parametrize("letter", "ABCDE")
def test_each_set_is_named_at_least_90_percent(letter):
    rows = {rel: named(rel) for rel in EXPECTED if rel.startswith(f"ch08_indep_{letter}/")}
    missed = sorted(rel for rel, ok in rows.items() if not ok)
    print(f"\nset {letter}: {len(rows) - len(missed)} of {len(rows)} named; missed: {missed}")
    assert len(rows) - len(missed) >= 0.9 * len(rows), missed


def test_a_known_mistake_is_named_by_its_own_ladder_not_another():
    """Every file whose cause is a declared mistake is diagnosed as that one (none blamed on another)."""
    blamed = defaultdict(list)
    for rel, want in EXPECTED.items():
        if "mistake" in want:
            runs = run_checks(want["exercise"], _exercise(rel, want["exercise"]))
            got = diagnosis(runs)
            if got not in (None, want["mistake"]):
                blamed[rel].append(got)
    assert dict(blamed) == {}
