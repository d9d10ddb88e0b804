"""Chapter 5: RoPE scaling against transformers 5.23.0 (the oracle), the ramp against its formula, and grading."""

import math

import pytest
import torch

import posenc_ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from grader.reference import answer as reference_result
from grader.reference import mistakes as mistake_results
from posenc_selfcheck import SelfCheckFailed, check
from posenc_selfcheck.evaluate import same_answer
from tests.conftest import ROOT, grade_with
from tests.grading_support import drawn

transformers = pytest.importorskip("transformers")  # its models: on first use (tests/lazy_import.py)
from tests.lazy_import import Lazy  # noqa: E402

LlamaConfig = Lazy("transformers", "LlamaConfig")
ROPE_INIT_FUNCTIONS = Lazy("transformers.modeling_rope_utils", "ROPE_INIT_FUNCTIONS")
LlamaRotaryEmbedding = Lazy("transformers.models.llama.modeling_llama", "LlamaRotaryEmbedding")

CHECKS = chapter_checks("ch05")
L31 = {"low_freq_factor": 1.0, "high_freq_factor": 4.0}  # Llama 3.1

pytestmark = pytest.mark.skipif(transformers.__version__ != "5.23.0",
                                reason="the RoPE functions changed between releases: the course pins 5.23.0")


@pytest.fixture(autouse=True, scope="module")
def _quiet_transformers():
    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # configs warn that e.g. factor and max_position_embeddings disagree
    yield
    transformers.logging.set_verbosity(level)


def hf_config(head_dim, base, rope_type, factor=1.0, train_len=2048, **params):
    """A Llama config as config.json would give it. dynamic reads L0 from max_position_embeddings; yarn and llama3
    from rope_parameters['original_max_position_embeddings'] (the model then runs at factor * L0)."""
    rope_parameters = {"rope_type": rope_type, "rope_theta": base, **params}
    max_positions = train_len
    if rope_type != "default":
        rope_parameters["factor"] = factor
    if rope_type in ("yarn", "llama3"):
        rope_parameters["original_max_position_embeddings"] = train_len
        max_positions = int(factor * train_len)
    return LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim,
                       max_position_embeddings=max_positions, rope_parameters=rope_parameters)


def hf(head_dim, base, rope_type, factor=1.0, train_len=2048, seq_len=None, **params):
    config = hf_config(head_dim, base, rope_type, factor, train_len, **params)
    if rope_type == "default":  # computed per model class in transformers
        return LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    return ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=seq_len)


def assert_same(ours, theirs):
    (inv, factor), (inv_hf, factor_hf) = ours, theirs
    assert isinstance(factor, float) and inv.dtype == torch.float32 and inv.shape == inv_hf.shape
    torch.testing.assert_close(inv, inv_hf, rtol=1e-6, atol=0)  # float32 rounding; in practice bit-equal
    assert factor == pytest.approx(factor_hf, rel=1e-12)


CASES = [
    # (head_dim, base, rope_type, factor, L0, params)
    (64, 10000.0, "default", 1.0, 2048, {}),
    (128, 500000.0, "default", 1.0, 8192, {}),  # LLaMA 3
    (8, 10000.0, "linear", 4.0, 2048, {}),
    (128, 1e6, "linear", 2.5, 16384, {}),  # Code Llama's base
    (16, 10000.0, "yarn", 4.0, 2048, {}),
    (128, 10000.0, "yarn", 4.0, 4096, {}),  # LLaMA 2
    (128, 500000.0, "yarn", 8.0, 8192, {}),
    (64, 10000.0, "yarn", 16.0, 2048, {}),
    (16, 10000.0, "yarn", 1.0, 2048, {}),
    (64, 10000.0, "yarn", 4.0, 4096, {"beta_fast": 16.0, "beta_slow": 2.0}),
    (64, 10000.0, "yarn", 4.0, 4096, {"attention_factor": 1.0}),
    (64, 10000.0, "yarn", 4.0, 4096, {"attention_factor": 1.25, "beta_fast": 8.0, "beta_slow": 0.5}),
    (32, 10000.0, "yarn", 4.0, 2048, {"truncate": False}),
    (16, 500.0, "yarn", 4.0, 4096, {}),  # ceil(corr(beta_slow)) = 9 > d/2 - 1: the d - 1 clamp shows
    (64, 10000.0, "yarn", 40.0, 4096, {"mscale": 0.707, "mscale_all_dim": 1.0}),
    (64, 10000.0, "yarn", 40.0, 4096, {"mscale": 1.0, "mscale_all_dim": 1.0}),
    (16, 500000.0, "llama3", 8.0, 8192, L31),
    (128, 500000.0, "llama3", 8.0, 8192, L31),  # Llama 3.1
    (64, 10000.0, "llama3", 4.0, 2048, {"low_freq_factor": 2.0, "high_freq_factor": 8.0}),
]


