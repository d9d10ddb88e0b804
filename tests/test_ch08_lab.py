"""Chapter 8's laboratory (posenc_selfcheck.gridlab): every scheme starts from the same weights outside the scheme,
the ceiling without positions against a brute-force count, the notebook's RUN switch, a scheme whose exercise is
unfinished skipped in one line, and the stored run that the book shows."""

import dataclasses
import json
import re

import pytest
import torch

import posenc_ref
from posenc_selfcheck import gridlab
from posenc_selfcheck.gridlab import data, experiments
from tests.conftest import ROOT

CHAPTER = ROOT / "course" / "08_positions_in_2d" / "chapter.py"
STORED = json.loads((ROOT / "docs" / "chapter8" / "results.json").read_text())
MICRO = dataclasses.replace(gridlab.REDUCED, name="micro", d_model=16, num_heads=2, train_grid=4, eval_grids=(3, 4),
                            batch_size=4, steps=3, warmup=1, eval_samples=4)


def _outside_the_scheme(model):
    return {k: v for k, v in model.state_dict().items() if not k.startswith("scheme.") and ".scheme." not in k}


def test_every_scheme_starts_from_the_same_weights_outside_the_scheme():
    """The learned table draws its initial values from the seeded generator; the encoder around it must not start
    from other weights because of that (the chapter says: the same initial weights for every scheme)."""
    lab = gridlab.GridLab(posenc_ref, MICRO)
    baseline = _outside_the_scheme(lab.new_model("no positions"))
    for name in gridlab.SCHEMES[1:]:
        model = lab.new_model(name)
        weights = _outside_the_scheme(model)
        assert weights.keys() == baseline.keys()
        for key, value in weights.items():
            assert torch.equal(value, baseline[key]), (name, key)
    assert lab.new_model("learned, resized").scheme.table.abs().sum() > 0  # the table did draw its own values


def _ceiling_by_counting(grid):
    """Brute force: one shared answer k for every patch that is not the marker (a model without positions cannot
    tell them apart), the marker's own patch always right; the best k, averaged over every marker position."""
    cells = [(r, c) for r in range(grid) for c in range(grid)]

    def label(marker, patch):
        sign = lambda x: (x > 0) - (x < 0)  # noqa: E731
        return 3 * (sign(marker[0] - patch[0]) + 1) + (sign(marker[1] - patch[1]) + 1)

    best = 0.0
    for k in range(data.CLASSES):
        right = sum(1 + sum(label(m, p) == k for p in cells if p != m) for m in cells)
        best = max(best, right / len(cells) ** 2)
    return best


@pytest.mark.parametrize("grid", [2, 3, 4, 6, 8])
def test_the_ceiling_without_positions_is_the_best_shared_answer_plus_the_marker_patch(grid):
    ceiling = data.no_position_ceiling(grid)
    assert ceiling == pytest.approx(_ceiling_by_counting(grid), abs=1e-12)
    if grid >= 4:  # the majority class is a corner class, never "level, level": the marker's patch adds 1/G^2
        assert ceiling == pytest.approx(data.majority_accuracy(grid) + 1 / grid ** 2, abs=1e-12)
    assert ceiling > data.majority_accuracy(grid)


def test_the_stored_run_records_the_ceiling_and_the_model_without_positions_reaches_about_it():
    out = STORED["resolution"]
    assert out["no_position_ceiling"] == [round(data.no_position_ceiling(g), 4) for g in out["grids"]]
    # within the sampling noise of 512 grids, far above the majority class at the small grids
    for acc, ceiling in zip(out["accuracy"]["no positions"], out["no_position_ceiling"]):
        assert abs(acc - ceiling) < 0.02


# ---- the notebook ------------------------------------------------------------------------------------------
def test_the_notebook_chooses_the_run_visibly_and_calls_the_steps_in_order(monkeypatch):
    source = CHAPTER.read_text()
    assert 'RUN = "full"\nexperiment = gridlab.GridLab(impl, gridlab.config_from_env(default=RUN))' in source
    assert 'RUN = "reduced"' in source
    assert "impl = gridlab.load_exercises(notebook=globals())" in source  # the notebook's own exercises
    assert re.findall(r"^experiment\.(\w+)\(\)$", source, flags=re.M) == list(gridlab.GridLab.STEPS)
    monkeypatch.delenv(gridlab.ENV, raising=False)
    assert gridlab.config_from_env() is gridlab.FULL
    assert gridlab.config_from_env(default="reduced") is gridlab.REDUCED
    monkeypatch.setenv(gridlab.ENV, "reduced")
    assert gridlab.config_from_env(default="full") is gridlab.REDUCED  # the environment (CI) wins
    monkeypatch.setenv(gridlab.ENV, "stored")
    assert gridlab.config_from_env() is gridlab.STORED
    monkeypatch.setenv(gridlab.ENV, "huge")
    with pytest.raises(ValueError, match="POSENC_CH8_RUN='huge'"):
        gridlab.config_from_env()


