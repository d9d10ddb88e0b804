"""Chapter 9's experiment (posenc_selfcheck/modernlab): each arm's layers get the masks, frequencies, temperature and
sinks they should, the ci run writes every arm at every length, and docs/chapter9/README.md says what results.json
holds.

The lab ships no solution: it runs whatever implementation of chapter 9's functions it is given. Its tests give it
the one below, written from scratch here and checked against transformers 5.23.0 (Llama 4's, Gemma 3's and GPT-OSS's
code); `python -m posenc_selfcheck.modernlab --impl tests.test_ch09_lab` runs the experiment with it."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import re
import types
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from posenc_selfcheck.modernlab import arms, experiments  # noqa: E402
from posenc_selfcheck.modernlab.layers import CHUNKED, WINDOW  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Glyph")  # this machine may lack a CJK font: the text is what counts

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "chapter9"

def _readme_writer():
    """docs/chapter9/write_readme.py, the tool that writes the README (it lives beside it, outside the packages)."""
    spec = importlib.util.spec_from_file_location("write_readme", DOCS / "write_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- chapter 9's functions, from scratch ------------------------------------------------------------------------
def nope_layer_temperature(positions, floor_scale, attn_scale):
    # tau(p) = log(1 + floor((p + 1) / floor_scale)) * attn_scale + 1
    return torch.log1p(torch.floor((positions.float() + 1.0) / floor_scale)) * attn_scale + 1.0  # (L,)


def no_rope_layers(num_hidden_layers, interval):
    # layer i is a NoPE layer (0) when (i + 1) is a multiple of the interval
    return [0 if (i + 1) % interval == 0 else 1 for i in range(num_hidden_layers)]


def _grid(seq_len, past):
    query = torch.arange(past, past + seq_len)[:, None]  # (L, 1): the new tokens follow the cached ones
    key = torch.arange(past + seq_len)[None, :]  # (1, S)
    return query, key


def chunked_causal_mask(seq_len, chunk_size, past=0):
    query, key = _grid(seq_len, past)
    return (key <= query) & (key // chunk_size == query // chunk_size)  # (L, S)


def sliding_window_mask(seq_len, window, past=0):
    query, key = _grid(seq_len, past)
    return (key <= query) & (query - key < window)  # (L, S)


def layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor):
    exponents = torch.arange(0, head_dim, 2).float() / head_dim  # 2i / d

    def inv_freq(base):
        return 1.0 / base ** exponents  # (d/2,)

    return [inv_freq(local_base) if kind == "sliding_attention" else inv_freq(global_base) / global_factor
            for kind in layer_types]


def attention_with_sinks(q, k, v, sinks, mask, scaling):
    logits = q @ k.transpose(-2, -1) * scaling  # (B, H, L, S)
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    sink = sinks.view(1, -1, 1, 1).expand(*logits.shape[:-1], 1)  # (B, H, L, 1)
    probs = torch.cat((logits, sink), dim=-1).softmax(-1)[..., :-1]  # the sink's share is dropped
    return probs @ v  # (B, H, L, D)


SCRATCH = types.SimpleNamespace(**{name: globals()[name] for name in arms.EXERCISES})


def impl():
    from posenc_ref import TinyDecoder, apply_rope

    return types.SimpleNamespace(**vars(SCRATCH), apply_rope=apply_rope, TinyDecoder=TinyDecoder)


# ---- the scratch implementation against transformers ------------------------------------------------------------
@pytest.mark.slow  # importing transformers' modules: seconds on an idle machine, more on a busy one
def test_scratch_matches_transformers():
    from transformers import Llama4TextConfig
    from transformers.masking_utils import and_masks, causal_mask_function, chunked_overlay, sliding_window_overlay
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    assert no_rope_layers(8, 4) == Llama4TextConfig(num_hidden_layers=8).no_rope_layers
    zero = torch.zeros(1, dtype=torch.long)
    chunked = and_masks(chunked_overlay(3, zero), causal_mask_function)
    sliding = and_masks(sliding_window_overlay(3), causal_mask_function)
    for ours, theirs in ((chunked_causal_mask(7, 3, past=5), chunked), (sliding_window_mask(7, 3, past=5), sliding)):
        expected = torch.tensor([[bool(theirs(0, 0, torch.tensor(q), torch.tensor(k))) for k in range(12)]
                                 for q in range(5, 12)])  # queries 5 .. 11 after 5 cached tokens
        assert torch.equal(ours, expected)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))
    sinks, mask = torch.randn(3, generator=g), torch.ones(5, 5, dtype=torch.bool).tril()
    module = types.SimpleNamespace(sinks=sinks, num_key_value_groups=1, training=False)
    additive = torch.zeros(5, 5).masked_fill(~mask, float("-inf"))
    theirs, _ = eager_attention_forward(module, q, k, v, additive, scaling=0.5)  # (B, L, H, D)
    assert torch.allclose(attention_with_sinks(q, k, v, sinks, mask, 0.5), theirs.transpose(1, 2), atol=1e-6)


# ---- each arm's layers, against the arms as the issue describes them ---------------------------------------------
def _inv_freq(base, head_dim):
    return torch.tensor([base ** (-2 * i / head_dim) for i in range(head_dim // 2)])  # theta_i = base^(-2i/d)


def expected_layers(name, c):
    """[(rope base or None, mask, span, temperature, sinks)] per layer, written out for 4 layers (not from the lab)."""
    chunk, window, temp = c.chunk_size, c.window, (c.floor_scale, c.attn_scale)
    return {
        "all-RoPE": [(c.rope_base, "causal", 0, None, False)] * 4,
        "RoPE + sinks": [(c.rope_base, "causal", 0, None, True)] * 4,
        # Llama 4: layers 0-2 RoPE within chunks, layer 3 NoPE over everything, with the temperature
        "iRoPE": [(c.rope_base, CHUNKED, chunk, None, False)] * 3 + [(None, "causal", 0, temp, False)],
        # Gemma 3: three sliding layers at the local base, one full layer at the global base
        "local/global": [(c.local_base, WINDOW, window, None, False)] * 3 + [(c.global_base, "causal", 0, None, False)],
    }[name]


@pytest.mark.parametrize("name", arms.ARMS)
def test_each_arm_plans_its_layers_as_its_model_does(name):
    c = experiments.CI
    assert c.num_layers == 4 and c.nope_interval == 4 and c.global_pattern == 4
    layers = arms.plans(SCRATCH, name, c)
    assert len(layers) == 4
    for plan, (base, mask, span, temperature, sinks) in zip(layers, expected_layers(name, c)):
        assert (plan.mask, plan.span, plan.temperature, plan.sinks) == (mask, span, temperature, sinks)
        if base is None:
            assert plan.inv_freq is None
        else:
            assert torch.allclose(plan.inv_freq, _inv_freq(base, c.d_model // c.num_heads), rtol=1e-5)


def _rotate(t, inv_freq):
    """RoPE, half layout, from scratch: pairs (i, i + d/2) turned by p * theta_i."""
    half = t.shape[-1] // 2
    angles = torch.arange(t.shape[2]).float()[:, None] * inv_freq  # (L, d/2)
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = t[..., :half], t[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _allowed(kind, span, length):
    """Which keys each query may see, from index arithmetic."""
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    causal = j <= i
    return {"causal": causal, CHUNKED: causal & (i // max(span, 1) == j // max(span, 1)),
            WINDOW: causal & (i - j < span), "window + first token": causal & ((i - j < span) | (j == 0))}[kind]


def expected_attention(attn, x, base, kind, span, temperature, inv_freq_scale=1.0):
    """The probabilities a layer should compute for its input x, from its weights and the arm's description."""
    inner = attn.inner
    b, length, _ = x.shape
    h, d = inner.num_heads, inner.head_dim

    def heads(t):
        return t.view(b, length, h, d).transpose(1, 2)

    q, k = heads(inner.q_proj(x)), heads(inner.k_proj(x))
    if base is not None:
        inv = _inv_freq(base, d) / inv_freq_scale
        q, k = _rotate(q, inv), _rotate(k, inv)
    if temperature is not None:
        floor_scale, attn_scale = temperature
        positions = torch.arange(length).float()
        q = q * (1 + attn_scale * torch.log(1 + torch.floor((positions + 1) / floor_scale)))[:, None]
    logits = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~_allowed(kind, span, length), float("-inf"))
    if attn.sinks is None:
        return logits.softmax(-1)
    sink = attn.sinks.view(1, h, 1, 1).expand(b, h, length, 1)
    return torch.cat((logits, sink), -1).softmax(-1)[..., :-1]


