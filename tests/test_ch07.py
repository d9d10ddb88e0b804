"""Chapter 7's laboratory: the scheme adapters against independent formulas, the export of exercises from one
chapter to the next, the analysis tools, and one code path for the full run, the reduced run and the notebook."""

import copy
import dataclasses
import json
import math
import re

import pytest
import torch
import torch.nn.functional as F

import posenc_ref
from posenc_selfcheck import lab, mine
from posenc_selfcheck.lab import analysis, experiments
from posenc_selfcheck.probes_ch07 import _adamw, make_scheme
from tests.conftest import ROOT

DOCS = ROOT / "docs" / "chapter7"
CHAPTER = ROOT / "course" / "07_train_short_test_long" / "chapter.py"


# ---- the adapters compute what the chapters define -------------------------------------------------
def test_alibi_and_rope_adapters_agree_with_the_probe_schemes_written_from_the_formulas():
    q_pos, k_pos = torch.arange(5, 8), torch.arange(8)  # decoding: 3 new tokens after 5 cached
    probe_alibi = make_scheme({"kind": "alibi"}, 32, 4)  # -2^(-8h/4) |j - i|
    assert torch.allclose(lab.ALiBi(posenc_ref, 4).bias(q_pos, k_pos), probe_alibi.bias(q_pos, k_pos))
    t = torch.randn(2, 4, 3, 8, generator=torch.Generator().manual_seed(0))
    rope, probe_rope = lab.RoPE(posenc_ref, 8), make_scheme({"kind": "rotary"}, 32, 4)
    assert torch.allclose(rope.rotate(t, q_pos), probe_rope.rotate(t, q_pos), atol=1e-6)
    rope.set_frequencies("linear", factor=4.0)
    probe_rope.inv_freq /= 4  # position interpolation: every frequency divided by the factor
    assert torch.allclose(rope.rotate(t, q_pos), probe_rope.rotate(t, q_pos), atol=1e-6)
    rope.set_frequencies("yarn", factor=4.0, original_max_position_embeddings=64)
    # a rotation keeps lengths; YaRN's cos and sin carry 0.1 ln s + 1, so every q and k grows by that much
    ratio = rope.rotate(t, q_pos).norm(dim=-1) / t.norm(dim=-1)
    assert torch.allclose(ratio, torch.full_like(ratio, 0.1 * math.log(4.0) + 1), atol=1e-5)


def test_sinusoidal_and_learned_adapters_add_the_tables_the_chapters_define():
    x = torch.zeros(1, 5, 16)
    added = lab.Sinusoidal(posenc_ref, 16).embed(x, torch.arange(100, 105))[0].double()  # grows its table
    w = 10000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    angles = torch.arange(100, 105, dtype=torch.float64)[:, None] * w
    assert torch.allclose(added[:, 0::2], angles.sin(), atol=1e-5)
    assert torch.allclose(added[:, 1::2], angles.cos(), atol=1e-5)
    learned = lab.LearnedAbsolute(posenc_ref, 16, max_len=32)
    learned.stretch(8)  # the first 8 rows, resized to each input's length
    stretched = learned.embed(torch.zeros(1, 16, 16), torch.arange(16))[0]
    rows = learned.pe.position_embeddings.weight[:8].detach()
    expected = F.interpolate(rows.T[None], size=16, mode="linear", align_corners=False)[0].T
    assert torch.allclose(stretched.detach(), expected, atol=1e-6)


# ---- the analysis tools ---------------------------------------------------------------------------
def _tiny_model(scheme="ALiBi"):
    config = dataclasses.replace(MICRO, name="micro")
    return experiments.Lab(posenc_ref.TinyDecoder, posenc_ref, config).new_model(scheme)


def test_recorded_attention_is_causal_sums_to_one_and_leaves_the_output_alone():
    model = _tiny_model()
    tokens = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        plain = model(tokens)[0]
        with analysis.recording_attention() as records:
            recorded = model(tokens)[0]
    assert torch.equal(plain, recorded)
    assert len(records) == MICRO.num_layers
    weights = records[0]  # (B, H, L, L)
    assert torch.allclose(weights.sum(-1), torch.ones(2, MICRO.num_heads, 12), atol=1e-6)
    assert weights.triu(1).abs().max() == 0
    # ALiBi's steepest head looks back less than its shallowest one
    distance = analysis.mean_distance(weights)
    assert distance[0] < distance[-1]


