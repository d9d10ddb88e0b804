"""Chapter 5's exercises: rope_wavelengths, yarn_ramp, scaled_rope_inv_freq (the reference equals transformers
5.23.0's modeling_rope_utils.ROPE_INIT_FUNCTIONS; tests/test_ch05.py proves it)."""

from grader.exercise import Exercise, declared
from grader.spec import Check, Mistake, draw_choice, draw_float, draw_int, find, same, unseen_like


def even(lo, hi, name=None):
    """An even head_dim in [lo, hi], drawn for each student."""
    return draw_int(lo, hi, step=2, name=name)


def base(lo=1000.0, hi=100000.0):
    """A base drawn log-uniformly in [lo, hi] for each student."""
    return draw_float(lo, hi, log=True)


def real(lo, hi):
    """A factor (or another real parameter) drawn uniformly in [lo, hi], 3 significant digits."""
    return draw_float(lo, hi, digits=3)


HEAD_DIM, BASE, FACTOR, L0 = even(8, 128), base(1000.0, 1000000.0), real(1.5, 16.0), draw_int(512, 8192, step=64)


# ---- rope_wavelengths ----------------------------------------------------------------------------
WAVE = "rope_wavelengths"
WAVE_MISTAKES = ("wavelength_per_radian", "wavelength_turns_per_token", "wavelength_i_over_d")

ROPE_WAVELENGTHS_CHECKS = [
    Check(WAVE, "matches the reference for head_dim=8, base=100", "call", {"args": [8, 100.0]}, public=True,
          mistakes=WAVE_MISTAKES, id="matches_reference_head_dim_8_base_100",
          twin={"args": [even(4, 16), base(10.0, 1000.0)]}),
    Check(WAVE, "LLaMA 2's geometry: head_dim=128, base=10000", "call", {"args": [128]}, points=2, public=True,
          mistakes=WAVE_MISTAKES, id="llama_2_geometry_head_dim_128", twin={"args": [even(96, 256), base()]}),
    # [2π] whatever the base: no draw can make its answer unseen, so it gives feedback and earns no points
    Check(WAVE, "head_dim=2: the single pair turns once every 2π tokens", "call", {"args": [2, 500000.0]},
          public=True, mistakes=WAVE_MISTAKES[:2], id="head_dim_2_single_pair", points=0),
    Check(WAVE, "odd head_dim raises ValueError naming it", "raises", {"args": [7]}, expect="raises",
          mentions=("head_dim", "7"), public=True, id="odd_head_dim_raises_valueerror_naming",
          twin={"params": {"args": [draw_int(1, 255, step=2, name="d"), base()]}, "mentions": ("head_dim", same("d"))}),
    Check(WAVE, "head_dim=0 raises ValueError naming it", "raises", {"args": [0]}, expect="raises",
          mentions=("head_dim",), public=True, id="head_dim_0_raises_valueerror_naming", twin={"args": [0, base()]}),
]