def _model_and_inputs(lab, name, length=48):
    torch.manual_seed(1)
    model = lab.new_model(name)
    with torch.no_grad():  # sharper attention than at initialisation, so that every factor shows
        for block in model.layers:
            block.attn.inner.q_proj.weight.mul_(40)
            block.attn.inner.k_proj.weight.mul_(40)
            if block.attn.sinks is not None:
                block.attn.sinks.copy_(torch.linspace(-1, 2, len(block.attn.sinks)))
    return model, torch.randint(1, 256, (2, length))


def _layer_inputs(model, tokens):
    inputs = []
    hooks = [block.attn.register_forward_pre_hook(lambda m, a: inputs.append(a[0])) for block in model.layers]
    probs = experiments.record_attention(model, tokens)
    for hook in hooks:
        hook.remove()
    return inputs, probs


@pytest.fixture(scope="module")
def ci_lab():
    torch.set_num_threads(1)
    return experiments.ModernLab(impl(), experiments.CI)


@pytest.mark.parametrize("name", arms.ARMS)
@torch.no_grad()
def test_each_arms_attention_is_what_its_description_says(ci_lab, name):
    """Every layer's attention probabilities, recomputed from its weights, its input and the arm's description;
    48 positions > floor_scale 16, so the temperature is not 1."""
    model, tokens = _model_and_inputs(ci_lab, name)
    inputs, probs = _layer_inputs(model, tokens)
    for block, x, p, layer in zip(model.layers, inputs, probs, expected_layers(name, ci_lab.config)):
        base, kind, span, temperature, _ = layer
        expected = expected_attention(block.attn, x, base, kind, span, temperature)
        assert torch.allclose(p, expected, atol=1e-5), (name, layer)
    # and the variants: each one's change, and nothing else
    c = ci_lab.config
    for row, arm in arms.VARIANTS.items():
        if arm != name:
            continue
        trained = [block.attn.plan for block in model.layers]
        ci_lab.set_plans(model, arms.variant_plans(SCRATCH, row, trained, c))
        inputs, probs = _layer_inputs(model, tokens)
        ci_lab.set_plans(model, trained)
        for block, x, p, (base, kind, span, temperature, _) in zip(model.layers, inputs, probs,
                                                                   expected_layers(name, c)):
            scale = 1.0
            if row == "iRoPE, no temperature":
                temperature = None
            elif row == "local/global, global factor" and base == c.global_base:
                scale = max(c.eval_factors)
            elif row.endswith("window L"):
                kind, span = WINDOW, c.train_len
            elif row.endswith("first token"):
                kind, span = "window + first token", c.train_len
            expected = expected_attention(block.attn, x, base, kind, span, temperature, scale)
            assert torch.allclose(p, expected, atol=1e-5), (row, base, kind)


