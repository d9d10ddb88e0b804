"""In-notebook self-checks: stored answers from the reference, specific feedback, no reference needed."""

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

import posenc_ref
import posenc_selfcheck
from grader.checks import exercises
from grader.mistakes import MISTAKES
from posenc_selfcheck import SelfCheckFailed, check
from tests.conftest import ROOT


@pytest.mark.parametrize("exercise", ["sinusoidal_table", "shift_matrix", "SinusoidalPositionalEncoding"])
def test_the_reference_passes_its_own_self_checks(exercise, capsys):
    check(exercise, getattr(posenc_ref, exercise))
    assert "checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("mistake,words", [
    ("table_swapped", "sin and cos are swapped"),
    ("table_i_over_d", "exponent is i/d"),
    ("table_concatenated", "concatenated"),
    ("shift_backwards", "shifts by -k"),
    ("module_swapped", "the table inside the module: sin and cos are swapped"),
])
def test_a_known_mistake_is_named(mistake, words):
    m = MISTAKES[mistake]
    with pytest.raises(SelfCheckFailed, match=words):
        check(m.exercise, m.impl)


def test_an_unfinished_exercise_says_so_without_raising(capsys):
    def sinusoidal_table(seq_len, d_model, base=10000.0):
        raise NotImplementedError("exercise not finished")

    check("sinusoidal_table", sinusoidal_table)
    assert "not implemented yet" in capsys.readouterr().out


def test_an_unknown_exercise_is_a_clear_error():
    with pytest.raises(KeyError, match="no self-checks stored for 'nope'"):
        check("nope", lambda: None)


def test_self_checks_run_from_a_copy_without_the_reference(tmp_path):
    """The student bundle has posenc_selfcheck (code + stored answers) and no posenc_ref."""
    shutil.copytree(ROOT / "posenc_selfcheck", tmp_path / "posenc_selfcheck")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        try:
            import posenc_ref
            print("REFERENCE IMPORTABLE")
        except ImportError:
            pass
        import torch
        from posenc_selfcheck import check, SelfCheckFailed

        def sinusoidal_table(seq_len, d_model, base=10000.0):
            if d_model % 2 or d_model <= 0:
                raise ValueError(f"d_model={{d_model}} must be even")
            if seq_len <= 0:
                raise ValueError(f"seq_len={{seq_len}} must be positive")
            w = base ** (-torch.arange(0, d_model, 2) / d_model)
            a = torch.arange(seq_len)[:, None] * w
            return torch.stack([a.sin(), a.cos()], dim=-1).reshape(seq_len, d_model)

        check("sinusoidal_table", sinusoidal_table)
        try:
            check("sinusoidal_table", lambda s, d, base=10000.0: sinusoidal_table(s, d, base).flip(-1))
        except SelfCheckFailed as exc:
            print("FAILED AS EXPECTED:", str(exc).splitlines()[1])
    """)
    out = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "REFERENCE IMPORTABLE" not in out.stdout
    assert "sinusoidal_table: all" in out.stdout
    assert "FAILED AS EXPECTED:" in out.stdout


def test_stored_data_is_only_public_checks():
    from grader.checks import all_checks

    hidden = {c.key for c in all_checks() if not c.public}
    stored = set()
    for path in (ROOT / "posenc_selfcheck" / "data").glob("ch*.json"):
        data = posenc_selfcheck._chapter_data(path.stem)
        stored |= {i for ids in data["_index"].values() for i in ids}
    assert stored and not (stored & hidden)


# imported where IPython is (a kernel), posenc_selfcheck warms torch up with the collector off (its warm.py)
COLLECTOR = """
import gc, json, sys, types
sys.modules["IPython"] = types.ModuleType("IPython")  # what the package takes for a kernel
if sys.argv[1] == "off":
    gc.disable()
import posenc_selfcheck
print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


@pytest.mark.parametrize("collector", ["on", "off"])
def test_the_kernels_warm_up_leaves_the_collector_as_it_was_and_what_it_loaded_frozen(collector):
    """The learner's collector runs again after the warm-up as it did before (on, or off when they turned it off);
    what the setup cell loaded is frozen: torch's objects are never walked again."""
    run = subprocess.run([sys.executable, "-c", COLLECTOR, collector], cwd=ROOT / "notebooks", capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["enabled"] == (collector == "on")
    assert seen["frozen"] > 100_000, seen  # torch's modules, functions and classes


# a kernel's setup cell, then every exercise's self-check on the reference: which of them imported torch._dynamo
NO_DYNAMO = """
import contextlib, io, json, sys, types
sys.modules["IPython"] = types.ModuleType("IPython")  # what the package takes for a kernel
import posenc_selfcheck
warm_up = "torch._dynamo" in sys.modules
import posenc_ref
from grader.checks import exercises
with contextlib.redirect_stdout(io.StringIO()):
    verdicts = [posenc_selfcheck.check(exercise, getattr(posenc_ref, exercise)) for exercise in exercises()]
print(json.dumps({"warm_up": warm_up, "checks": "torch._dynamo" in sys.modules, "n": len(verdicts)}))
"""


def test_neither_the_kernels_warm_up_nor_any_self_check_imports_torch_dynamo():
    """torch._dynamo costs a kernel about a second: the meta device's warm-up defers it (dynamo_deferred.py) and no
    check steps a torch.optim optimizer (chapter 7's training check writes its AdamW step out)."""
    run = subprocess.run([sys.executable, "-c", NO_DYNAMO], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    assert seen["n"] == len(exercises())
    assert seen["warm_up"] is False and seen["checks"] is False, seen