ROPE_WAVELENGTHS = Exercise(
    "rope_wavelengths",
    convention="`(head_dim/2,)`: λ_i = 2π/θ_i = 2π·base^(2i/d), the tokens pair i takes to turn once, float32",
    checks=ROPE_WAVELENGTHS_CHECKS,
    main=[
        unseen_like(find(ROPE_WAVELENGTHS_CHECKS, WAVE, "matches_reference_head_dim_8_base_100"),
                    {"args": [draw_int(4, 96, step=2), base(100.0, 1000000.0)]},
                    "matches the reference for head_dim and base drawn for this submission", id="main_wavelengths_v2"),
    ],
    hints=(
        "a pair turns by θ_i radians per token and a full turn is 2π radians: it comes back to its start after "
        "2π/θ_i tokens, its wavelength.",
        "the frequencies first, as chapter 4 computes them: θ_i = base^(-2i/d) for i = 0 .. d/2 - 1, from the even "
        "indices `torch.arange(0, head_dim, 2, dtype=torch.float32)` divided by head_dim.",
        "a check of your numbers: pair 0 has θ_0 = 1, so its wavelength is 2π ≈ 6.28 tokens for every base, and "
        "the wavelengths grow from pair to pair by the factor base^(2/d).",
        "key line: `return 2 * math.pi / inv_freq`",
    ),
    mistakes={
        "wavelength_per_radian": Mistake(
            "rope_wavelengths",
            "your wavelengths are 2π times too short: 1/θ_i is the tokens per radian, and a full turn is 2π radians, "
            "so λ_i = 2π/θ_i",
            hints=(
                "a wavelength counts the tokens of one full turn, and a full turn is 2π radians, not one.",
                "the division at the end: what you divide by the frequencies `inv_freq` is the angle of a full turn.",
                "key line: `return 2 * math.pi / inv_freq`",
            ),
            wrong="return 1 / inv_freq",
        ),
        "wavelength_turns_per_token": Mistake(
            "rope_wavelengths",
            "you returned turns per token, θ_i/(2π): the wavelength is its inverse, tokens per turn, λ_i = 2π/θ_i",
            hints=(
                "a frequency counts turns per token, a wavelength tokens per turn: each is the other's inverse, so the "
                "slow pairs have the long wavelengths.",
                "the division at the end: 2π over the frequencies `inv_freq`, not the frequencies over 2π.",
                "key line: `return 2 * math.pi / inv_freq`",
            ),
            wrong="return inv_freq / (2 * math.pi)",
        ),
        "wavelength_i_over_d": Mistake(
            "rope_wavelengths",
            "the exponent is i/d; it should be 2i/d (θ_i = base^(-2i/d), with 2i the even dimension index), so your "
            "slowest pair's wavelength is about 2π·sqrt(base) instead of about 2π·base",
            hints=(
                "pair i uses the exponent 2i/d, with 2i the index of its even coordinate, so the slowest pair's "
                "frequency is close to 1/base, not 1/sqrt(base).",
                "the frequencies `inv_freq`: the exponents are the even indices 0, 2, 4, ... divided by head_dim.",
                "key line: `inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))`",
            ),
            wrong="inv_freq = 1.0 / (base ** (torch.arange(0, head_dim // 2, dtype=torch.float32) / head_dim))",
        ),
    },
)


# ---- yarn_ramp -----------------------------------------------------------------------------------
RAMP = "yarn_ramp"

RAMP_MISTAKES = ("ramp_reversed", "ramp_not_truncated")


def ramp(head_dim, base, train_len, **kw):
    return {"args": [head_dim, base, train_len], "kwargs": kw}


YARN_RAMP_CHECKS = [
    Check(RAMP, "matches the reference for head_dim=16, base=10000, L0=2048", "call", ramp(16, 10000.0, 2048),
          public=True, mistakes=RAMP_MISTAKES, id="matches_reference_head_dim_16_base_10000",
          twin=ramp(even(8, 64), base(), draw_int(512, 8192))),
    Check(RAMP, "odd head_dim raises ValueError naming it", "raises", ramp(7, 10000.0, 2048), expect="raises",
          mentions=("head_dim", "7"), public=True, id="odd_head_dim_raises_valueerror_naming",
          twin={"params": ramp(draw_int(1, 255, step=2, name="d"), base(), draw_int(512, 8192)),
                "mentions": ("head_dim", same("d"))}),
    Check(RAMP, "LLaMA 2's geometry: head_dim=128, base=10000, L0=4096", "call", ramp(128, 10000.0, 4096),
          points=2, mistakes=RAMP_MISTAKES, public=True, id="llama_2_s_geometry_head_dim_128_base",
          twin=ramp(128, base(5000.0, 20000.0), draw_int(2048, 8192))),
    Check(RAMP, "LLaMA 3's geometry: head_dim=128, base=500000, L0=8192", "call", ramp(128, 500000.0, 8192),
          mistakes=RAMP_MISTAKES, public=True, id="llama_3_s_geometry_head_dim_128_base",
          twin=ramp(128, base(200000.0, 1000000.0), draw_int(4096, 16384))),
    Check(RAMP, "other thresholds: beta_fast=16, beta_slow=2", "call",
          ramp(64, 10000.0, 4096, beta_fast=16.0, beta_slow=2.0), mistakes=RAMP_MISTAKES,
          hint="corr(r) uses beta_fast for low and beta_slow for high", public=True,
          id="other_thresholds_beta_fast_16_beta_slow",
          twin=ramp(even(32, 128), base(), draw_int(1024, 8192), beta_fast=real(8.0, 64.0), beta_slow=real(1.0, 4.0))),
    Check(RAMP, "truncate=False keeps low and high fractional", "call", ramp(32, 10000.0, 2048, truncate=False),
          mistakes=("ramp_reversed",), hint="floor and ceil only when truncate is True",
          public=True, id="truncate_false_low_high_fractional",
          twin=ramp(even(16, 128), base(), draw_int(1024, 8192), truncate=False)),
    Check(RAMP, "high is clamped to head_dim - 1, as in YaRN's code (head_dim=16, base=500, L0=4096)", "call",
          ramp(16, 500.0, 4096), mistakes=("ramp_clamp_half", "ramp_reversed"),
          hint="clamp to [0, head_dim - 1]: ceil(corr(beta_slow)) = 9 here, more than the last pair index 7",
          public=True, id="high_clamped_head_dim_1_yarn_s_code_head",  # small bases, long L0: high > d/2 - 1
          twin=ramp(even(8, 32), base(100.0, 800.0), draw_int(4096, 16384))),
    Check(RAMP, "head_dim=0 raises ValueError naming it", "raises", ramp(0, 10000.0, 2048), expect="raises",
          mentions=("head_dim",), public=True, id="head_dim_0_raises_valueerror_naming",
          twin=ramp(0, base(), draw_int(512, 8192))),
]

