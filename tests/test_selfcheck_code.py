"""A chapter's public probes and properties live in its folder (course/NN_name/probes.py, properties.py) and the build
ships them into the self-check package (grader/selfcheck_code.py): as they are, below one header line naming their
source, listed for probes.py and properties.py. The package then works without course/, as the student release
ships it. tests/test_build_sync.py proves the shipped files are in sync; tests/test_build_steps.py that the build
never reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from grader import course, selfcheck_code
from tests.conftest import ROOT


def test_each_shipped_module_is_its_chapters_file_below_one_header_line():
    planned = selfcheck_code.planned()
    shipped = 0
    for chapter in course.chapters():
        for part in selfcheck_code.PARTS:
            name = f"posenc_selfcheck.{selfcheck_code.shipped_name(chapter, part)}"
            if not chapter.has(part):
                assert name not in planned
                continue
            header, _, body = planned[name].partition("\n")
            source = f"course/{chapter.stem}/{part}.py"
            assert header == f"# Generated from {source} by `python -m grader build`: edit there."
            assert body == chapter.path(part).read_text(encoding="utf-8")
            shipped += 1
    assert shipped >= 10  # chapters 3-8's probes and 3, 4, 7, 8's properties
    assert not list((ROOT / "course").glob("*/probes_ch*.py"))  # sources keep their chapter-folder names


def test_a_new_chapter_folder_with_probes_is_shipped_and_listed(tmp_path):
    """Any chapter folder counts (a chapter 9 added beside the others): its probes are shipped and listed."""
    for stem in ("04_rope", "09_new"):
        (tmp_path / stem).mkdir()
    (tmp_path / "04_rope" / "probes.py").write_text("PROBES = {}\n")
    (tmp_path / "09_new" / "probes.py").write_text("PROBES = {}\n")
    (tmp_path / "09_new" / "properties.py").write_text("PROPERTIES = {}\n")
    planned = selfcheck_code.planned(course.chapters(tmp_path))
    assert set(planned) == {f"posenc_selfcheck.{n}" for n in ("probes_ch04", "probes_ch09", "properties_ch09",
                                                                "chapter_probes", "chapter_properties")}
    listing = planned["posenc_selfcheck.chapter_probes"]
    assert "    import probes_ch09\n" in listing and "MODULES = (\n    probes_ch04,\n    probes_ch09,\n)" in listing
    assert "MODULES = (\n    properties_ch09,\n)" in planned["posenc_selfcheck.chapter_properties"]
    empty = selfcheck_code.planned([])["posenc_selfcheck.chapter_probes"]
    namespace = {}
    exec(compile(empty, "chapter_probes.py", "exec"), namespace)  # noqa: S102 (our own text)
    assert namespace["MODULES"] == ()


def test_the_self_check_package_works_without_course(tmp_path):
    """The package alone (as the student release ships it): every chapter's probes and properties are there."""
    shutil.copytree(ROOT / "posenc_selfcheck", tmp_path / "posenc_selfcheck",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = ("import posenc_selfcheck.probes as p, posenc_selfcheck.properties as q; "
              "print(p.__file__, len(p.CHAPTER_MODULES), 'relative_property' in p.CATALOG, "
              "hasattr(q.CHAPTER_MODULES[1], 'judge_verdicts'))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=env)  # the folder it runs in first on sys.path: the copy, not this checkout
    assert run.returncode == 0, run.stderr[-2000:]
    where, *said = run.stdout.split()
    assert where == str(tmp_path / "posenc_selfcheck" / "probes.py")
    chapters_with_probes = sum(c.has("probes") for c in course.chapters())
    assert said == [str(chapters_with_probes + 1), "True", "True"]  # probes_meta and the chapters'