def test_the_position_probe_reads_a_linear_code_and_nothing_from_noise():
    gen = torch.Generator().manual_seed(0)
    positions = torch.arange(16, dtype=torch.float32)
    direction = torch.randn(8, generator=gen)
    coded = positions[None, :, None] * direction + 0.1 * torch.randn(40, 16, 8, generator=gen)  # (N, L, d)
    probe = analysis.position_probe(coded[:20], coded[20:])
    assert probe["r2"] > 0.99 and probe["mae"] < 0.5
    noise = analysis.position_probe(torch.randn(20, 16, 8, generator=gen), torch.randn(20, 16, 8, generator=gen))
    assert noise["r2"] < 0.1


# ---- chapters hand their exercises on --------------------------------------------------------------
CELLS = [
    ("In[1]", "import math\nimport statistics as stats\nimport torch\n"),
    ("In[2]", "HALF = 0.5\n\ndef geometric(m):\n    return [2.0 ** (-8.0 * (h + 1) / m) for h in range(m)]\n\n"
              "def slopes(n):\n    c = 2 ** math.floor(math.log2(n))\n"
              "    return torch.tensor(geometric(c) + geometric(2 * c)[0::2][:n - c])\n"),
    ("In[3]", "def alibi_bias(num_heads, q_len, k_len, device=None):\n"
              "    i = torch.arange(k_len - q_len, k_len, device=device)[:, None]\n"
              "    j = torch.arange(k_len, device=device)[None, :]\n"
              "    return (SIGN * slopes(num_heads).to(device)[:, None, None] * (j - i).abs() * (2 * HALF))[None]\n"),
    ("In[4]", "SIGN = -1.0\n"),
    ("In[5]", "def show():\n    raise RuntimeError('a demo: never exported, never run')\n\ntimings = show()\n"),
]


def _export(tmp_path, monkeypatch, cells, capsys=None):
    monkeypatch.setattr(mine, "_ran_cells", lambda: cells)
    namespace = {}
    for label, source in cells[:-1]:  # the demo cell fails in the notebook too; its name is not an exercise
        exec(compile(source, label, "exec"), namespace)
    (tmp_path / "03_relative.ipynb").write_text("{}")
    return mine.export_exercises("03_relative", namespace, folder=tmp_path)


def test_an_export_copies_the_exercise_with_what_it_uses_and_nothing_else(tmp_path, monkeypatch, capsys):
    verdicts = _export(tmp_path, monkeypatch, CELLS)
    assert str(verdicts["alibi_bias"]) == "passed"
    assert str(verdicts["t5_bucket"]) == "not defined in this notebook"
    written = (tmp_path / "posenc_mine" / "ch03.py").read_text()
    for needed in ("def alibi_bias", "def slopes", "def geometric", "SIGN = -1.0", "HALF = 0.5", "import math"):
        assert needed in written
    for left_out in ("timings", "statistics", "def show"):
        assert left_out not in written
    assert "✓ alibi_bias: passed" in capsys.readouterr().out
    impl = mine.load_exercises(["alibi_bias", "t5_bucket"], folder=tmp_path, fallback=False, quiet=True)
    assert impl.alibi_bias(4, 3, 5).shape == (1, 4, 3, 5)
    assert {k: str(v) for k, v in impl.sources.items()} == {"alibi_bias": "yours, posenc_mine/ch03.py"}
    assert str(impl.problems["t5_bucket"]) == ("chapter 3 (03_relative.ipynb): `t5_bucket` not in your package yet: "
                                          "finish it, then run the export cell at the end of the notebook")


def test_a_wrong_exercise_is_exported_but_not_used_and_the_message_names_it(tmp_path, monkeypatch):
    cells = [*CELLS[:3], ("In[4]", "SIGN = 1.0\n"), CELLS[4]]  # the bias rewards distance: wrong sign
    verdicts = _export(tmp_path, monkeypatch, cells)
    assert str(verdicts["alibi_bias"]).startswith("failed: ")
    impl = mine.load_exercises(["alibi_bias"], folder=tmp_path, fallback=False, quiet=True)
    assert not hasattr(impl, "alibi_bias")
    assert "`alibi_bias` yours does not pass its self-check (failed: " in str(impl.problems["alibi_bias"])
    # inside the course's repository the reference fills in, and the listing says why
    impl = mine.load_exercises(["alibi_bias"], folder=tmp_path, quiet=True)
    # (by name: another test may have re-imported the reference since this module imported it)
    assert (impl.alibi_bias.__module__, impl.alibi_bias.__name__) == ("posenc_ref.ch03_relative", "alibi_bias")
    assert str(impl.sources["alibi_bias"]).startswith("the course's reference (yours does not pass its self-check")