YARN_RAMP = Exercise(
    "yarn_ramp",
    convention="YaRN's per-frequency ramp between interpolation and extrapolation (Peng et al., 2023)",
    checks=YARN_RAMP_CHECKS,
    main=[
        unseen_like(find(YARN_RAMP_CHECKS, RAMP, "matches_reference_head_dim_16_base_10000"), ramp(HEAD_DIM, BASE, L0),
                    "matches the reference for head_dim, base and L0 drawn for this submission", id="main_ramp_v2"),
    ],
    hints=(
        "the ramp says, per frequency pair, how much to interpolate: 0 for the fast pairs that turn many times "
        "within L0, 1 for the slow ones, linear in between.",
        "corr(r) = d·ln(L0 / (2·pi·r)) / (2·ln(base)), with Python floats (`math.log`); low = corr(beta_fast), "
        "high = corr(beta_slow).",
        "with truncate: low = floor(low), high = ceil(high). Then clamp both to [0, head_dim - 1] (head_dim - 1, as "
        "YaRN's code does), and add 0.001 to high when the two are equal.",
        "the ramp over pairs j = 0 .. d/2 - 1, in float32: (j - low) / (high - low), clamped to [0, 1].",
        "key line: `return ((j - low) / (high - low)).clamp(0, 1)`",
    ),
    mistakes={
        "ramp_reversed": Mistake(
            "yarn_ramp",
            "the ramp is reversed: it should be 0 for the fast pairs (j <= low, many turns in L0: keep w) and rise to "
            "1 for the slow ones (j >= high: w / factor); use clamp((j - low) / (high - low), 0, 1)",
            hints=(
                "the fast pairs, many turns within L0, keep their frequency (ramp 0); the slow pairs are interpolated "
                "(ramp 1).",
                "the ramp over the pairs j: it rises from low to high, 0 below low and 1 above high.",
                "key line: `return ((j - low) / (high - low)).clamp(0, 1)`",
            ),
            wrong="return 1 - ((j - low) / (high - low)).clamp(0, 1)",
        ),
        "ramp_not_truncated": Mistake(
            "yarn_ramp",
            "low and high are not rounded: with truncate=True (the default) low = floor(corr(beta_fast)) and high = "
            "ceil(corr(beta_slow))",
            hints=(
                "YaRN's code rounds the ramp's ends outwards to whole pair indices by default: the ramp then starts "
                "and ends on a pair.",
                "right after `low, high = corr(beta_fast), corr(beta_slow)`, when `truncate` is set: round low down "
                "and high up with the math module.",
                "key line: `low, high = math.floor(low), math.ceil(high)`",
            ),
            wrong="low, high = low, high",
        ),
        "ramp_clamp_half": Mistake(
            "yarn_ramp",
            "high is clamped to d/2 - 1 (the last pair); YaRN's code and transformers clamp it to head_dim - 1, which "
            "changes the ramp's slope when ceil(corr(beta_slow)) > d/2 - 1",
            hints=(
                "the ramp's ends are clamped as YaRN's code and transformers clamp them, to [0, head_dim - 1]; the "
                "upper end may lie past the last pair, which flattens the slope of the ramp.",
                "where `low` and `high` are clamped (`d = head_dim`): the upper bound is d - 1, not d // 2 - 1.",
                "key line: `low, high = max(low, 0), min(high, d - 1)`",
            ),
            wrong="low, high = max(low, 0), min(high, d // 2 - 1)",
        ),
    },
)


