"""Chapter 5 checks: yarn_ramp, scaled_rope_inv_freq (the reference equals transformers 5.23.0's
modeling_rope_utils.ROPE_INIT_FUNCTIONS; tests/test_ch05.py proves it)."""

from grader.spec import Check, draw_choice, find, unseen_like

RAMP = "yarn_ramp"
SCALED = "scaled_rope_inv_freq"
PROBE = "inv_freq_and_factor"
# The slowest frequencies are ~1e-4 / factor and smaller: an absolute tolerance would let any mistake in
# exactly the pairs that long-context scaling is about pass. Relative only; float32 rounding is ~1e-6.
TOL = {"atol": 0.0, "rtol": 2e-5}
L31 = {"low_freq_factor": 1.0, "high_freq_factor": 4.0}  # Llama 3.1
YARN_MISTAKES = ("yarn_reversed", "yarn_no_attention_factor", "yarn_attention_squared")
RAMP_MISTAKES = ("ramp_reversed", "ramp_not_truncated")


def ramp(head_dim, base, train_len, **kw):
    return {"args": [head_dim, base, train_len], "kwargs": kw}


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


# docs/conventions.md's row of each exercise, in the order of the table (`python -m grader build` writes the
# table: this description beside the reference's signature)
CONVENTIONS = {
    "yarn_ramp": "YaRN's per-frequency ramp between interpolation and extrapolation (Peng et al., 2023)",
    "scaled_rope_inv_freq": ("`(inv_freq, attention_factor)` for `rope_type` default, linear (Chen et al., 2023), "
                             "dynamic (NTK), yarn, llama3; equal to transformers 5.x's `ROPE_INIT_FUNCTIONS` for "
                             "the same parameters"),
}