def test_an_unfinished_chapter_exports_nothing_it_cannot_use_and_says_so_quietly(tmp_path, monkeypatch, capsys):
    stub = ("def alibi_bias(num_heads, q_len, k_len, device=None):\n"
            "    raise NotImplementedError('exercise not finished: replace this line with your code')\n")
    monkeypatch.setattr(mine, "_ran_cells", lambda: [("In[1]", stub)])
    namespace = {}
    exec(stub, namespace)
    assert mine.export_exercises("03_relative", namespace, folder=tmp_path)["alibi_bias"] == mine.UNFINISHED
    monkeypatch.setattr(mine, "_ran_cells", lambda: [])
    assert str(mine.export_exercises("03", {}, folder=tmp_path)["alibi_bias"]) == "not defined in this notebook"
    out = capsys.readouterr().out
    assert "not implemented yet" not in out  # (the release test counts that phrase in a student notebook)
    assert "chapter 3: nothing exported" in out


def test_a_scheme_whose_exercise_is_missing_is_skipped_with_the_chapter_named(tmp_path, capsys):
    impl = mine.load_exercises(["alibi_bias"], folder=tmp_path, fallback=False, quiet=True)
    experiment = experiments.Lab(posenc_ref.TinyDecoder, impl, MICRO)
    experiment.train_schemes(names=("NoPE", "ALiBi"))
    assert set(experiment.models) == {"NoPE"}
    assert experiment.skipped["ALiBi"].startswith(
        "chapter 3 (chapter 3's notebook): `alibi_bias` not in your package")


# ---- one code path: the notebook, the reduced run and the full run -----------------------------------
MICRO = experiments.Config("micro", d_model=16, num_layers=1, num_heads=2, train_len=8, batch_size=4, steps=3,
                           warmup=1, eval_tokens=64, relative_max_distance=4, t5_buckets=8, t5_max_distance=8,
                           finetune_steps=2, mlm_steps=2, probe_sequences=8)


def test_one_environment_variable_selects_the_reduced_configuration(monkeypatch):
    monkeypatch.delenv(lab.ENV, raising=False)
    assert lab.config_from_env() is lab.FULL
    monkeypatch.setenv(lab.ENV, "reduced")
    assert lab.config_from_env() is lab.REDUCED
    assert lab.config_from_env(default="reduced") is lab.REDUCED  # the notebook's RUN, when CI sets nothing
    assert lab.config_from_env(default="full") is lab.REDUCED  # the environment wins
    monkeypatch.setenv(lab.ENV, "huge")
    with pytest.raises(ValueError, match="POSENC_CH7_RUN='huge'"):
        lab.config_from_env()
    # the reduced run changes sizes only: the same fields, the same experiments
    assert {f.name for f in dataclasses.fields(lab.REDUCED)} == {f.name for f in dataclasses.fields(lab.FULL)}


def test_the_notebook_runs_the_steps_of_the_command_in_its_order_with_the_configuration_from_the_environment():
    source = CHAPTER.read_text()
    # the run is chosen in the notebook, visibly, with its time; the environment (CI) takes precedence
    assert 'RUN = "full"\nexperiment = lab.Lab(TinyDecoder, impl, lab.config_from_env(default=RUN))' in source
    assert 'RUN = "reduced"' in source and "about 8 minutes" in source
    assert re.findall(r"^experiment\.(\w+)\(\)$", source, flags=re.M) == list(lab.Lab.STEPS)
    assert "POSENC_CH7_RUN" in (ROOT / "solutions" / "conftest.py").read_text()  # nbval runs the reduced one


def _shape(value):
    """The structure of a results dict: keys all the way down (lists by their first element)."""
    if isinstance(value, dict):
        return {key: _shape(v) for key, v in value.items()}
    if isinstance(value, list) and value:
        return [_shape(value[0])]
    return type(value).__name__ if not isinstance(value, (int, float)) else "number"


def test_a_tiny_run_produces_the_structure_of_the_committed_full_run(tmp_path, capsys):
    results = experiments.Lab(posenc_ref.TinyDecoder, posenc_ref, MICRO).run(tmp_path, command="test")
    stored = json.loads((DOCS / "results.json").read_text())
    assert stored["config"] == json.loads(json.dumps(dataclasses.asdict(lab.FULL)))  # (tuples are lists in JSON)
    assert stored["steps"] == list(lab.Lab.STEPS) == results["steps"]
    assert stored["command"].startswith("python -m posenc_selfcheck.lab")
    assert _shape({**results, "config": None}) == _shape({**stored, "config": None})
    figures = sorted(p.name for p in tmp_path.glob("*.png"))
    assert figures == sorted(p.name for p in DOCS.glob("*.png")) and len(figures) == 4