# ---- scaled_rope_inv_freq ------------------------------------------------------------------------
SCALED = "scaled_rope_inv_freq"
PROBE = "inv_freq_and_factor"
# The slowest frequencies are ~1e-4 / factor and smaller: an absolute tolerance would let any mistake in
# exactly the pairs that long-context scaling is about pass. Relative only; float32 rounding is ~1e-6.
TOL = {"atol": 0.0, "rtol": 2e-5}
L31 = {"low_freq_factor": 1.0, "high_freq_factor": 4.0}  # Llama 3.1
YARN_MISTAKES = ("yarn_reversed", "yarn_no_attention_factor", "yarn_attention_squared")


def scaled(head_dim, base, rope_type, factor=None, train_len=None, seq_len=None, **params):
    kwargs = dict(params)
    if train_len is not None:
        kwargs["original_max_position_embeddings"] = train_len
    if seq_len is not None:
        kwargs["seq_len"] = seq_len
    args = [head_dim, base, rope_type] + ([factor] if factor is not None else [])
    return {"args": args, "kwargs": kwargs}


def match(check_id, name, params, **kw):
    """A check against the reference; every one is public (it also runs in the self-check)."""
    return Check(SCALED, name, PROBE, params, tol=TOL, id=check_id, public=True, **kw)


def raises(check_id, name, params, mentions, **kw):
    return Check(SCALED, name, "raises", params, expect="raises", mentions=mentions, id=check_id, public=True, **kw)