@pytest.mark.parametrize("head_dim,base,rope_type,factor,train_len,params", CASES,
                         ids=[f"{c[2]}-d{c[0]}-base{c[1]:g}-s{c[3]:g}-{i}" for i, c in enumerate(CASES)])
def test_reference_equals_transformers(head_dim, base, rope_type, factor, train_len, params):
    ours = posenc_ref.scaled_rope_inv_freq(head_dim, base, rope_type, factor, train_len, **params)
    assert_same(ours, hf(head_dim, base, rope_type, factor, train_len, **params))


@pytest.mark.parametrize("seq_len", [None, 1, 100, 4095, 4096, 4097, 3 * 4096, 32768, torch.tensor(20000)],
                         ids=lambda s: str(s.item() if isinstance(s, torch.Tensor) else s))
@pytest.mark.parametrize("head_dim,base,factor", [(128, 10000.0, 4.0), (64, 500000.0, 2.0), (4, 10000.0, 8.0)])
def test_dynamic_equals_transformers_at_every_length(head_dim, base, factor, seq_len):
    ours = posenc_ref.scaled_rope_inv_freq(head_dim, base, "dynamic", factor, 4096, seq_len=seq_len)
    assert_same(ours, hf(head_dim, base, "dynamic", factor, 4096, seq_len=seq_len))
    if seq_len is None or seq_len <= 4096:  # up to L0 the model runs as trained
        assert torch.equal(ours[0], posenc_ref.scaled_rope_inv_freq(head_dim, base, "default")[0])


def test_legacy_rope_scaling_config_gives_the_same_numbers():
    """4.x-style configs (rope_scaling with 'type', rope_theta beside it) are converted by 5.x on load."""
    config = LlamaConfig(hidden_size=128, num_attention_heads=2, head_dim=64, max_position_embeddings=8192,
                         rope_theta=10000.0,
                         rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048})
    assert_same(posenc_ref.scaled_rope_inv_freq(64, 10000.0, "yarn", 4.0, 2048), ROPE_INIT_FUNCTIONS["yarn"](config))


def test_the_attention_factor_multiplies_cos_and_sin_in_the_model():
    """LlamaRotaryEmbedding's cos/sin equal cat(freqs, freqs).cos() * attention_factor built from our function."""
    module = LlamaRotaryEmbedding(hf_config(64, 10000.0, "yarn", 4.0, 2048))
    position_ids = torch.arange(0, 8192, 97)[None]  # (1, P)
    cos, sin = module(torch.zeros(1, dtype=torch.float32), position_ids)
    inv_freq, attention_factor = posenc_ref.scaled_rope_inv_freq(64, 10000.0, "yarn", 4.0, 2048)
    freqs = position_ids[..., None].float() * inv_freq  # (1, P, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (1, P, d)
    assert attention_factor == pytest.approx(0.1 * math.log(4.0) + 1)
    torch.testing.assert_close(cos, emb.cos() * attention_factor, rtol=0, atol=1e-6)
    torch.testing.assert_close(sin, emb.sin() * attention_factor, rtol=0, atol=1e-6)


def test_dynamic_module_recomputes_with_the_length_of_the_input():
    """transformers' dynamic module passes seq_len = max(position_ids) + 1 when the input outgrows L0."""
    module = LlamaRotaryEmbedding(hf_config(64, 10000.0, "dynamic", 2.0, 256))
    module(torch.zeros(1), torch.arange(1000)[None])
    ours, _ = posenc_ref.scaled_rope_inv_freq(64, 10000.0, "dynamic", 2.0, 256, seq_len=1000)
    torch.testing.assert_close(module.inv_freq, ours, rtol=1e-6, atol=0)


