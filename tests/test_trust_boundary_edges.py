"""The grader bounds every step of a submission, whatever its size or its answers (issue 25):

- reading and parsing count against the submission's wall-clock budget, cost time linear in a file's size, and a
  file with more code than ReadLimits.code_kb is left out with a note (the rest of the submission is graded);
- what the children send back is capped per submission (Limits.submission_result_bytes), before anything is
  decoded, so a hoard of results cannot grow the trusted grading process (which has no address-space limit on a
  machine with CUDA).

The nbgrader attacks (a notebook nbgrader cannot process, a forged timestamp.txt) are in tests/test_nbgrader_class.py.
"""

from __future__ import annotations

import time

from grader.checks import chapter_checks
from grader.grading import Grader
from grader.remote import RemoteGrader
from grader.sandbox.host.client import Zygote
from tests.conftest import settings
from tests.test_hostile import HOSTILE, honest_source

CH01 = chapter_checks("ch01")
EXERCISES = ("sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding")


def statements(kb):
    """What an attacker appends: `kb` KB of one-line top-level statements (each is run, in every child of every
    exercise). Statements padded with the lines above them made the text sent to the sandbox grow with the square of
    their number: 203 KB took 592 s for one exercise."""
    lines, size, n = [], 0, 0
    while size < kb << 10:
        lines.append(f"_v{n} = {n}\n")
        size, n = size + len(lines[-1]), n + 1
    return "".join(lines)


def scores(grade):
    out = {}
    for v in grade.verdicts:
        got, top = out.get(v.check.exercise, (0.0, 0.0))
        out[v.check.exercise] = (got + v.score, top + v.max_score)
    return out


def full_marks(grade):
    return all(got == top > 0 for got, top in scores(grade).values()) and set(scores(grade)) == set(EXERCISES)


def test_a_200_kb_file_is_graded_within_its_budget_in_time_linear_in_its_size(tmp_path):
    chosen = settings()  # the default budgets: 30 s per exercise, 300 s per submission
    grader = Grader(chosen, CH01, zygote=Zygote.start(chosen))
    files = {}
    for kb in (0, 50, 200):
        files[kb] = tmp_path / f"honest_and_{kb}kb.py"
        files[kb].write_text(honest_source() + "\n\n" + statements(kb))
    assert files[200].stat().st_size > 200_000
    grader.grade(files[0])  # warm: the zygote's imports, the reference's answers
    seconds = {}
    for kb in (50, 200):
        start = time.monotonic()
        grade = grader.grade(files[kb])
        seconds[kb] = time.monotonic() - start
        # within budget: no exercise was cut, every honest exercise earns its points
        assert full_marks(grade), [(v.check.name, str(v.feedback)) for v in grade.verdicts if v.score < v.max_score]
        assert not any("not run" in n or "timed out" in n for n in map(str, grade.notes)), grade.notes
    # four times the size: about four times the size-dependent work (less with the fixed costs); the square of it
    # would be 16 times. Generous slack for a loaded two-core machine
    assert seconds[200] < 8 * seconds[50] and seconds[200] < chosen.limits.wall_seconds, seconds


def test_a_file_over_the_code_limit_is_left_out_with_a_note_and_the_rest_is_graded(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "a_honest.py").write_text(honest_source())
    code_kb = settings().read.code_kb
    (folder / "b_huge.py").write_text(statements(code_kb + 16))
    grade = Grader(settings(), CH01).grade(folder)
    assert any(f"b_huge.py holds {code_kb + 16} KB of code, over the grader's limit of {code_kb} KB" in n
               for n in map(str, grade.notes)), grade.notes
    assert full_marks(grade)
    alone = Grader(settings(), CH01).grade(folder / "b_huge.py")
    assert alone.total == 0 and any("over the grader's limit" in n for n in map(str, alone.notes))


def test_reading_counts_against_the_submissions_wall_clock(tmp_path):
    submission = tmp_path / "honest.py"
    submission.write_text(honest_source())
    spent = settings(submission_seconds=0.000001)  # used up before anything is read
    grade = Grader(spent, CH01).grade(submission)
    assert grade.total == 0 and any("honest.py was not read: the submission had used up its time" in n
                                    for n in map(str, grade.notes)), grade.notes


def _peak_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))


def test_a_hoard_of_results_does_not_grow_the_trusted_process(tmp_path):
    honest, hoard = tmp_path / "honest.py", tmp_path / "hoard.py"
    honest.write_text(honest_source())
    hoard.write_text(honest_source() + "\n\n" + (HOSTILE / "result_hoard.py").read_text())
    cap = 100 << 20  # one 64 MB answer fits, the second does not
    chosen = settings(submission_result_bytes=cap, wall_seconds=60)  # time enough to send every answer
    grader = RemoteGrader(chosen, CH01)  # the trusted grading process, as batch workers and Gradescope run it
    try:
        assert full_marks(grader.grade(honest))
        before = _peak_mb(grader.pid)
        grade = grader.grade(hoard)
        grown = _peak_mb(grader.pid) - before
    finally:
        grader.close()
    # every shift_matrix answer is 64 MB (a dozen of them, in two phases): without the cap the process holds them
    # all (over 1 GB); with it, the one accepted answer and the file it was read from
    assert grown < 2.5 * (cap >> 20), f"the grading process grew by {grown:.0f} MB"
    assert scores(grade)["shift_matrix"][0] == 0
    assert any("result line(s) were not accepted" in n and "100 MB per submission" in n for n in map(str, grade.notes))
    others = {ex: s for ex, s in scores(grade).items() if ex != "shift_matrix"}
    assert all(got == top for got, top in others.values()), others