SCALED_ROPE_INV_FREQ_CHECKS = [
    match("default_head_dim_8",
          "default: base^(-2i/d), attention factor 1 (head_dim=8)", scaled(8, 10000.0, "default"),
          twin=scaled(even(4, 16), base(), "default"),
          hint="1 / base ** (arange(0, d, 2) / d) in float32, and attention_factor 1.0"),
    match("linear_factor_4", "linear, factor 4 (head_dim=8)", scaled(8, 10000.0, "linear", 4.0),
          mistakes=("linear_multiplies",), twin=scaled(even(4, 16), base(), "linear", real(2.0, 8.0))),
    match("dynamic_above_l0",
          "dynamic with seq_len above L0 (seq_len=256, L0=64, factor 2)", scaled(8, 10000.0, "dynamic", 2.0, 64, 256),
          mistakes=("dynamic_no_exponent", "dynamic_static"),
          twin=scaled(even(4, 32), base(), "dynamic", real(1.5, 8.0), draw_int(32, 512), draw_int(513, 4096))),
    match("dynamic_below_l0", "dynamic with seq_len below L0 equals default (seq_len=48, L0=64)",
          scaled(8, 10000.0, "dynamic", 2.0, 64, 48), mistakes=("dynamic_no_clamp", "dynamic_static"),
          twin=scaled(even(4, 32), base(), "dynamic", real(1.5, 8.0), draw_int(1024, 4096), draw_int(2, 1023)),
          hint="L = max(seq_len, L0): up to L0 the model runs exactly as trained"),
    match("yarn_factor_4", "yarn, factor 4 (head_dim=16, L0=2048)", scaled(16, 10000.0, "yarn", 4.0, 2048),
          mistakes=YARN_MISTAKES, twin=scaled(even(8, 32), base(), "yarn", real(2.0, 8.0), draw_int(1024, 8192))),
    match("llama3_llama31_head_dim_16",
          "llama3 with Llama 3.1's parameters (head_dim=16)", scaled(16, 500000.0, "llama3", 8.0, 8192, **L31),
          mistakes=("llama3_swapped",),
          twin=scaled(even(8, 32), base(100000.0, 1000000.0), "llama3", real(4.0, 16.0), draw_int(4096, 16384), **L31)),
    raises("unknown_rope_type_raises",
           "an unknown rope_type raises ValueError naming it", scaled(8, 10000.0, "ntk", 2.0), ("ntk",),
           twin={"params": scaled(even(4, 64), base(), draw_choice("ntk", "longrope", "su", "dynamic_ntk", "yarn2",
                                                                  "ntk-aware", "llama2", "rope", name="t"),
                                  real(1.0, 16.0)),
                 "mentions": (same("t"),)}),
    raises("factor_below_1_raises",
           "factor < 1 raises ValueError naming it", scaled(8, 10000.0, "linear", 0.5), ("factor",),
           twin=scaled(even(4, 64), base(), "linear", real(0.01, 0.99))),
    match("default_base_500000", "default with LLaMA 3's base 500000 (head_dim=128)", scaled(128, 500000.0, "default"),
          twin=scaled(even(96, 256), base(100000.0, 2000000.0), "default")),
    match("linear_factor_8",
          "linear, factor 8 (head_dim=64)", scaled(64, 10000.0, "linear", 8.0), mistakes=("linear_multiplies",),
          twin=scaled(even(32, 128), base(), "linear", real(6.0, 16.0))),
    match("linear_code_llama_base", "linear with Code Llama's base 1e6 and factor 2.5", scaled(128, 1e6, "linear", 2.5),
          mistakes=("linear_multiplies",),
          twin=scaled(even(64, 256), base(500000.0, 5000000.0), "linear", real(1.5, 4.0))),
    match("dynamic_without_seq_len",
          "dynamic without seq_len runs as at L0 (unscaled)", scaled(64, 10000.0, "dynamic", 4.0, 4096),
          mistakes=("dynamic_static",), hint="seq_len=None means L = L0, so alpha = 1",
          twin=scaled(even(16, 128), base(), "dynamic", real(2.0, 8.0), draw_int(1024, 8192))),
    match("dynamic_one_past_l0",
          "dynamic one token past L0", scaled(128, 10000.0, "dynamic", 4.0, 4096, 4097), mistakes=("dynamic_static",),
          twin=scaled(even(64, 256), base(), "dynamic", real(2.0, 8.0), draw_int(1024, 8192, name="l0"),
                      same("l0", plus=1))),
    match("dynamic_8x_l0",
          "dynamic at 8 x L0 (head_dim=128, L0=4096, factor 4)", scaled(128, 10000.0, "dynamic", 4.0, 4096, 32768),
          points=2, mistakes=("dynamic_no_exponent", "dynamic_static"),
          twin=scaled(even(64, 256), base(), "dynamic", real(2.0, 8.0), draw_int(1024, 8192, name="l0"),
                      same("l0", times=8))),
    match("dynamic_seq_len_1", "dynamic with seq_len=1 (far below L0)", scaled(64, 500000.0, "dynamic", 8.0, 8192, 1),
          hint="L = max(seq_len, L0); without the clamp alpha is negative here",
          twin=scaled(even(16, 128), base(100000.0, 1000000.0), "dynamic", real(2.0, 16.0), draw_int(2048, 16384), 1)),
    match("yarn_llama2_geometry",
          "yarn with LLaMA 2's geometry (head_dim=128, L0=4096, factor 4)", scaled(128, 10000.0, "yarn", 4.0, 4096),
          points=2, mistakes=YARN_MISTAKES,
          twin=scaled(128, base(5000.0, 20000.0), "yarn", real(2.0, 8.0), draw_int(2048, 8192))),
    match("yarn_factor_16",
          "yarn, factor 16 (head_dim=64, L0=2048)", scaled(64, 10000.0, "yarn", 16.0, 2048), mistakes=YARN_MISTAKES,
          twin=scaled(even(32, 128), base(), "yarn", real(10.0, 32.0), draw_int(1024, 4096))),
    match("yarn_explicit_betas", "yarn with explicit beta_fast=16, beta_slow=2, attention_factor=1.0",
          scaled(64, 10000.0, "yarn", 4.0, 4096, beta_fast=16.0, beta_slow=2.0, attention_factor=1.0),
          mistakes=("yarn_reversed",),
          hint="params override the defaults: beta_fast/beta_slow replace 32/1, and an explicit attention_factor "
               "is returned as given",
          twin=scaled(even(32, 128), base(), "yarn", real(2.0, 8.0), draw_int(1024, 8192), beta_fast=real(8.0, 64.0),
                      beta_slow=real(1.0, 4.0), attention_factor=real(0.5, 2.0))),
    match("yarn_no_truncate", "yarn with truncate=False", scaled(32, 10000.0, "yarn", 4.0, 2048, truncate=False),
          mistakes=YARN_MISTAKES, hint="pass truncate on to the ramp: no floor and ceil",
          twin=scaled(even(16, 64), base(), "yarn", real(2.0, 8.0), draw_int(1024, 8192), truncate=False)),
    match("yarn_mscale", "yarn attention factor from mscale and mscale_all_dim",
          scaled(64, 10000.0, "yarn", 40.0, 4096, mscale=0.707, mscale_all_dim=1.0), mistakes=("yarn_reversed",),
          hint="with both given: (0.1*mscale*ln(factor) + 1) / (0.1*mscale_all_dim*ln(factor) + 1)",
          twin=scaled(even(32, 128), base(), "yarn", real(10.0, 64.0), draw_int(1024, 8192), mscale=real(0.5, 1.0),
                      mscale_all_dim=real(0.5, 1.5))),
    match("yarn_factor_1", "yarn with factor 1 is unscaled", scaled(16, 10000.0, "yarn", 1.0, 2048),
          twin=scaled(even(8, 64), base(), "yarn", 1.0, draw_int(512, 8192))),
    match("llama3_llama31_head_dim_128", "llama3 with Llama 3.1's parameters (head_dim=128, base=500000)",
          scaled(128, 500000.0, "llama3", 8.0, 8192, **L31), points=2, mistakes=("llama3_swapped",),
          twin=scaled(128, base(200000.0, 1000000.0), "llama3", real(4.0, 16.0), draw_int(4096, 16384), **L31)),
    match("llama3_other_bands", "llama3 with other bands (low_freq_factor=2, high_freq_factor=8)",
          scaled(64, 10000.0, "llama3", 4.0, 2048, low_freq_factor=2.0, high_freq_factor=8.0),
          mistakes=("llama3_swapped",),
          twin=scaled(even(32, 128), base(), "llama3", real(2.0, 8.0), draw_int(1024, 8192),
                      low_freq_factor=real(1.0, 3.0), high_freq_factor=real(4.0, 16.0))),
    raises("odd_head_dim_raises",
           "odd head_dim raises ValueError naming it", scaled(9, 10000.0, "linear", 2.0), ("head_dim", "9"),
           twin={"params": scaled(draw_int(1, 255, step=2, name="d"), base(), "linear", real(1.0, 16.0)),
                 "mentions": ("head_dim", same("d"))}),
    raises("yarn_without_l0_raises", "yarn without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 10000.0, "yarn", 4.0), ("original_max_position_embeddings",),
           twin=scaled(even(4, 64), base(), "yarn", real(1.0, 16.0))),
    raises("dynamic_without_l0_raises", "dynamic without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 10000.0, "dynamic", 4.0, seq_len=4096), ("original_max_position_embeddings",),
           twin=scaled(even(4, 64), base(), "dynamic", real(1.0, 16.0), seq_len=draw_int(1, 16384))),
    raises("llama3_without_l0_raises", "llama3 without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 500000.0, "llama3", 8.0, **L31), ("original_max_position_embeddings",),
           twin=scaled(even(4, 64), base(), "llama3", real(1.0, 16.0), **L31)),
    raises("llama3_without_bands_raises",
           "llama3 without low_freq_factor / high_freq_factor raises ValueError naming them",
           scaled(16, 500000.0, "llama3", 8.0, 8192), ("low_freq_factor",),
           twin=scaled(even(4, 64), base(), "llama3", real(1.0, 16.0), draw_int(512, 16384))),
    raises("unused_parameter_raises",
           "a parameter the rope_type does not use raises ValueError naming it (a typo: beta_fats)",
           scaled(16, 10000.0, "yarn", 4.0, 2048, beta_fats=16.0), ("beta_fats",),
           twin=scaled(even(4, 64), base(), "yarn", real(1.0, 16.0), draw_int(512, 16384), beta_fats=real(8.0, 64.0)),
           hint="compare params with the keys the rope_type uses; an unknown key is a typo that would "
                "otherwise be silently ignored"),
    raises("yarn_factor_below_1_raises",
           "factor < 1 raises ValueError for yarn too", scaled(16, 10000.0, "yarn", 0.25, 2048), ("factor",),
           twin=scaled(even(4, 64), base(), "yarn", real(0.01, 0.99), draw_int(512, 16384))),
]