def _unfinished(*args, **kwargs):
    raise NotImplementedError("exercise not finished: replace this line with your code")


def test_unfinished_exercises_skip_their_schemes_in_one_line_and_train_nothing_alone(capsys):
    """An untouched notebook: every chapter 8 exercise still raises the stub's NotImplementedError. Nothing is
    trained (the baseline alone compares nothing), in one line; then the next step says so in one line."""
    impl = gridlab.load_exercises(notebook={"resize_position_table_2d": _unfinished, "sincos_2d_table": _unfinished,
                                            "axial_rope_cos_sin": _unfinished}, quiet=True)
    # chapter 4's apply_rope from the reference (by name: another test in this process may have re-imported it)
    assert str(impl.sources["sincos_2d_table"]) == "this notebook"
    rope = impl.apply_rope
    assert (rope.__module__, rope.__qualname__) == (posenc_ref.apply_rope.__module__, "apply_rope")
    lab = gridlab.GridLab(impl, MICRO)
    capsys.readouterr()
    assert lab.train_schemes() is None and lab.models == {}
    assert capsys.readouterr().out == "train_schemes: skipped until _unfinished is finished.\n"
    assert lab.resolution() is None
    assert capsys.readouterr().out == "no trained models yet: run train_schemes() first\n"


def test_a_finished_exercise_trains_its_scheme_and_the_others_say_what_they_wait_for(capsys):
    def resize_position_table_2d(*args, **kwargs):
        return posenc_ref.resize_position_table_2d(*args, **kwargs)

    impl = gridlab.load_exercises(notebook={"resize_position_table_2d": resize_position_table_2d,
                                            "sincos_2d_table": _unfinished, "axial_rope_cos_sin": _unfinished},
                                  quiet=True)
    lab = gridlab.GridLab(impl, MICRO)
    capsys.readouterr()
    lab.train_schemes()
    printed = [line for line in capsys.readouterr().out.replace("\r", "\n").splitlines() if "skipped" in line]
    assert printed == ["2-D sinusoidal: skipped until _unfinished is finished.",
                       "axial RoPE: skipped until _unfinished is finished."]
    assert set(lab.models) == {"no positions", "learned, resized"}


# ---- the stored run (the book) -----------------------------------------------------------------------------
def test_the_stored_run_shows_the_full_runs_table_and_figure_without_training(monkeypatch, capsys):
    monkeypatch.setenv(gridlab.ENV, "stored")
    lab = gridlab.GridLab(None, gridlab.config_from_env(default="full"))
    lab.train_schemes()
    figure = lab.resolution()
    printed = capsys.readouterr().out
    assert lab.models == {} and "shown without training" in printed
    row = next(line for line in printed.splitlines() if line.startswith("learned, resized"))
    assert [float(v) for v in row.split()[2:]] == [round(a, 3) for a in
                                                   STORED["resolution"]["accuracy"]["learned, resized"]]
    drawn = {line.get_label(): list(line.get_ydata()) for line in figure.axes[0].get_lines()}
    assert drawn["axial RoPE"] == STORED["resolution"]["accuracy"]["axial RoPE"]


def test_a_micro_run_produces_the_structure_of_the_stored_full_run(tmp_path, capsys):
    results = experiments.GridLab(posenc_ref, MICRO).run(tmp_path, command="test")

    def shape(value):
        if isinstance(value, dict):
            return {key: shape(v) for key, v in value.items()}
        if isinstance(value, (int, float)):
            return "number"
        return "text" if isinstance(value, str) else type(value).__name__

    assert shape({**results, "config": None, "resolution": None}) == shape({**STORED, "config": None,
                                                                           "resolution": None})
    assert results["resolution"].keys() == STORED["resolution"].keys()
    assert STORED["config"] == json.loads(json.dumps(dataclasses.asdict(gridlab.FULL)))
    assert STORED["command"] == "python -m posenc_selfcheck.gridlab --out docs/chapter8"