def test_the_export_cell_works_in_a_real_kernel_and_the_next_chapter_loads_the_copy(tmp_path):
    """A notebook defines an exercise, runs the export cell, and loads the copy back, in one Jupyter kernel
    (the export reads the kernel's input history)."""
    import nbformat
    from nbclient import NotebookClient

    (tmp_path / "posenc_selfcheck").symlink_to(ROOT / "posenc_selfcheck")
    cells = [source for _, source in CELLS[:4]] + [
        "import posenc_selfcheck\n\nposenc_selfcheck.export_exercises('03_relative', globals())",
        "from posenc_selfcheck import mine\n\nimpl = mine.load_exercises(['alibi_bias'], fallback=False)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.get("text", "") for cell in nb.cells for o in cell.outputs)
    assert "✓ alibi_bias: passed" in printed
    assert "✓ alibi_bias                   yours, posenc_mine/ch03.py" in printed
    assert "def alibi_bias" in (tmp_path / "posenc_mine" / "ch03.py").read_text()


def test_the_stored_comparison_is_the_table_built_from_the_stored_results():
    """results.json's comparison is what comparison_rows makes of the other stored results, with a row for every
    scheme of the course, chapter 8's included (the chapter's text refers to "the last four rows")."""
    stored = json.loads((DOCS / "results.json").read_text())
    assert stored["comparison"] == experiments.comparison_rows(stored)
    names = [row["scheme"] for row in stored["comparison"][:-1]]
    assert names == list(experiments.FACTS)
    assert names[-4:] == ["learned 2-D, resized", "2-D sinusoidal", "axial 2-D RoPE", "M-RoPE"]
    # chapter 9's (the chapter's text: "the four rows before chapter 8's")
    assert names[-8:-4] == ["MLA, decoupled RoPE", "NoPE layers + temperature", "local + global RoPE bases",
                            "attention sinks"]
    assert "the last four rows of the table" in CHAPTER.read_text()


def test_the_stored_run_shows_every_step_from_the_stored_results_without_training(monkeypatch, capsys):
    """POSENC_CH7_RUN=stored (the book): each step prints and draws the full run's results; nothing is trained."""
    monkeypatch.setenv(lab.ENV, "stored")
    experiment = lab.Lab(posenc_ref.TinyDecoder, posenc_ref, lab.config_from_env(default="full"))
    stored = json.loads((DOCS / "results.json").read_text())
    shown = {step: getattr(experiment, step)() for step in lab.Lab.STEPS}
    printed = capsys.readouterr().out
    assert experiment.models == {} and "shown without training" in printed
    row = next(line for line in printed.splitlines() if line.strip().startswith("RoPE ") and "  " in line)
    assert [float(v) for v in row.split()[1:]] == [round(v, 3) for v in stored["extrapolation"]["loss"]["RoPE"]]
    drawn = {line.get_label(): list(line.get_ydata()) for line in shown["extrapolation"].axes[0].get_lines()}
    assert drawn["ALiBi"] == stored["extrapolation"]["loss"]["ALiBi"]
    assert shown["attention_maps"].data == (DOCS / "attention_maps.png").read_bytes()
    assert f"| RoPE + YaRN | queries and keys | 0 | {stored['comparison'][9]['loss_1x']:.2f}" in printed


def test_the_training_checks_adamw_step_is_torchs_adamw():
    """Chapter 7's training probe writes its AdamW step out (torch.optim's first step imports torch._dynamo); 25 steps
    of it on a small network agree with torch.optim.AdamW's defaults to float64's rounding."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).double()
    theirs, ours = copy.deepcopy(net), copy.deepcopy(net)
    x, y = torch.randn(32, 8, dtype=torch.float64), torch.randint(0, 3, (32,))
    optimizer, step = torch.optim.AdamW(theirs.parameters(), lr=1e-2), _adamw(list(ours.parameters()), 1e-2)
    for _ in range(25):
        for model, update in ((theirs, optimizer.step), (ours, step)):
            loss = F.cross_entropy(model(x), y)
            model.zero_grad()
            loss.backward()
            update()
    moved = max((p - q).abs().max().item() for p, q in zip(net.parameters(), ours.parameters()))
    apart = max((p - q).abs().max().item() for p, q in zip(theirs.parameters(), ours.parameters()))
    assert moved > 0.05 and apart < 1e-12, (moved, apart)
