"""The build is a list of named steps computed in memory (grader/build.py): it never reads what it wrote before,
one build after an edit writes everything, a second writes nothing, and an inserted cell changes only its own
lines in the generated files.

Each test builds in a copy of the repository (`python -m grader build` run there, as an author runs it) and
compares with this checkout's generated files, which tests/test_build_sync.py proves are a normal build's.
"""

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from grader import build
from grader.files import cells_fingerprint
from tests.conftest import ROOT

# every generated file (grader/checks/ids.lock.json is the ledger of released check keys: a source too, kept)
GENERATED = ("notebooks/*.ipynb", "notebooks/zh/*.ipynb", "solutions/*.ipynb", "solutions/zh/*.ipynb",
             "posenc_ref/ch[0-9][0-9]_*.py", "posenc_ref/__init__.py", "posenc_selfcheck/data/*",
             "posenc_selfcheck/probes_ch[0-9][0-9].py", "posenc_selfcheck/properties_ch[0-9][0-9].py",
             "posenc_selfcheck/chapter_probes.py", "posenc_selfcheck/chapter_properties.py", "grader/data/*")
CONVENTIONS = "docs/conventions.md"
TABLE = re.compile(r"(<!-- BEGIN GENERATED (ch\d\d):[^\n]*-->\n).*?(<!-- END GENERATED \2 -->)", re.S)
CHAPTER = "01_sinusoidal"


def _copy(dst):
    """The checkout's files (tracked, and new ones git does not ignore) copied to `dst`."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dst / name)
    return dst


def _run(repo, *args):
    """`python -m grader *args` in `repo`, importing the grader from there."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)


def _generated(repo):
    return sorted(p.relative_to(repo) for pattern in GENERATED for p in repo.glob(pattern) if p.is_file())


