"""One source per chapter: generated files are in sync and no solution reaches the student notebooks."""

import json
import re

import pytest

from grader import build, leaks, render
from grader.files import notebook_text
from tests.conftest import ROOT

SOURCES = build.chapter_sources()


def test_generated_files_are_in_sync_with_the_chapter_sources():
    differ = build.build(check=True)
    assert differ == [], f"run `python -m grader build`; out of date: {[str(p) for p in differ]}"


def test_every_chapter_has_a_student_and_a_solution_notebook_and_a_reference_module():
    assert SOURCES, "no chapter sources found"
    for src in SOURCES:
        assert (ROOT / "notebooks" / f"{src.stem}.ipynb").exists()
        assert (ROOT / "solutions" / f"{src.stem}.ipynb").exists()
        assert (ROOT / "posenc_ref" / f"{build.reference_module_name(src)}.py").exists()


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_no_solution_code_reaches_any_student_notebook(src):
    """Neither in its own chapter's notebook nor in another chapter's (code or Markdown)."""
    regions = leaks.solution_regions([src])
    assert regions and any(lines for _, lines in regions), f"{src.name} has no distinctive solution lines"
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = notebook_text(notebook)
        assert leaks.leaked_lines(text, regions) == [], f"{src.name}'s solution appears in {notebook.name}"
        assert not leaks.has_markers(text)


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_committed_notebooks_carry_no_outputs(folder):
    for path in sorted((ROOT / folder).glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, path.name
        assert "BEGIN SOLUTION" not in path.read_text()


def test_reference_modules_say_they_are_generated():
    for path in sorted((ROOT / "posenc_ref").glob("ch[0-9][0-9]_*.py")):
        assert path.read_text().startswith('"""Generated from chapters/'), path.name


def test_student_stubs_raise_not_implemented_with_the_hint_kept():
    src = ROOT / "chapters" / "01_sinusoidal.py"
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