# ---- the ramp, from its formula -----------------------------------------------------------------------
@pytest.mark.parametrize("head_dim,base,train_len,low,high", [
    (128, 10000.0, 4096, 20, 46),  # corr(32) = 20.94, corr(1) = 45.03
    (128, 500000.0, 8192, 18, 35),  # corr(32) = 18.08, corr(1) = 34.98
    (16, 500.0, 4096, 3, 9),  # high = 9 > d/2 - 1 = 7, kept: clamped to d - 1 = 15 only
])
def test_yarn_ramp_is_the_clamped_line_between_floor_and_ceil(head_dim, base, train_len, low, high):
    corr = [head_dim * math.log(train_len / (2 * math.pi * r)) / (2 * math.log(base)) for r in (32, 1)]
    assert math.floor(corr[0]) == low and math.ceil(corr[1]) == high  # the hand-computed ends are right
    j = torch.arange(head_dim // 2, dtype=torch.float64)
    expected = ((j - low) / (high - low)).clamp(0, 1)
    got = posenc_ref.yarn_ramp(head_dim, base, train_len)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), expected, rtol=0, atol=1e-7)


def test_yarn_keeps_pairs_with_many_turns_and_interpolates_those_with_less_than_one():
    d, base, train_len, factor = 128, 10000.0, 4096, 4.0
    plain = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    turns = train_len * plain / (2 * math.pi)  # full turns within L0 tokens
    inv_freq, _ = posenc_ref.scaled_rope_inv_freq(d, base, "yarn", factor, train_len)
    ratio = inv_freq.double() / plain
    assert torch.allclose(ratio[turns > 32 * 1.5], torch.tensor(1.0, dtype=torch.float64), rtol=1e-6)
    assert torch.allclose(ratio[turns < 1], torch.tensor(1 / factor, dtype=torch.float64), rtol=1e-6)
    assert (ratio[1:] <= ratio[:-1] * (1 + 1e-6)).all()  # slower pairs are never scaled less (to float32 rounding)


def test_yarn_ramp_truncate_false_keeps_the_fractional_ends():
    d, base, train_len = 32, 10000.0, 2048
    low, high = (d * math.log(train_len / (2 * math.pi * r)) / (2 * math.log(base)) for r in (32, 1))
    j = torch.arange(d // 2, dtype=torch.float64)
    torch.testing.assert_close(posenc_ref.yarn_ramp(d, base, train_len, truncate=False).double(),
                               ((j - low) / (high - low)).clamp(0, 1), rtol=0, atol=1e-6)


# ---- bad input ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,words", [
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "ntk", 2.0), "rope_type='ntk'"),
    (lambda: posenc_ref.scaled_rope_inv_freq(9, 1e4, "linear", 2.0), "head_dim=9"),
    (lambda: posenc_ref.scaled_rope_inv_freq(0, 1e4, "default"), "head_dim=0"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "linear", 0.5), "factor=0.5"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "dynamic", 2.0, seq_len=10), "original_max_position_embeddings"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "yarn", 2.0), "original_max_position_embeddings"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "llama3", 2.0, **L31), "original_max_position_embeddings"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "llama3", 2.0, 64), "low_freq_factor=None"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "llama3", 2.0, 64, low_freq_factor=4.0, high_freq_factor=1.0),
     "high_freq_factor=1.0"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "yarn", 2.0, 64, beta_fats=16), "beta_fats"),
    (lambda: posenc_ref.scaled_rope_inv_freq(8, 1e4, "linear", 2.0, low_freq_factor=1.0), "low_freq_factor"),
    (lambda: posenc_ref.scaled_rope_inv_freq(2, 1e4, "dynamic", 2.0, 64), "head_dim=2"),
    (lambda: posenc_ref.yarn_ramp(7, 1e4, 2048), "head_dim=7"),
])
def test_bad_input_raises_value_error_naming_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# ---- checks and mistakes ------------------------------------------------------------------------------
@pytest.mark.parametrize("chk", [drawn(c) for c in CHECKS if c.mistakes], ids=lambda c: c.key)
def test_each_named_mistake_is_wrong_and_distinguishable_on_its_check(chk):
    """A mistake equal to the reference would be named on correct code; two equal mistakes would be confused."""
    expected = reference_result(chk)
    results = mistake_results(chk)
    spec = chk.spec()
    for name, (_, result) in zip(chk.mistakes, results):
        assert "error" not in result, (name, result.get("error"))
        assert not same_answer(spec, result, expected), f"{name} gives the reference's answer on {chk.name!r}"
    for i in range(len(results)):
        for j in range(i):
            assert not same_answer(spec, results[i][1], results[j][1]), (chk.mistakes[i], chk.mistakes[j])