SCALED_ROPE_INV_FREQ = Exercise(
    "scaled_rope_inv_freq",
    convention="`(inv_freq, attention_factor)` for `rope_type` default, linear (Chen et al., 2023), "
               "dynamic (NTK), yarn, llama3; equal to transformers 5.x's `ROPE_INIT_FUNCTIONS` for "
               "the same parameters",
    checks=SCALED_ROPE_INV_FREQ_CHECKS,
    main=[
        unseen_like(find(SCALED_ROPE_INV_FREQ_CHECKS, SCALED, "default_head_dim_8"), scaled(HEAD_DIM, BASE, "default"),
                    "default, for head_dim and base drawn for this submission", id="main_default_v2"),
        unseen_like(find(SCALED_ROPE_INV_FREQ_CHECKS, SCALED, "linear_factor_4"),
                    scaled(HEAD_DIM, BASE, "linear", FACTOR),
                    "linear, for head_dim, base and factor drawn for this submission", id="main_linear_v2"),
        unseen_like(find(SCALED_ROPE_INV_FREQ_CHECKS, SCALED, "yarn_factor_4"),
                    scaled(HEAD_DIM, 10000.0, "yarn", FACTOR, L0),
                    "yarn, for head_dim, factor and L0 drawn for this submission", id="main_yarn_v2"),
    ],
    hints=(
        "validation first: rope_type among the five; head_dim positive and even; factor >= 1; "
        "original_max_position_embeddings given for dynamic, yarn and llama3; no key in params that the rope_type "
        "does not use.",
        "linear divides every theta_i by the factor. dynamic recomputes the base, "
        "base·(s·L/L0 - (s - 1))^(d/(d-2)) with L = max(seq_len, L0) (L = L0 without seq_len). Both return the "
        "attention factor 1.0.",
        "yarn blends theta/s and theta with yarn_ramp (1 = interpolate); its attention factor is 0.1·ln(s) + 1 "
        "unless params give one. llama3 compares each wavelength 2·pi/theta_i with L0/low_freq_factor and "
        "L0/high_freq_factor."
        " For `rope_type == \"yarn\"`: `ramp = yarn_ramp(...)` and the default `inv_freq`.",
        "key line: `inv_freq = inv_freq / factor * ramp + inv_freq * (1 - ramp)`",
    ),
    mistakes={
        "linear_multiplies": Mistake(
            "scaled_rope_inv_freq",
            "linear scaling multiplies the frequencies by the factor; it divides them (inv_freq / factor): position "
            "interpolation squeezes positions m -> m / s, so every pair turns s times slower",
            hints=(
                "position interpolation squeezes positions m into m / s, so that a longer text fits the trained range: "
                "every pair turns s times slower, never faster.",
                "what you return when `rope_type == \"linear\"`: the default frequencies `inv_freq` divided by the "
                "factor, and the attention factor 1.0.",
                "key line: `return inv_freq / factor, 1.0`",
            ),
            wrong="return inv_freq * factor, 1.0",
        ),
        "dynamic_no_exponent": Mistake(
            "scaled_rope_inv_freq",
            "dynamic NTK: the base is multiplied by alpha = factor*L/L0 - (factor-1) without the exponent d/(d-2); "
            "base' = base * alpha^(d/(d-2)) is what divides the slowest pair by exactly alpha",
            hints=(
                "dynamic NTK stretches the base so that the slowest pair turns exactly alpha times slower; that pair's "
                "frequency is base^(-(d-2)/d), so the base itself must grow by alpha^(d/(d-2)).",
                "where the new base is computed when `rope_type == \"dynamic\"`: alpha = factor·length/train_len - "
                "(factor - 1) with `length` = max(seq_len, L0), raised to d / (d - 2) before it multiplies the base "
                "(`d = head_dim`).",
                "key line: `base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))`",
            ),
            wrong="base = base * ((factor * length / train_len) - (factor - 1))",
        ),
        "dynamic_static": Mistake(
            "scaled_rope_inv_freq",
            "dynamic NTK ignores seq_len here (base * factor^(d/(d-2)), the static NTK-aware base); dynamic uses alpha "
            "= factor*L/L0 - (factor-1) with L = max(seq_len, L0), so alpha = 1 (no change) up to L0",
            hints=(
                "dynamic scaling follows the input: up to L0 tokens the model runs as trained (alpha = 1), and alpha "
                "grows with the length beyond that. A fixed factor is the static NTK-aware base.",
                "where the new base is computed when `rope_type == \"dynamic\"`: alpha uses the current `length` "
                "(max(seq_len, L0)) and the training length `train_len`, not the factor alone (`d = head_dim`).",
                "key line: `base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))`",
            ),
            wrong="base = base * factor ** (d / (d - 2))",
        ),
        "dynamic_no_clamp": Mistake(
            "scaled_rope_inv_freq",
            "dynamic NTK with seq_len below L0: use L = max(seq_len, L0); without the clamp alpha < 1 speeds the slow "
            "pairs up (and turns negative for short inputs), while the model should run as trained",
            hints=(
                "below the training length nothing needs stretching: a short input runs with the trained frequencies, "
                "so the length that sets alpha is never below L0.",
                "where `length` is chosen when `rope_type == \"dynamic\"`: L0 (`train_len`) without seq_len, and the "
                "larger of seq_len and L0 otherwise.",
                "key line: `length = train_len if seq_len is None else max(int(seq_len), train_len)`",
            ),
            wrong="length = train_len if seq_len is None else int(seq_len)",
        ),
        "yarn_reversed": Mistake(
            "scaled_rope_inv_freq",
            "YaRN's ramp is reversed: you interpolate the fast pairs (small index, many turns in L0) and keep the slow "
            "ones; the ramp is 0 (keep w) for the fast pairs and 1 (w / factor) for the slow ones",
            hints=(
                "the fast pairs turn many times within L0 and met every angle in training: they keep their frequency. "
                "The slow pairs, which turn less than once in L0, are interpolated, and the pairs between are blended.",
                "the blend when `rope_type == \"yarn\"`: `ramp` is 1 where a pair is interpolated, so it weights the "
                "divided frequencies `inv_freq / factor`, and 1 - ramp the kept ones.",
                "key line: `inv_freq = inv_freq / factor * ramp + inv_freq * (1 - ramp)`",
            ),
            wrong="inv_freq = inv_freq / factor * (1 - ramp) + inv_freq * ramp",
        ),
        "yarn_no_attention_factor": Mistake(
            "scaled_rope_inv_freq",
            "YaRN's attention factor is missing (you return 1.0): it is 0.1*ln(factor) + 1 unless params give "
            "attention_factor (or mscale and mscale_all_dim); cos and sin are multiplied by it",
            hints=(
                "YaRN also scales the logits by a temperature, 1/t > 1 for a factor above 1; it does so by multiplying "
                "cos and sin, and so q and k, by its attention factor. Returning 1.0 drops that correction.",
                "what you return when `rope_type == \"yarn\"`: the blended frequencies and the computed "
                "`attention_factor` (0.1·ln(factor) + 1 unless params give one), as a float.",
                "key line: `return inv_freq, float(attention_factor)`",
            ),
            wrong="return inv_freq, 1.0",
        ),
        "yarn_attention_squared": Mistake(
            "scaled_rope_inv_freq",
            "YaRN's attention factor is squared: (0.1*ln(factor) + 1)^2 is the scale of the logits (1/t), but the "
            "returned factor multiplies cos and sin, i.e. both q and k, so it is sqrt(1/t) = 0.1*ln(factor) + 1",
            hints=(
                "the factor multiplies cos and sin, so it reaches both q and k: their product, the logit, is scaled by "
                "its square. The logit's scale 1/t is therefore the square of what you return.",
                "what you return when `rope_type == \"yarn\"`: `attention_factor` as computed, 0.1·ln(factor) + 1 (or "
                "what params give), not squared.",
                "key line: `return inv_freq, float(attention_factor)`",
            ),
            wrong="return inv_freq, float(attention_factor) ** 2",
        ),
        "llama3_swapped": Mistake(
            "scaled_rope_inv_freq",
            "llama3: low_freq_factor and high_freq_factor are swapped: wavelengths above L0 / low_freq_factor are "
            "divided by the factor, those below L0 / high_freq_factor kept, and sigma = (L0/wavelength - "
            "low_freq_factor) / (high_freq_factor - low_freq_factor) blends between",
            hints=(
                "Llama 3 keeps the short wavelengths (below L0 / high_freq_factor), divides the long ones (above L0 / "
                "low_freq_factor) by the factor, and blends in between: the low factor bounds the long wavelengths.",
                "the final choice between the three cases, from `wavelength`, `train_len` and `low`, `high` (the "
                "low_freq_factor and high_freq_factor): divided when wavelength > train_len / low, kept when "
                "wavelength < train_len / high, `blended` between.",
                "key line: `inv_freq = torch.where(wavelength > train_len / low, inv_freq / factor, "
                "torch.where(wavelength < train_len / high, inv_freq, blended))`",
            ),
            wrong="inv_freq = torch.where(wavelength > train_len / high, inv_freq / factor, torch.where(wavelength "
                  "< train_len / low, inv_freq, blended))",
        ),
    },
)


EXERCISES = (ROPE_WAVELENGTHS, YARN_RAMP, SCALED_ROPE_INV_FREQ)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