def _digests(repo):
    return {p.relative_to(repo): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(repo.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _same_as_checkout(repo):
    """The generated files in `repo` are this checkout's: texts equal, self-check tensors to float32 rounding."""
    assert _generated(repo) == _generated(ROOT)
    for rel in _generated(ROOT):
        if rel.suffix == ".safetensors":
            continue  # compared with its .json
        if rel.parts[:2] == ("posenc_selfcheck", "data") and rel.stem.startswith("ch"):
            from posenc_selfcheck import store

            assert build._same_data(repo / rel.with_suffix(""), store.load(str(ROOT / rel.with_suffix("")))), rel
        else:
            assert (repo / rel).read_text() == (ROOT / rel).read_text(), rel
    assert (repo / CONVENTIONS).read_text() == (ROOT / CONVENTIONS).read_text()


# the build in a copy, stopped after the steps that compute (it says so on stdout and waits for a line on stdin),
# then the write step on what they made: one build, the disk seen in between
STOPPED_BUILD = """
import sys
from grader import build
made = build.run(until="catalogs")
print("computed", flush=True)
sys.stdin.readline()
write = build.STEPS[-1]
write.run(*(made[name] for name in write.needs))
"""


def _corrupt(repo, rel):
    """A generated file with wrong content the build may still replace (a notebook keeps a matching fingerprint:
    otherwise it holds someone's edits, which the build never overwrites)."""
    path = repo / rel
    if path.suffix == ".ipynb":
        cells = [{"cell_type": "markdown", "id": "corrupt", "metadata": {}, "source": "corrupted by the test"}]
        nb = {"cells": cells, "metadata": {"posenc": {"cells_sha256": cells_fingerprint(cells)}},
              "nbformat": 4, "nbformat_minor": 5}
        path.write_text(json.dumps(nb))
    elif path.suffix == ".safetensors":
        path.write_bytes(b"corrupted by the test")
    else:
        path.write_text("corrupted by the test: raise SystemExit('read an earlier output')\n")


def _damage_tables(repo):
    """docs/conventions.md: prose by hand, tables generated; only the tables are damaged."""
    doc = repo / CONVENTIONS
    doc.write_text(TABLE.sub(lambda m: m.group(1) + "corrupted by the test\n" + m.group(3), doc.read_text()))


def test_the_steps_run_in_one_declared_order_in_memory_and_never_read_earlier_outputs(tmp_path):
    """Every step but write computes in memory (nothing on disk changes until write); and in a copy where every other
    generated file is deleted and the rest corrupted (a notebook corrupted with a matching fingerprint, which the
    build may replace), the build writes this checkout's generated files: no step needed or read an earlier
    output."""
    names = [step.name for step in build.STEPS]
    assert names == ["validate", "render", "ids", "hints", "probes", "selfcheck", "hidden", "conventions", "catalogs",
                     "write"]
    for n, step in enumerate(build.STEPS):
        assert set(step.needs) <= {"check", *names[:n]}, step.name
    repo = _copy(tmp_path / "repo")
    kinds = {}
    for rel in _generated(repo):
        kinds.setdefault(rel.suffix, []).append(rel)
    assert set(kinds) == {".ipynb", ".py", ".json", ".safetensors"}
    for rels in kinds.values():  # of each kind, every other file deleted, the others corrupted
        for rel in rels[0::2]:
            (repo / rel).unlink()
        for rel in rels[1::2]:
            _corrupt(repo, rel)
    _damage_tables(repo)
    before = _digests(repo)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with subprocess.Popen([sys.executable, "-c", STOPPED_BUILD], cwd=repo, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
        try:
            said = run.stdout.readline()
            assert said == "computed\n", said + run.stderr.read()[-3000:]
            assert _digests(repo) == before  # every step but write: in memory
            out, err = run.communicate("\n", timeout=900)
        finally:
            run.kill()
    assert run.returncode == 0, err[-3000:]
    _same_as_checkout(repo)


def _add_check(repo):
    """A new public check of chapter 1, as an author adds one: its declaration, and its words' translations in the
    catalog (a check's words are read in the context of its key: the name and hint it reuses get their entries)."""
    from babel.messages.pofile import read_po

    path = repo / "course" / "01_sinusoidal" / "exercises.py"
    path.write_text(path.read_text() + (
        "\n\nimport dataclasses  # noqa: E402\n"
        "CHECKS.append(dataclasses.replace(find(CHECKS, 'sinusoidal_table', 'matches_reference_seq_len_16_d_model_8'),"
        " id='added_by_the_build_test', params=table(12, 6)))\n"))
    catalog = repo / "course" / "01_sinusoidal" / "zh_CN.po"  # a declaration's words: its chapter's catalog
    with catalog.open("rb") as f:
        known = read_po(f)
    old, new = "sinusoidal_table.matches_reference_seq_len_16_d_model_8", "sinusoidal_table.added_by_the_build_test"
    entries = [m for m in known if m.context == old]
    assert entries, "the reused check's words are not in chapter 1's catalog"
    with catalog.open("a", encoding="utf-8") as f:
        for m in entries:
            f.write(f"\nmsgctxt {json.dumps(new, ensure_ascii=False)}\nmsgid {json.dumps(m.id, ensure_ascii=False)}\n"
                    f"msgstr {json.dumps(m.string, ensure_ascii=False)}\n")


def test_one_build_after_adding_a_check_writes_everything_and_a_second_changes_nothing(tmp_path):
    repo = _copy(tmp_path / "repo")
    _add_check(repo)
    first = _run(repo, "build")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    written = first.stdout.splitlines()
    assert "wrote: grader/checks/ids.lock.json" in written and "wrote: posenc_selfcheck/data/ch01.json" in written
    assert "sinusoidal_table.added_by_the_build_test" in json.loads((repo / "grader/checks/ids.lock.json").read_text())
    check = _run(repo, "build", "--check")
    assert check.returncode == 0, check.stdout[-3000:]
    before = _digests(repo)
    second = _run(repo, "build")
    assert second.returncode == 0 and second.stdout == "", second.stdout[-3000:]
    assert _digests(repo) == before


INSERTED_MD = "# %% [markdown]\n# A paragraph the test inserts, about $PE[p]$.\n\n"
INSERTED_CODE = "# %%\ninserted_by_the_test = 1\n\n"


def _changes(old, new):
    """(lines removed, lines added) between two texts, as `git diff --stat` counts them."""
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))
    return ([d for d in diff if d.startswith("-") and not d.startswith("---")],
            [d for d in diff if d.startswith("+") and not d.startswith("+++")])


def _translate_new(catalog_path, english, chinese):
    text = catalog_path.read_text()
    entry = f'msgid "{english}"\nmsgstr ""\n'
    assert entry in text, "i18n --update did not add the new paragraph"
    catalog_path.write_text(text.replace(entry, f'msgid "{english}"\nmsgstr "{chinese}"\n'))


def test_an_inserted_cell_changes_only_its_own_lines(tmp_path):
    repo = _copy(tmp_path / "repo")
    source = repo / "course" / CHAPTER / "chapter.py"
    text = source.read_text()
    at = [m.start() for m in re.finditer(r"^# %% \[markdown\]$", text, re.M)][3]  # inside the chapter
    source.write_text(text[:at] + INSERTED_MD + INSERTED_CODE + text[at:])
    catalog = repo / "course" / CHAPTER / "zh_CN.po"
    old = {rel: (repo / rel).read_text() for rel in
           [f"notebooks/{CHAPTER}.ipynb", f"solutions/{CHAPTER}.ipynb", f"notebooks/zh/{CHAPTER}.ipynb",
            f"solutions/zh/{CHAPTER}.ipynb", catalog.relative_to(repo)]}
    assert _run(repo, "i18n", "--update").returncode == 1  # the new paragraph is untranslated
    _translate_new(catalog, "A paragraph the test inserts, about $PE[p]$.", "测试插入的一段，关于 $PE[p]$。")
    run = _run(repo, "build")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for rel, before in old.items():
        after = (repo / rel).read_text()
        removed, added = _changes(before, after)
        if rel == catalog.relative_to(repo):  # the new message: its reference, msgid, msgstr and a blank line
            assert removed == [] and len(added) == 4, (removed, added)
            assert added[0].startswith("+#: course/01_sinusoidal/chapter.py#md-"), added
            continue
        nb_before, nb_after = json.loads(before), json.loads(after)
        new_cells = [c for c in nb_after["cells"] if c not in nb_before["cells"]]
        assert [c["cell_type"] for c in new_cells] == ["markdown", "code"], rel
        assert [c for c in nb_after["cells"] if c not in new_cells] == nb_before["cells"], rel
        cell_lines = sum(len(json.dumps(c, indent=1, ensure_ascii=False).splitlines()) for c in new_cells)
        # the two cells' lines, and the fingerprint of the cells in the metadata (one line out, one in)
        assert len(removed) == 1 and '"cells_sha256"' in removed[0], (rel, removed)
        assert len(added) == cell_lines + 1, (rel, len(added), cell_lines)


def _cells(*specs):
    import nbformat

    return [nbformat.v4.new_markdown_cell(src, metadata=meta) if kind == "md" else
            nbformat.v4.new_code_cell(src, metadata=meta) for kind, src, meta in specs]


def test_a_cell_id_is_its_name_or_its_source_never_its_position():
    from grader.render import cell_ids

    cells = _cells(("md", "# Title", {}), ("py", "x = 1", {}), ("py", "x = 1", {}), ("py", "y = 2", {"name": "setup"}))
    ids = cell_ids(cells, "t")
    digest = hashlib.sha256(json.dumps(["code", "x = 1"]).encode()).hexdigest()[:8]
    assert ids[1:] == [f"py-{digest}", f"py-{digest}-2", "setup"] and ids[0].startswith("md-")
    assert cell_ids(_cells(("md", "new", {})) + cells, "t")[1:] == ids  # inserted first: the others keep theirs
    with pytest.raises(ValueError, match="not a notebook cell id"):
        cell_ids(_cells(("py", "z", {"name": "has space"})), "t")
    with pytest.raises(ValueError, match="named twice"):
        cell_ids(_cells(("py", "a", {"name": "n"}), ("py", "b", {"name": "n"})), "t")