def test_reference_passes_its_self_checks_and_a_known_mistake_is_named(capsys):
    check("yarn_ramp", posenc_ref.yarn_ramp)
    check("scaled_rope_inv_freq", posenc_ref.scaled_rope_inv_freq)
    assert capsys.readouterr().out.count("checks passed") == 2
    with pytest.raises(SelfCheckFailed, match="linear scaling multiplies"):
        check("scaled_rope_inv_freq", MISTAKES["linear_multiplies"].impl)
    with pytest.raises(SelfCheckFailed, match="ramp is reversed"):
        check("yarn_ramp", MISTAKES["ramp_reversed"].impl)


def _feedback(results, exercise, words=""):
    return " | ".join(str(r.feedback) for r in results.values()
                      if r.check.exercise == exercise and r.status == "failed" and words in r.check.name)


def test_diagnoses_linear_multiplies_dynamic_exponent_llama3_swapped_no_attention_factor_untruncated_ramp():
    results = grade_with(ROOT / "tests" / "submissions" / "ch05_multiplies.py", CHECKS)
    assert "linear scaling multiplies" in _feedback(results, "scaled_rope_inv_freq", "linear")
    assert "without the exponent d/(d-2)" in _feedback(results, "scaled_rope_inv_freq", "dynamic at 8 x L0")
    assert "low_freq_factor and high_freq_factor are swapped" in _feedback(results, "scaled_rope_inv_freq", "llama3")
    assert "attention factor is missing" in _feedback(results, "scaled_rope_inv_freq", "yarn with LLaMA 2")
    assert "not rounded" in _feedback(results, "yarn_ramp", "head_dim=16, base=10000")
    assert "expected ValueError, but nothing was raised" in _feedback(results, "scaled_rope_inv_freq", "factor < 1")
    # factor 1 is the yarn case where an attention factor of 1.0 is right
    assert results["yarn with factor 1 is unscaled"].status == "passed"
    # an explicit attention_factor=1.0 is right too on the public input, but the check's twin draws another explicit
    # attention factor, which this code ignores (it always returns 1.0): the check does not count
    explicit = results["yarn with explicit beta_fast=16, beta_slow=2, attention_factor=1.0"]
    assert explicit.status == "failed" and "inputs drawn for you" in str(explicit.feedback)


def test_diagnoses_reversed_ramp_in_both_exercises_and_static_ntk():
    results = grade_with(ROOT / "tests" / "submissions" / "ch05_reversed_ramp.py", CHECKS)
    assert "the ramp is reversed" in _feedback(results, "yarn_ramp", "LLaMA 2")
    assert "YaRN's ramp is reversed" in _feedback(results, "scaled_rope_inv_freq", "yarn with LLaMA 2")
    assert "static NTK-aware base" in _feedback(results, "scaled_rope_inv_freq", "dynamic without seq_len")
    assert "static NTK-aware base" in _feedback(results, "scaled_rope_inv_freq", "below L0")
    linear = [r for r in results.values() if "linear" in r.check.name and r.check.probe != "raises"]
    assert linear and all(r.status == "passed" for r in linear)


