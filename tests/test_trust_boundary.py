"""The grader's trust boundary is its own edge: what a submission brings (files, names, bytes, answers,
messages) is hostile, nothing of one student reaches another, and the grader alone decides.

Each class of attack found against the grader has a test here; the attack files live in tests/hostile/.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import secrets
import subprocess
import sys
import time

import pytest

import posenc_ref
from grader.checks import all_checks, chapter_checks
from grader.escape import clean, csv_cell, markdown
from grader.grading import Grader
from grader.report import gradescope_json, text_report
from grader.submission import SubmissionError, read_submission
from tests.conftest import ROOT, settings
from tests.test_hostile import HOSTILE, honest_source

CH01 = chapter_checks("ch01")
CH04 = chapter_checks("ch04")
LIMITS = dict(wall_seconds=20, stmt_seconds=5)


def canary():
    value = secrets.token_hex(16)
    return value, hashlib.sha256(value.encode()).hexdigest()


# ---- nothing of one student reaches another ------------------------------------------------------------
def test_a_later_submission_cannot_find_an_earlier_ones_code_or_the_instructors_folders(tmp_path):
    theirs, theirs_digest = canary()
    mine, mine_digest = canary()
    folder, folder_digest = canary()
    out, out_digest = canary()
    submitted = tmp_path / f"CANARY:{folder}"
    protected = tmp_path / f"CANARY:{out}"
    submitted.mkdir()
    protected.mkdir()
    classmate = submitted / "classmate.py"
    classmate.write_text(honest_source() + f"\n\nSECRET_ANSWER = 'CANARY:{theirs}'\n")
    digests = {theirs_digest: "classmate", mine_digest: "mine", folder_digest: "submission-folder",
               out_digest: "output-folder"}
    attack = (HOSTILE / "memory_scan.py").read_text().replace("__DIGESTS__", repr(digests)[1:-1])
    scanner = submitted / "scanner.py"
    scanner.write_text(honest_source() + "\n\n" + attack.replace("__MINE__", mine))
    grader = Grader(settings(**LIMITS).replace(protect=(str(protected),)), CH01)
    first = grader.grade(classmate)  # the same grader process, as a batch worker grades one after another
    assert first.total == first.max_score
    found = [str(v.feedback) for v in grader.grade(scanner).verdicts if v.check.exercise == "shift_matrix"][0]
    assert "FOUND" in found and "mine" in found, found  # the scan works: it finds its own canary
    assert "classmate" not in found and "folder" not in found, found


# ---- a submission is untrusted data ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory):
    """A folder submission holding every kind of entry the file system allows, and one honest file."""
    folder = tmp_path_factory.mktemp("hostile") / "submission"
    folder.mkdir()
    (folder / "a_honest.py").write_text(honest_source())
    os.symlink(ROOT / "posenc_ref" / "ch04_rope.py", folder / "b_reference.py")
    classmate = folder.parent / "classmate.py"
    classmate.write_text("def rotate_half(x):\n    return x\n")
    os.symlink(classmate, folder / "c_classmate.py")
    os.symlink("/proc/self/mem", folder / "d_mem.py")
    os.symlink("/proc/kmsg", folder / "e_kmsg.ipynb")
    os.mkfifo(folder / "f_fifo.py")
    os.symlink(folder, folder / "g_loop")  # a link to a folder (and a loop)
    (folder / ("h" * 240 + ".py")).write_text("def rotate_half(x):\n    return x\n")
    (folder / "i_deep.ipynb").write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (folder / "j_literal.py").write_text("def rope_inv_freq(head_dim, base=10000.0):\n    return 1\n\nX = ["
                                         + "1, " * 1_400_000 + "]\n")
    return folder


def test_hostile_entries_are_refused_each_with_a_note_and_the_honest_file_is_graded(hostile_folder):
    start = time.monotonic()
    files = read_submission(hostile_folder)
    seconds = time.monotonic() - start
    notes = "\n".join(n for f in files for n in map(str, f.notes))
    for name in ("b_reference.py", "c_classmate.py", "d_mem.py", "e_kmsg.ipynb"):
        assert f"{name} is a symbolic link, not a regular file" in notes
    assert "f_fifo.py is a device, FIFO or socket" in notes
    assert "a name longer than 150 characters" in notes
    assert "i_deep.ipynb is not a readable notebook (RecursionError)" in notes
    # parsed in a child limited to 1 GB (grader/parse.py): the literal (4 MB of code, over ReadLimits.code_kb) is
    # refused there, never in the grader
    kb = (hostile_folder / "j_literal.py").stat().st_size / 1024
    assert f"j_literal.py holds {kb:.0f} KB of code, over the grader's limit" in notes
    defined = {name for f in files for name in f.defines}
    assert "sinusoidal_table" in defined and "rotate_half" not in defined and "rope_inv_freq" not in defined
    assert seconds < 60


def test_a_linked_reference_scores_nothing(hostile_folder):
    grade = Grader(settings(**LIMITS), [c for c in CH04 if c.exercise == "rope_inv_freq"] + list(CH01)).grade(
        hostile_folder)
    assert all(v.score == 0 for v in grade.verdicts if v.check.exercise == "rope_inv_freq")
    assert sum(v.score for v in grade.verdicts if v.check.exercise == "sinusoidal_table") > 0


@pytest.mark.parametrize("make,message", [
    (lambda p: os.symlink(ROOT / "posenc_ref" / "ch01_sinusoidal.py", p / "link.py") or p / "link.py",
     "is a symbolic link"),
    (lambda p: os.mkfifo(p / "fifo.py") or p / "fifo.py", "not a file"),
])
def test_a_submission_that_is_itself_a_link_or_a_device_is_refused(tmp_path, make, message):
    with pytest.raises(SubmissionError, match=message):
        read_submission(make(tmp_path))


# ---- the grader alone decides ------------------------------------------------------------------------------
def _attack(tmp_path, name, base=None):
    path = tmp_path / f"{name}.py"
    path.write_text((honest_source() if base is None else base) + "\n\n" + (HOSTILE / f"{name}.py").read_text())
    return path


def test_a_child_cannot_skip_checks(tmp_path):
    grade = Grader(settings(**LIMITS), CH01).grade(_attack(tmp_path, "forge_skipped"))
    assert grade.max_score == sum(c.points for c in CH01 if not c.cuda)  # nothing removed from the maximum
    forged = [v for v in grade.verdicts if not v.check.cuda]
    assert forged and all(v.status == "failed" and "only the grader skips" in str(v.feedback) for v in forged)


def test_answers_of_unforeseen_shapes_fail_their_checks_quickly(tmp_path):
    start = time.monotonic()
    grade = Grader(settings(**LIMITS), CH01).grade(_attack(tmp_path, "odd_shapes"))
    seconds = time.monotonic() - start
    shift = {tuple(v.check.params.get("args", [])): v for v in grade.verdicts
             if v.check.exercise == "shift_matrix" and not v.check.cuda}
    assert all(v.score == 0 for v in shift.values())
    assert "expected shape (24, 24), got (12000, 87)" in str(shift[(11, 24)].feedback)
    assert all(v.status == "failed" for args, v in shift.items() if args[0] in (5, -4, 9))
    assert seconds < 60


def _stubs(kind):
    """Every exercise of the course as a stub: raising ValueError, or returning its input."""
    lines = ["import torch", ""]
    for exercise in dict.fromkeys(c.exercise for c in all_checks()):
        if inspect.isclass(getattr(posenc_ref, exercise)):
            body = ("        raise ValueError('no')\n" if kind == "raise" else "        super().__init__()\n\n"
                    "    def forward(self, x, *args, **kwargs):\n        return x\n")
            lines.append(f"class {exercise}(torch.nn.Module):\n    def __init__(self, *args, **kwargs):\n{body}")
        else:
            body = "raise ValueError('no')" if kind == "raise" else "return args[0] if args else None"
            lines.append(f"def {exercise}(*args, **kwargs):\n    {body}\n")
    return "\n".join(lines)


@pytest.mark.parametrize("kind", ["raise", "return_input"])
def test_a_submission_that_implements_nothing_scores_nothing(tmp_path, kind):
    path = tmp_path / "stubs.py"
    path.write_text(_stubs(kind))
    grade = Grader(settings(**LIMITS)).grade(path)
    earned = [(v.check.key, v.score) for v in grade.verdicts if v.score > 0]
    assert earned == []


# ---- output is escaped; hidden material stays out of sight -----------------------------------------------------
def test_escape_codes_markup_and_formulas_are_shown_as_text(tmp_path):
    grade = Grader(settings(**LIMITS), CH01).grade(_attack(tmp_path, "escape_codes"))
    report = text_report(grade)
    assert "\x1b" not in report and "\\x1b[2J" in report
    payload = json.dumps(gradescope_json(grade))
    assert "\\u001b" not in payload
    assert "<img" not in markdown("<img src=x onerror=alert(1)> | [x](y)")
    assert "|" not in markdown("a | b").replace("\\|", "")
    assert csv_cell('=HYPERLINK("x")').startswith("'") and csv_cell("-1+1").startswith("'")
    assert clean("\u202eevil") == "\\u202eevil"  # a bidi override shown, not obeyed


def test_a_batch_escapes_names_and_feedback_in_every_output(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    _attack(folder, "escape_codes").rename(folder / "=cmd|' calc'!A0.py")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--no-progress",
                          "--wall-seconds", "20"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    for path in [out / "gradebook.csv", out / "summary.md", *sorted((out / "feedback").iterdir())]:
        text = path.read_text()
        assert "\x1b" not in text, path  # plain text: control characters shown, never interpreted
    summary = (out / "summary.md").read_text()
    assert "onerror" in summary and "<img" not in summary and "](http" not in summary  # Markdown: literal text
    rows = (out / "gradebook.csv").read_text().splitlines()
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows[1:] for cell in row.split(","))


def test_hidden_inputs_never_reach_feedback_that_is_visible_before_the_due_date(tmp_path):
    path = tmp_path / "records.py"
    path.write_text((HOSTILE / "records_inputs.py").read_text())
    grade = Grader(settings(**LIMITS), CH01).grade(path)
    payload = gradescope_json(grade)
    visible = "\n".join([payload["output"]] + [t["output"] for t in payload["tests"] if t["visibility"] == "visible"])
    # the hidden checks' inputs, and those drawn for this grade's main checks and twins (no --student: one fixed set)
    from grader import shipped, twins, unseen

    ident = unseen.identity(unseen.load_secret(os.environ["POSENC_GRADER_SECRET"]), "course", unseen.NO_STUDENT)
    hidden_inputs = {tuple(c.params["args"][:2])
                     for c in (unseen.resolve(c, ident, shipped.inputs()) if c.unseen else c
                               for c in twins.with_twins(CH01)[0])
                     if c.exercise == "sinusoidal_table" and not c.visible}
    public_inputs = {tuple(c.params["args"]) for c in CH01 if c.exercise == "sinusoidal_table" and c.public}
    assert all(f"INPUT<{a},{b}," in visible for a, b in public_inputs)  # what it saw is shown: the test can fail
    assert not [args for args in hidden_inputs if f"INPUT<{args[0]},{args[1]}," in visible]


def test_hidden_candidates_are_anonymous_in_the_sandbox(tmp_path):
    from grader.checks.ch04 import ACCEPT, REJECT

    path = tmp_path / "names.py"
    path.write_text((HOSTILE / "names_candidates.py").read_text())
    checks = [c for c in CH04 if c.exercise == "check_relative_property"]
    grade = Grader(settings(**LIMITS), checks).grade(path)
    assert grade.total == 0  # judging by names, docstrings and line numbers earns nothing
    said = " ".join(str(v.feedback) for v in grade.verdicts)
    assert "NAMES" in said  # what it saw is shown: nothing that names a candidate
    for name in [*ACCEPT, *REJECT, "rope_other_frequencies", "rope_layout_mix"]:
        assert name not in said



def test_chapter_8_candidates_are_anonymous_in_the_sandbox_too(tmp_path):
    from grader.checks.ch08 import ACCEPT, BAD, GOOD, PUBLIC_ACCEPT, PUBLIC_REJECT, REJECT

    path = tmp_path / "names.py"
    path.write_text((HOSTILE / "names_candidates_2d.py").read_text())
    checks = [c for c in chapter_checks("ch08") if c.exercise == "check_axial_property"]
    grade = Grader(settings(**LIMITS), checks).grade(path)
    assert grade.total == 0
    said = " ".join(str(v.feedback) for v in grade.verdicts)
    assert "NAMES" in said
    for name in [*ACCEPT, *REJECT, GOOD, BAD, *PUBLIC_ACCEPT, *PUBLIC_REJECT]:
        assert name not in said


# ---- a bounded, seeded fuzz: grade and batch never crash or hang ----------------------------------------------
FRAGMENTS = [
    "def sinusoidal_table(seq_len, d_model, base=10000.0):\n    return None\n",
    "import torch\nX = torch.zeros(3)\n",
    "raise SystemExit(3)\n", "def shift_matrix(k, d):\n    return 1/0\n", "class A(:\n", "%%bash\nls\n",
    "\x00\x1b[2J", "'" * 5000, "def f():\n" + "    " * 50 + "pass\n",
    # forged results: the child's probe runner replaced, fields left out, "skipped" claimed, wrong types
    "import sys\n_P = sys.modules.get('probes')\n_Q = _P and setattr(_P, 'run', lambda *a, **k: {'out': 1.0, "
    "'skipped': 'no', 'out:dtype': 'float64', 'ok': True, 'raised': 'ValueError', 'message': 'seq_len d_model'})\n",
    "import sys\n_P = sys.modules.get('probes')\n_Q = _P and setattr(_P, '_pack', lambda r, k, v: r)\n",
    # request inspection, and garbage written to every descriptor the child holds
    "import gc\n_R = [o for o in gc.get_objects() if isinstance(o, dict) and 'params' in o]\n",
    "import os\n_W = [os.write(fd, b'r0.json\\tAAAA\\n_progress\\tMA==\\n' * 9) for fd in range(3, 12) "
    "if os.path.exists(f'/proc/self/fd/{fd}')]\n",
]


def _random_name(rng):
    alphabet = "abcXYZ_-.~ =|é中\u202e\x1b"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) + rng.choice([".py", ".ipynb", ""])


def _random_notebook(rng):
    cells = []
    for _ in range(rng.randint(0, 6)):
        source = rng.choice(FRAGMENTS + [[rng.choice(FRAGMENTS)], 7, None, {"x": 1}])
        cells.append(rng.choice([{"cell_type": "code", "source": source, "metadata": {"tags": rng.choice(
            [[], ["demo"], "demo", None])}}, {"cell_type": "markdown", "source": source}, "cell", 3]))
    return json.dumps(rng.choice([{"cells": cells}, {"cells": {}}, [], {"nbformat": 4}, {"cells": cells * 50}]))


def _random_submission(rng, folder):
    folder.mkdir(parents=True)
    for _ in range(rng.randint(0, 5)):
        name = _random_name(rng).replace("/", "_")
        target = folder / name
        kind = rng.choice(["py", "ipynb", "link", "fifo", "dir", "bytes"])
        try:
            if kind == "py":
                target.with_suffix(".py").write_text("\n".join(rng.choice(FRAGMENTS) for _ in range(3)))
            elif kind == "ipynb":
                target.with_suffix(".ipynb").write_text(_random_notebook(rng))
            elif kind == "link":
                os.symlink(rng.choice(["/proc/self/mem", "/dev/zero", str(ROOT / "posenc_ref"), str(folder), "x"]),
                           target.with_suffix(".py"))
            elif kind == "fifo":
                os.mkfifo(target.with_suffix(".ipynb"))
            elif kind == "dir":
                (target / "inner").mkdir(parents=True)
                (target / "inner" / "nb.ipynb").write_text(_random_notebook(rng))
            else:
                target.with_suffix(".py").write_bytes(rng.randbytes(rng.randint(0, 3000)))
        except (OSError, ValueError):
            continue


def test_seeded_fuzz_never_crashes_or_hangs_grade_or_batch(tmp_path):
    import random

    rng = random.Random(20261130)
    folder = tmp_path / "class"
    folder.mkdir()
    for n in range(8):
        _random_submission(rng, folder / f"s{n}_{_random_name(rng).replace('/', '_')}")
    grader = Grader(settings(wall_seconds=10, stmt_seconds=2), CH01)
    for entry in sorted(folder.iterdir()):
        try:
            grade = grader.grade(entry)
        except SubmissionError:
            continue
        text_report(grade)
        json.dumps(gradescope_json(grade))
        # no fragment implements an exercise: whatever it forges, it earns nothing
        assert grade.total == 0, [(v.check.key, str(v.feedback)) for v in grade.verdicts if v.score]
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--no-progress",
                          "--wall-seconds", "10"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["students"]) == 8 and all(s["status"] == "graded" for s in manifest["students"].values())


def test_recognising_the_published_candidates_earns_nothing_on_the_hidden_checks(tmp_path, monkeypatch):
    path = tmp_path / "fingerprint.py"
    path.write_text((HOSTILE / "fingerprint_anchors.py").read_text())
    checks = [c for c in CH04 if c.exercise == "check_relative_property"]
    grade = Grader(settings(**LIMITS), checks).grade(path)
    assert grade.total == 0, [(v.check.key, v.status) for v in grade.verdicts if v.score]
    # without the twins (the whole hidden catalogue, in an order drawn for the student), the attack earns the public
    # checks, whose anchors are published: the test can fail; the hidden checks, whose anchors are hidden, still
    # earn nothing
    from grader import twins

    monkeypatch.setattr(twins, "twins_of", lambda check, checks: ())
    ungated = Grader(settings(**LIMITS), [c for c in checks if not c.main]).grade(path)
    assert any(v.score > 0 for v in ungated.verdicts if v.check.public)
    hidden = [v for v in ungated.verdicts if not v.check.visible and not v.check.main]
    assert hidden and all(v.score == 0 for v in hidden), [(v.check.key, v.status) for v in hidden if v.score]