def test_the_temperature_changes_the_nope_layer_and_the_sinks_take_mass(ci_lab):
    """The checks above can fail: without the temperature, and without the sinks, the attention differs."""
    model, tokens = _model_and_inputs(ci_lab, "iRoPE")
    with torch.no_grad():
        inputs, probs = _layer_inputs(model, tokens)
        cold = expected_attention(model.layers[3].attn, inputs[3], None, "causal", 0, None)
    assert not torch.allclose(probs[3], cold, atol=1e-3)
    model, tokens = _model_and_inputs(ci_lab, "RoPE + sinks")
    with torch.no_grad():
        probs = experiments.record_attention(model, tokens)
    assert all((1 - p.sum(-1)).mean() > 1e-2 for p in probs)


# ---- the ci run: every arm and variant at every length, the figures, and no English prose in Chinese ----------------
def test_the_ci_run_writes_every_arm_at_every_length_and_says_it_in_chinese(tmp_path, capsys, monkeypatch):
    from posenc_selfcheck.modernlab.__main__ import main
    from tests.test_drivers_zh import _texts
    from tests.test_messages import english_prose

    monkeypatch.setenv("POSENC_LANG", "zh_CN")
    assert main(["--run", "ci", "--impl", "tests.test_ch09_lab", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    c = experiments.CI
    assert results["run"] == "ci" and results["config"] == json.loads(json.dumps(dataclasses.asdict(c)))
    lengths = [f * c.train_len for f in c.eval_factors]
    ext = results["extrapolation"]
    assert ext["lengths"] == lengths == [16, 32, 64, 128]
    assert list(ext["loss"]) == [*arms.ARMS, *arms.VARIANTS]
    assert all(len(v) == len(lengths) and all(math.isfinite(x) and 0 < x < 8 for x in v) for v in ext["loss"].values())
    assert list(results["training"]) == list(arms.ARMS) == list(results["first_token"]["first"])
    assert results["first_token"]["lengths"] == [c.train_len, lengths[-1]]
    sink = results["first_token"]["sink"]
    assert all(abs(v) < 1e-5 for name in ("all-RoPE", "iRoPE", "local/global") for per in sink[name] for v in per)
    assert all(v > 0 for per in sink["RoPE + sinks"] for v in per)
    assert {p.name for p in tmp_path.iterdir()} == {"results.json", "extrapolation.png", "first_token.png"}
    # what it printed and drew, and what the stored run and the "nothing trained yet" paths print and draw
    stored = experiments.ModernLab(None, experiments.STORED)
    figures = [stored.train_arms(), stored.extrapolation(), stored.first_token()]
    empty = experiments.ModernLab(None, experiments.CI)
    assert empty.extrapolation() is None and empty.first_token() is None
    printed = capsys.readouterr().out.replace("\r", "\n").splitlines()
    texts = [t for f in figures if f is not None for t in _texts(f)]
    assert len(printed) >= 40 and len(texts) >= 30
    assert "[========================]" in "\n".join(printed)
    prose = [f"{english_prose(line)} | {line}" for line in printed + texts if english_prose(line)]
    assert prose == []


# ---- the stored full run and its README -----------------------------------------------------------------------------
def test_the_stored_run_is_the_full_configuration_with_every_arm():
    results = json.loads((DOCS / "results.json").read_text())
    assert results["run"] == "full"
    assert results["config"] == json.loads(json.dumps(dataclasses.asdict(experiments.FULL)))
    assert list(results["extrapolation"]["loss"]) == [*arms.ARMS, *arms.VARIANTS]
    assert results["command"].startswith("python -m posenc_selfcheck.modernlab --run full")
    assert results["threads"] == 1
    assert {"extrapolation.png", "first_token.png", "README.md", "README.in.md"} <= {p.name for p in DOCS.iterdir()}


def test_the_readme_is_what_its_template_and_the_results_make():
    """Every number docs/chapter9/README.md quotes is filled in from results.json (python
    docs/chapter9/write_readme.py): edited by hand or left behind by a new run, it fails here."""
    text = (DOCS / "README.md").read_text()
    assert text == _readme_writer().render(DOCS)
    assert f"\n{json.loads((DOCS / 'results.json').read_text())['command']}\n" in text  # the command, as it ran
    template = (DOCS / "README.in.md").read_text()
    prose = re.sub(r"\{\{[^}]*\}\}|`[^`]*`|\|[^\n]*\|", " ", template)  # placeholders, code, tables
    typed = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", prose)
    assert typed == [], f"numbers typed by hand in README.in.md: {typed}"
