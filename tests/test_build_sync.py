"""One source per chapter: generated files are in sync and no solution reaches the student notebooks."""

import json
import re

import jupytext
import pytest

from grader import build, course, leaks, render
from grader.files import notebook_text
from tests.conftest import ROOT

CHAPTERS = course.chapters()


def test_generated_files_are_in_sync_with_the_chapter_sources():
    differ = build.build(check=True)
    assert differ == [], f"run `python -m grader build`; out of date: {[str(p) for p in differ]}"


def test_every_chapter_has_a_student_and_a_solution_notebook_and_a_reference_module():
    assert CHAPTERS, "no chapter sources found"
    for chapter in CHAPTERS:
        assert (ROOT / "notebooks" / f"{chapter.stem}.ipynb").exists()
        assert (ROOT / "solutions" / f"{chapter.stem}.ipynb").exists()
        assert (ROOT / "posenc_ref" / f"{build.reference_module_name(chapter.path('source'))}.py").exists()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.stem)
def test_no_solution_code_reaches_any_student_notebook(chapter):
    """Neither in its own chapter's notebook nor in another chapter's (code or Markdown)."""
    regions = leaks.solution_regions([chapter.path("source")])
    assert regions and any(lines for _, lines in regions), f"{chapter.stem} has no distinctive solution lines"
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = notebook_text(notebook)
        assert leaks.leaked_lines(text, regions) == [], f"{chapter.stem}'s solution appears in {notebook.name}"
        assert not leaks.has_markers(text)


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_committed_notebooks_carry_no_outputs(folder):
    for path in sorted((ROOT / folder).glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, path.name
        assert "BEGIN SOLUTION" not in path.read_text()


def test_generated_files_point_back_to_their_source_cells():
    """Each reference module and each notebook names its chapter's source; each exported part, its cell there."""
    for path in sorted((ROOT / "posenc_ref").glob("ch[0-9][0-9]_*.py")):
        text = path.read_text()
        source = re.match(r'"""Generated from (course/\d\d_\w+/chapter\.py) ', text).group(1)
        cells = render.cell_ids(jupytext.read(ROOT / source).cells, source)
        parts = re.findall(r"^# from (.+)#(.+)$", text, flags=re.M)
        assert parts and all(where == source and cell in cells for where, cell in parts), path.name
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb")):
        source = json.loads(path.read_text())["metadata"][render.MARK]["generated_from"]
        assert source == f"course/{path.stem}/chapter.py" and (ROOT / source).is_file(), path


def test_student_stubs_raise_not_implemented_with_the_hint_kept():
    src = ROOT / "course" / "01_sinusoidal" / "chapter.py"
    student, solution, module = render.render(src)
    student, solution = ("\n".join("".join(c["source"]) for c in json.loads(nb)["cells"]) for nb in (student, solution))
    assert render.STUB in student and render.STUB not in solution and render.STUB not in module
    assert "# Hint: the idea: one angle p·w_i per position p" in student and "#       Shapes: w (d/2,)" in student
    assert re.search(r"def sinusoidal_table\(seq_len, d_model, base=10000.0, device=None\)", module)


def test_region_rewriting_rejects_unbalanced_markers():
    with pytest.raises(ValueError, match="without END"):
        render._regions("x = 1\n### BEGIN SOLUTION\ny = 2", student=True)
    with pytest.raises(ValueError, match="without BEGIN"):
        render._regions("### END SOLUTION", student=True)