CHECKS = [
    # ---- yarn_ramp --------------------------------------------------------------------------------
    Check(RAMP, "matches the reference for head_dim=16, base=10000, L0=2048", "call", ramp(16, 10000.0, 2048),
          public=True, mistakes=RAMP_MISTAKES, id="matches_reference_head_dim_16_base_10000"),
    Check(RAMP, "odd head_dim raises ValueError naming it", "raises", ramp(7, 10000.0, 2048), expect="raises",
          mentions=("head_dim", "7"), public=True, id="odd_head_dim_raises_valueerror_naming"),
    Check(RAMP, "LLaMA 2's geometry: head_dim=128, base=10000, L0=4096", "call", ramp(128, 10000.0, 4096),
          points=2, mistakes=RAMP_MISTAKES, public=True, id="llama_2_s_geometry_head_dim_128_base"),
    Check(RAMP, "LLaMA 3's geometry: head_dim=128, base=500000, L0=8192", "call", ramp(128, 500000.0, 8192),
          mistakes=RAMP_MISTAKES, public=True, id="llama_3_s_geometry_head_dim_128_base"),
    Check(RAMP, "other thresholds: beta_fast=16, beta_slow=2", "call",
          ramp(64, 10000.0, 4096, beta_fast=16.0, beta_slow=2.0), mistakes=RAMP_MISTAKES,
          hint="corr(r) uses beta_fast for low and beta_slow for high", public=True,
          id="other_thresholds_beta_fast_16_beta_slow"),
    Check(RAMP, "truncate=False keeps low and high fractional", "call", ramp(32, 10000.0, 2048, truncate=False),
          mistakes=("ramp_reversed",), hint="floor and ceil only when truncate is True",
          public=True, id="truncate_false_low_high_fractional"),
    Check(RAMP, "high is clamped to head_dim - 1, as in YaRN's code (head_dim=16, base=500, L0=4096)", "call",
          ramp(16, 500.0, 4096), mistakes=("ramp_clamp_half", "ramp_reversed"),
          hint="clamp to [0, head_dim - 1]: ceil(corr(beta_slow)) = 9 here, more than the last pair index 7",
          public=True, id="high_clamped_head_dim_1_yarn_s_code_head"),
    Check(RAMP, "head_dim=0 raises ValueError naming it", "raises", ramp(0, 10000.0, 2048), expect="raises",
          mentions=("head_dim",), public=True, id="head_dim_0_raises_valueerror_naming"),
    # ---- scaled_rope_inv_freq --------------------------------------------------------------------
    match("default_head_dim_8",
          "default: base^(-2i/d), attention factor 1 (head_dim=8)", scaled(8, 10000.0, "default"),
          hint="1 / base ** (arange(0, d, 2) / d) in float32, and attention_factor 1.0"),
    match("linear_factor_4", "linear, factor 4 (head_dim=8)", scaled(8, 10000.0, "linear", 4.0),
          mistakes=("linear_multiplies",)),
    match("dynamic_above_l0",
          "dynamic with seq_len above L0 (seq_len=256, L0=64, factor 2)", scaled(8, 10000.0, "dynamic", 2.0, 64, 256),
          mistakes=("dynamic_no_exponent", "dynamic_static")),
    match("dynamic_below_l0", "dynamic with seq_len below L0 equals default (seq_len=48, L0=64)",
          scaled(8, 10000.0, "dynamic", 2.0, 64, 48), mistakes=("dynamic_no_clamp", "dynamic_static"),
          hint="L = max(seq_len, L0): up to L0 the model runs exactly as trained"),
    match("yarn_factor_4", "yarn, factor 4 (head_dim=16, L0=2048)", scaled(16, 10000.0, "yarn", 4.0, 2048),
          mistakes=YARN_MISTAKES),
    match("llama3_llama31_head_dim_16",
          "llama3 with Llama 3.1's parameters (head_dim=16)", scaled(16, 500000.0, "llama3", 8.0, 8192, **L31),
          mistakes=("llama3_swapped",)),
    raises("unknown_rope_type_raises",
           "an unknown rope_type raises ValueError naming it", scaled(8, 10000.0, "ntk", 2.0), ("ntk",)),
    raises("factor_below_1_raises",
           "factor < 1 raises ValueError naming it", scaled(8, 10000.0, "linear", 0.5), ("factor",)),
    match("default_base_500000", "default with LLaMA 3's base 500000 (head_dim=128)", scaled(128, 500000.0, "default")),
    match("linear_factor_8",
          "linear, factor 8 (head_dim=64)", scaled(64, 10000.0, "linear", 8.0), mistakes=("linear_multiplies",)),
    match("linear_code_llama_base", "linear with Code Llama's base 1e6 and factor 2.5", scaled(128, 1e6, "linear", 2.5),
          mistakes=("linear_multiplies",)),
    match("dynamic_without_seq_len",
          "dynamic without seq_len runs as at L0 (unscaled)", scaled(64, 10000.0, "dynamic", 4.0, 4096),
          mistakes=("dynamic_static",), hint="seq_len=None means L = L0, so alpha = 1"),
    match("dynamic_one_past_l0",
          "dynamic one token past L0", scaled(128, 10000.0, "dynamic", 4.0, 4096, 4097), mistakes=("dynamic_static",)),
    match("dynamic_8x_l0",
          "dynamic at 8 x L0 (head_dim=128, L0=4096, factor 4)", scaled(128, 10000.0, "dynamic", 4.0, 4096, 32768),
          points=2, mistakes=("dynamic_no_exponent", "dynamic_static")),
    match("dynamic_seq_len_1", "dynamic with seq_len=1 (far below L0)", scaled(64, 500000.0, "dynamic", 8.0, 8192, 1),
          hint="L = max(seq_len, L0); without the clamp alpha is negative here"),
    match("yarn_llama2_geometry",
          "yarn with LLaMA 2's geometry (head_dim=128, L0=4096, factor 4)", scaled(128, 10000.0, "yarn", 4.0, 4096),
          points=2, mistakes=YARN_MISTAKES),
    match("yarn_factor_16",
          "yarn, factor 16 (head_dim=64, L0=2048)", scaled(64, 10000.0, "yarn", 16.0, 2048), mistakes=YARN_MISTAKES),
    match("yarn_explicit_betas", "yarn with explicit beta_fast=16, beta_slow=2, attention_factor=1.0",
          scaled(64, 10000.0, "yarn", 4.0, 4096, beta_fast=16.0, beta_slow=2.0, attention_factor=1.0),
          mistakes=("yarn_reversed",),
          hint="params override the defaults: beta_fast/beta_slow replace 32/1, and an explicit attention_factor "
               "is returned as given"),
    match("yarn_no_truncate", "yarn with truncate=False", scaled(32, 10000.0, "yarn", 4.0, 2048, truncate=False),
          mistakes=YARN_MISTAKES, hint="pass truncate on to the ramp: no floor and ceil"),
    match("yarn_mscale", "yarn attention factor from mscale and mscale_all_dim",
          scaled(64, 10000.0, "yarn", 40.0, 4096, mscale=0.707, mscale_all_dim=1.0), mistakes=("yarn_reversed",),
          hint="with both given: (0.1*mscale*ln(factor) + 1) / (0.1*mscale_all_dim*ln(factor) + 1)"),
    match("yarn_factor_1", "yarn with factor 1 is unscaled", scaled(16, 10000.0, "yarn", 1.0, 2048)),
    match("llama3_llama31_head_dim_128", "llama3 with Llama 3.1's parameters (head_dim=128, base=500000)",
          scaled(128, 500000.0, "llama3", 8.0, 8192, **L31), points=2, mistakes=("llama3_swapped",)),
    match("llama3_other_bands", "llama3 with other bands (low_freq_factor=2, high_freq_factor=8)",
          scaled(64, 10000.0, "llama3", 4.0, 2048, low_freq_factor=2.0, high_freq_factor=8.0),
          mistakes=("llama3_swapped",)),
    raises("odd_head_dim_raises",
           "odd head_dim raises ValueError naming it", scaled(9, 10000.0, "linear", 2.0), ("head_dim", "9")),
    raises("yarn_without_l0_raises", "yarn without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 10000.0, "yarn", 4.0), ("original_max_position_embeddings",)),
    raises("dynamic_without_l0_raises", "dynamic without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 10000.0, "dynamic", 4.0, seq_len=4096), ("original_max_position_embeddings",)),
    raises("llama3_without_l0_raises", "llama3 without original_max_position_embeddings raises ValueError naming it",
           scaled(16, 500000.0, "llama3", 8.0, **L31), ("original_max_position_embeddings",)),
    raises("llama3_without_bands_raises",
           "llama3 without low_freq_factor / high_freq_factor raises ValueError naming them",
           scaled(16, 500000.0, "llama3", 8.0, 8192), ("low_freq_factor",)),
    raises("unused_parameter_raises",
           "a parameter the rope_type does not use raises ValueError naming it (a typo: beta_fats)",
           scaled(16, 10000.0, "yarn", 4.0, 2048, beta_fats=16.0), ("beta_fats",),
           hint="compare params with the keys the rope_type uses; an unknown key is a typo that would "
                "otherwise be silently ignored"),
    raises("yarn_factor_below_1_raises",
           "factor < 1 raises ValueError for yarn too", scaled(16, 10000.0, "yarn", 0.25, 2048), ("factor",)),
]

# ---- main checks: inputs drawn for each submission (grader/unseen.py) ---------------------------------
HEAD_DIM, BASE, FACTOR, L0 = (draw_choice(8, 16, 32, 64), draw_choice(10000.0, 500000.0), draw_choice(2.0, 4.0, 8.0),
                              draw_choice(1024, 2048, 4096))
CHECKS += [
    unseen_like(find(CHECKS, RAMP, "matches_reference_head_dim_16_base_10000"), ramp(HEAD_DIM, BASE, L0),
                "matches the reference for head_dim, base and L0 drawn for this submission", id="main_ramp"),
    unseen_like(find(CHECKS, SCALED, "default_head_dim_8"), scaled(HEAD_DIM, BASE, "default"),
                "default, for head_dim and base drawn for this submission", id="main_default"),
    unseen_like(find(CHECKS, SCALED, "linear_factor_4"), scaled(HEAD_DIM, BASE, "linear", FACTOR),
                "linear, for head_dim, base and factor drawn for this submission", id="main_linear"),
    unseen_like(find(CHECKS, SCALED, "yarn_factor_4"), scaled(HEAD_DIM, 10000.0, "yarn", FACTOR, L0),
                "yarn, for head_dim, factor and L0 drawn for this submission", id="main_yarn"),
]
