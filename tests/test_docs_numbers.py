"""Docs that cannot go stale (issue 28): every count, id list and table in README.md and docs/ that the code knows
is compared here with the code's own value. Timings are measurements and stay as measured; what they measured
(how many tests a bundle has, which bundles exist, the container to choose) is checked."""

from __future__ import annotations

import json
import re

import pytest

from grader.assignment import get, load_course
from grader.checks import mistakes
from grader.settings import GRADESCOPE_CONTAINER_MB
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
INSTRUCTOR = (ROOT / "docs" / "instructor.md").read_text()
CHAPTERS = [name for name in load_course() if re.fullmatch(r"ch\d\d", name)]


def gradescope_tests(assignment):
    """How many tests a bundle's results.json lists without a GPU: every check worth points, CUDA ones aside
    (grader.report.gradescope_json)."""
    return sum(1 for c in assignment.checks if not c.cuda and c.points > 0)


@pytest.mark.parametrize("name, text", [("README.md", README), ("docs/instructor.md", INSTRUCTOR)])
def test_the_listed_assignment_ids_run_from_the_first_chapter_to_the_last(name, text):
    listed = re.findall(r"`(ch\d\d)`\s+(?:\.\.\.|…)\s+`(ch\d\d)`", text)
    assert listed, f"{name} lists no `ch00` ... `chNN`"
    for first, last in listed:
        assert (first, last) == (CHAPTERS[0], CHAPTERS[-1]), name


def test_the_lms_column_example_is_chapter_1s_maximum():
    (shown,) = re.findall(r'"ch01 \((\d+)\)"', INSTRUCTOR)
    assert float(shown) == get("ch01").max_points()


def _memory_table():
    """{bundle: {column: cell}} from docs/instructor.md's container table."""
    lines = INSTRUCTOR[INSTRUCTOR.index("| bundle | tests |"):].splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].split(" (")[0]] = dict(zip(header, cells))
    return rows


def test_the_memory_table_has_every_bundle_with_its_tests_and_the_container_the_grader_recommends():
    rows = _memory_table()
    course = load_course()
    assert set(rows) == set(course) | {"the whole course"}
    every = sum(gradescope_tests(course[name]) for name in CHAPTERS)
    for name, row in rows.items():
        tests = every if name == "the whole course" else gradescope_tests(course[name])
        assert int(row["tests"]) == tests, name
        # every chapter and the whole course have a preset (`gradescope` prints it); course.json's own
        # assignments (week1) have the measurement only
        container = GRADESCOPE_CONTAINER_MB.get("course" if name == "the whole course" else name)
        assert container or name not in CHAPTERS, f"{name}: no container in GRADESCOPE_CONTAINER_MB"
        if container:
            assert row["container to choose"] == f"{container / 1024:g} GB", name


def test_the_number_of_named_mistakes():
    (shown,) = re.findall(r"each of the (\d+) named mistakes", README)
    assert int(shown) == len(mistakes())


def test_the_number_of_hostile_submissions():
    from tests.test_hostile import CASES

    (shown,) = re.findall(r"grades (\d+) hostile submissions", INSTRUCTOR)
    assert int(shown) == len(CASES)


def test_the_set_up_time_is_the_stored_measurement():
    stored = json.loads((ROOT / "benchmarks" / "setup_time.json").read_text())
    (shown,) = re.findall(r"A fresh set-up took (\d+) s", README)
    assert int(shown) == stored["seconds"]
    said = README[README.index("A fresh set-up took"):][:900]
    # and what it depends on, as measured
    assert stored["python"].split()[-1] in said and f"{stored['pip_cache_mb']} MB" in said
    assert f"load average of {stored['load_average']:g}" in said
    assert f"{stored['cores']} cores" in said.replace("two", "2")
    assert f"installed with {stored['installer']}" in said and f"uv's cache holding {stored['uv_cache_mb']} MB" in said


def test_the_readme_states_how_many_tests_the_suite_has(request):
    """The suite's size README.md gives ("its 2,414 tests") is the number this session collected, when it collected
    the whole suite (`bash scripts/test.sh` with no path: tests/ and solutions/, nothing deselected)."""
    from pathlib import Path

    config = request.config
    given = sorted(Path(config.invocation_params.dir, a.split("::")[0]).resolve() for a in config.args)
    narrowed = config.getoption("keyword") or config.getoption("markexpr") or config.getoption("deselect")
    if given != [ROOT / "solutions", ROOT / "tests"] or narrowed:
        pytest.skip("the suite's size is compared when the whole suite runs (bash scripts/test.sh)")
    (stated,) = re.findall(r"its ([\d,]+) tests", README)
    assert int(stated.replace(",", "")) == len(request.session.items)


def test_authoring_counts_the_mistakes_written_by_hand_and_the_derived_ones():
    """docs/authoring.md: "56 of the 193 are written so …, the other 137 are derived"."""
    from grader import course

    text = " ".join((ROOT / "docs" / "authoring.md").read_text().split())
    (hand, total, derived), = re.findall(r"used: (\d+) of the (\d+) are written so .*?, the other (\d+) are derived",
                                         text)
    by_hand = sum(len(course.load(c, "mistakes").IMPLEMENTATIONS) for c in course.chapters() if c.has("mistakes"))
    assert (int(hand), int(total), int(derived)) == (by_hand, len(mistakes()), len(mistakes()) - by_hand)


def test_the_memory_tables_lanes_row_states_the_settings_defaults():
    from grader.settings import GRADESCOPE_LANES, LANES_AUTO, Limits

    (row,) = [line for line in INSTRUCTOR.splitlines() if line.startswith("| `--lanes`")]
    assert re.search(rf"Gradescope: {GRADESCOPE_LANES}\b", row)
    said = re.findall(r"at most (\d+)", row) + re.findall(r"`--lanes` \(children[^)]*?at most (\d+)", INSTRUCTOR)
    assert len(said) == 2 and {int(n) for n in said} == {LANES_AUTO}  # the Memory table, the batch options
    (results,) = re.findall(r"and its (\d+) MB of results", INSTRUCTOR)
    assert int(results) << 20 == Limits().submission_result_bytes