def test_diagnoses_squared_temperature_unclamped_dynamic_and_half_clamp():
    results = grade_with(ROOT / "tests" / "submissions" / "ch05_temperature.py", CHECKS)
    assert "attention factor is squared" in _feedback(results, "scaled_rope_inv_freq", "yarn, factor 4")
    assert "without the clamp alpha < 1" in _feedback(results, "scaled_rope_inv_freq", "below L0")
    assert "clamped to d/2 - 1" in _feedback(results, "yarn_ramp", "clamped to head_dim - 1")
    # the explicit attention_factor, returned as a tensor, is accepted
    assert results["yarn with explicit beta_fast=16, beta_slow=2, attention_factor=1.0"].status == "passed"


# ---- rope_wavelengths: the worked example of docs/authoring.md (its mistakes are derived from their statements) --
@pytest.mark.parametrize("head_dim, base", [(2, 10000.0), (8, 100.0), (128, 10000.0), (128, 500000.0)])
def test_a_wavelength_times_its_frequency_is_one_full_turn(head_dim, base):
    """lambda_i theta_i = 2 pi, with chapter 4's frequencies (an exercise of its own) as theta; pair 0 turns once in
    2 pi tokens; each pair's wavelength is base^(2/d) times the previous one's."""
    wavelengths = posenc_ref.rope_wavelengths(head_dim, base)
    assert wavelengths.dtype == torch.float32 and wavelengths.shape == (head_dim // 2,)
    turn = wavelengths.double() * posenc_ref.rope_inv_freq(head_dim, base).double()
    torch.testing.assert_close(turn, torch.full_like(turn, 2 * math.pi), rtol=1e-6, atol=0)
    assert wavelengths[0].item() == pytest.approx(2 * math.pi)
    ratios = wavelengths[1:].double() / wavelengths[:-1].double()
    torch.testing.assert_close(ratios, torch.full_like(ratios, base ** (2 / head_dim)), rtol=1e-5, atol=0)


def test_the_chapter_s_slow_pairs_of_llama_2_are_pairs_46_to_63():
    """The text: with d = 128, base 10^4 and L0 = 4096, pairs 46 to 63 (18 of 64) never turn once within L0. Pair i
    is slow when 2 pi base^(2i/d) > L0, i.e. i > (d/2) ln(L0 / 2 pi) / ln(base), computed here in float64."""
    first = math.floor(64 * math.log(4096 / (2 * math.pi)) / math.log(10000.0)) + 1
    slow = (posenc_ref.rope_wavelengths(128, 10000.0) > 4096).nonzero().flatten().tolist()
    assert slow == list(range(first, 64)) == list(range(46, 64))


def test_the_wavelength_mistakes_are_the_solution_with_their_statement_rewritten(tmp_path):
    """Declared with no implementation of their own: each is the reference with its key line written `wrong`, and
    the self-check and the grader name it on a learner's code that makes it."""
    per_radian = MISTAKES["wavelength_per_radian"]
    assert not per_radian.by_hand
    torch.testing.assert_close(per_radian.impl(8, 100.0) * 2 * math.pi, posenc_ref.rope_wavelengths(8, 100.0))
    turns = MISTAKES["wavelength_turns_per_token"].impl(8, 100.0)
    torch.testing.assert_close(turns, 1 / posenc_ref.rope_wavelengths(8, 100.0))
    with pytest.raises(SelfCheckFailed, match="2π times too short"):
        check("rope_wavelengths", lambda head_dim, base=10000.0: posenc_ref.rope_inv_freq(head_dim, base) ** -1)
    submission = tmp_path / "ch05.py"
    submission.write_text(
        "import math\nimport torch\n\n\ndef rope_wavelengths(head_dim, base=10000.0):\n"
        "    if head_dim <= 0 or head_dim % 2:\n        raise ValueError(f'head_dim={head_dim}')\n"
        "    exponent = torch.arange(head_dim // 2) / head_dim  # i/d: a learner's slip\n"
        "    return 2 * math.pi * base ** exponent\n")
    results = grade_with(submission, [c for c in CHECKS if c.exercise == "rope_wavelengths"])
    assert "the exponent is i/d" in _feedback(results, "rope_wavelengths", "LLaMA 2")
    assert "the exponent is i/d" in _feedback(results, "rope_wavelengths", "drawn for this submission")
