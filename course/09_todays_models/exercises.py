"""Chapter 9's exercises: rope_interleave, mla_query_key, mla_softmax_scale (DeepSeek-V3's MLA),
nope_layer_temperature, no_rope_layers, chunked_causal_mask (Llama 4), layer_rope_inv_freq, sliding_window_mask
(Gemma 3), attention_with_sinks (gpt-oss). The reference equals transformers 5.23.0 on tiny configurations
(tests/test_ch09_transformers.py proves it)."""

from grader.exercise import Exercise, declared
from grader.spec import SEED, Check, Mistake, draw_choice, draw_float, draw_int, find, same, unseen_like


def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


def arange(end, start=0):
    return {"t": "arange", "start": start, "end": end}


def drawn(*shape):
    """A tensor whose values are drawn for each submission."""
    return {"t": "randn", "shape": list(shape), "seed": SEED}


CUDA_DTYPES = ("float32", "bfloat16")  # as practitioners run these models: float32, and bfloat16 weights


def but(mistakes, *left_out):
    """An exercise's known mistakes without `left_out`: those whose answer on a check's input is the reference's, or
    another mistake's (a check names only the mistakes its input tells apart)."""
    return tuple(m for m in mistakes if m not in left_out)


# ---- rope_interleave -------------------------------------------------------------------------------
INTERLEAVE = "rope_interleave"
INTERLEAVE_MISTAKES = ("interleave_inverse", "interleave_odd_first", "interleave_no_transpose")

ROPE_INTERLEAVE_CHECKS = [
    Check(INTERLEAVE, "a (2, 3, 5, 8) tensor: pairs to the half layout", "call", {"args": [randn(2, 3, 5, 8)]},
          points=2, public=True, mistakes=INTERLEAVE_MISTAKES,
          hint="coordinate 2j goes to j and 2j + 1 to j + d/2: the even coordinates first, then the odd ones",
          id="pairs_to_half_2x3x5x8"),
    Check(INTERLEAVE, "DeepSeek-V3's rope width, d=64", "call", {"args": [randn(1, 2, 3, 64, seed=1)]}, public=True,
          mistakes=INTERLEAVE_MISTAKES, id="deepseek_rope_width_64"),
    Check(INTERLEAVE, "an odd last dimension raises ValueError naming d", "raises", {"args": [randn(2, 7)]},
          expect="raises", mentions=("d",), public=True, id="odd_d_raises_valueerror"),
    Check(INTERLEAVE, "runs on the device of x (checked on the meta device)", "meta_call",
          {"args": [randn(2, 3, 5, 8)]}, expect="ok", public=True,
          hint="build nothing on a fixed device: views of x (unflatten, transpose, flatten) stay on x.device",
          id="runs_x_device_checked_meta"),
    Check(INTERLEAVE, "a 2-D input, d=128", "call", {"args": [randn(6, 128, seed=4)]}, mistakes=INTERLEAVE_MISTAKES,
          id="two_d_input_d_128_hidden"),
    *[
        Check(INTERLEAVE, f"on CUDA in {dtype}", "call", {"args": [randn(2, 4, 16, 64)], "device": "cuda",
                                                          "dtype": dtype},
              cuda=True, hint="build nothing on a fixed device, and return x's dtype: a permutation computes nothing",
              id=f"cuda_{dtype}")
        for dtype in CUDA_DTYPES
    ],
]

ROPE_INTERLEAVE = Exercise(
    INTERLEAVE,
    convention="`(..., d)` → `(..., d)`: out[j] = x[2j], out[j + d/2] = x[2j + 1] (interleaved pairs to the half "
               "layout), as DeepSeek-V3's `view(..., d // 2, 2).transpose(4, 3)`",
    checks=ROPE_INTERLEAVE_CHECKS,
    main=[unseen_like(find(ROPE_INTERLEAVE_CHECKS, INTERLEAVE, "pairs_to_half_2x3x5x8"),
                      {"args": [drawn(draw_int(1, 3), draw_int(1, 4), draw_int(2, 6), draw_int(4, 64, step=2))]},
                      "pairs to the half layout, sizes drawn for this submission", id="main_pairs_to_half")],
    hints=(
        "DeepSeek's weights keep each rotated pair side by side; the rotation code wants all first coordinates of "
        "the pairs, then all second ones.",
        "view the last axis as pairs, `x.unflatten(-1, (d // 2, 2))` with `d = x.shape[-1]`, then swap the two "
        "last axes and flatten them again.",
        "check on d = 4: [x0, x1, x2, x3] becomes [x0, x2, x1, x3].",
        "key line: `return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)`",
    ),
    mistakes={
        "interleave_inverse": Mistake(
            INTERLEAVE,
            "you applied the inverse permutation (half layout to interleaved pairs): view the last axis as (d/2, 2), "
            "pairs first, before the transpose",
            hints=(
                "there are two permutations between the layouts, each the other's inverse; this one starts from pairs.",
                "the shape given to unflatten, with `d = x.shape[-1]`: the pair index first, then the coordinate "
                "within the pair, `(d // 2, 2)`.",
                "key line: `return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)`",
            ),
            wrong="return x.unflatten(-1, (2, d // 2)).transpose(-1, -2).flatten(-2)",
        ),
        "interleave_odd_first": Mistake(
            INTERLEAVE,
            "the odd coordinates came first: the half layout starts with the first coordinate of every pair, "
            "x[0], x[2], ..., then x[1], x[3], ...",
            hints=(
                "in the half layout the first half holds each pair's first coordinate, the second half its second.",
                "nothing is flipped inside a pair: after `x.unflatten(-1, (d // 2, 2))` with `d = x.shape[-1]`, "
                "only the two last axes are swapped.",
                "key line: `return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)`",
            ),
            wrong="return x.unflatten(-1, (d // 2, 2)).flip(-1).transpose(-1, -2).flatten(-2)",
        ),
        "interleave_no_transpose": Mistake(
            INTERLEAVE,
            "the tensor came back unchanged: a view as (d/2, 2) flattened again is the identity; swap the two last "
            "axes in between",
            hints=(
                "viewing the pairs and flattening them back moves nothing: the permutation is the swap in between.",
                "after `x.unflatten(-1, (d // 2, 2))` with `d = x.shape[-1]`, call `.transpose(-1, -2)` before "
                "`.flatten(-2)`.",
                "key line: `return x.unflatten(-1, (d // 2, 2)).transpose(-1, -2).flatten(-2)`",
            ),
            wrong="return x.unflatten(-1, (d // 2, 2)).flatten(-2)",
            no_work=True,
        ),
    },
)


# ---- mla_query_key ----------------------------------------------------------------------------------
MLA = "mla_query_key"
MLA_MISTAKES = ("mla_rope_part_first", "mla_interleave_missing", "mla_key_per_head", "mla_key_not_rotated",
                "mla_past_after")
# without a cache, the cached keys' place cannot be wrong; with one, a key expanded per head cannot be appended to
# the single-head cache (an error, not an answer)
MLA_NO_CACHE_MISTAKES = but(MLA_MISTAKES, "mla_past_after")
MLA_CACHE_MISTAKES = but(MLA_MISTAKES, "mla_key_per_head")


def mla(batch, heads, new, nope, rope, past=0, seed=0, base=10000.0):
    """mla_query_key's inputs (probe mla_rotary, which builds cos and sin of the new positions): q, k_nope over
    past + new keys, the new shared rotary key, the new positions, the cached rotary keys."""
    return {"q": randn(batch, heads, new, nope + rope, seed=seed),
            "k_nope": randn(batch, heads, past + new, nope, seed=seed + 1),
            "k_rot": randn(batch, 1, new, rope, seed=seed + 2), "positions": arange(past + new, start=past),
            "base": base, "past_k_rot": randn(batch, 1, past, rope, seed=seed + 5) if past else None}


MLA_QUERY_KEY_CHECKS = [
    Check(MLA, "3 heads, 5 tokens, nope 4 + rope 6, no cache", "mla_rotary", mla(2, 3, 5, 4, 6), points=2,
          public=True, mistakes=MLA_NO_CACHE_MISTAKES,
          hint="split each query head at N = q.shape[-1] - R (nope first), rope_interleave the rope parts, rotate "
               "them, and give every head the one rotated key",
          id="three_heads_no_cache"),
    Check(MLA, "5 new tokens after 3 cached ones", "mla_rotary", mla(2, 3, 5, 4, 6, past=3, seed=10), points=2,
          public=True, mistakes=MLA_CACHE_MISTAKES,
          hint="the cache holds rotated keys: concatenate past_k_rot before the new rotated key, along the tokens",
          id="five_after_three_cached"),
    Check(MLA, "one token decoded after 7 cached ones", "mla_rotary", mla(1, 4, 1, 8, 4, past=7, seed=20),
          public=True, mistakes=MLA_CACHE_MISTAKES, id="decode_one_after_seven"),
    Check(MLA, "DeepSeek-V3's head split, nope 128 + rope 64, 2 heads", "mla_rotary", mla(1, 2, 3, 128, 64, seed=30),
          public=True, mistakes=MLA_NO_CACHE_MISTAKES, id="deepseek_v3_split"),
    Check(MLA, "k_nope of the wrong width raises ValueError naming it", "raises",
          {"args": [randn(1, 2, 3, 10), randn(1, 2, 3, 5), randn(1, 1, 3, 4), randn(3, 4), randn(3, 4)]},
          expect="raises", mentions=("k_nope",), public=True, id="k_nope_wrong_width_raises"),
    Check(MLA, "runs on the device of q (checked on the meta device)", "meta_call",
          {"args": [randn(1, 2, 3, 10), randn(1, 2, 5, 4, seed=1), randn(1, 1, 3, 6, seed=2), randn(3, 6, seed=3),
                    randn(3, 6, seed=4), randn(1, 1, 2, 6, seed=5)]}, expect="ok", public=True,
          hint="build nothing on a fixed device: slices, cat and expand of the inputs stay on q.device",
          id="runs_q_device_checked_meta"),
    Check(MLA, "DeepSeek-V3's head split, 2 heads, 2 tokens after 500 cached", "mla_rotary",
          mla(1, 2, 2, 128, 64, past=500, seed=40), mistakes=MLA_CACHE_MISTAKES,
          id="deepseek_v3_split_after_500_cached_hidden"),
    # DeepseekV3RotaryEmbedding casts cos and sin to the activations' dtype, and the rotation runs in it
    Check(MLA, "bfloat16 inputs and tables (the CUDA check's dtype, on the CPU)", "mla_rotary",
          {**mla(2, 3, 4, 16, 8, past=5, seed=50), "dtype": "bfloat16"}, mistakes=MLA_CACHE_MISTAKES,
          hint="rotate in the inputs' dtype (or wider) and return query, key and cache in q's dtype",
          id="bfloat16_cpu_hidden"),
    *[
        Check(MLA, f"on CUDA in {dtype}", "mla_rotary",
              {**mla(1, 4, 8, 128, 64, past=24, seed=60), "device": "cuda", "dtype": dtype}, cuda=True,
              hint="build nothing on a fixed device, and return q's dtype", id=f"cuda_{dtype}")
        for dtype in CUDA_DTYPES
    ],
]

MLA_QUERY_KEY = Exercise(
    MLA,
    convention="`(q (B, H, L, N+R), k_nope (B, H, S, N), k_rot (B, 1, L, R), cos, sin (L, R), past_k_rot (B, 1, "
               "S-L, R) | None)` → `(query (B, H, L, N+R), key (B, H, S, N+R), k_rot cache (B, 1, S, R))`: the last R "
               "coordinates of q and the shared key rotated after `rope_interleave`, the key expanded to every head, "
               "as `DeepseekV3Attention`",
    checks=MLA_QUERY_KEY_CHECKS,
    main=[unseen_like(find(MLA_QUERY_KEY_CHECKS, MLA, "five_after_three_cached"),
                      {"q": drawn(2, 3, 4, 10), "k_nope": drawn(2, 3, draw_int(5, 9, name="keys"), 4),
                       "k_rot": drawn(2, 1, 4, 6), "positions": arange(same("keys"), start=same("keys", plus=-4)),
                       "base": draw_float(100.0, 1e6, log=True), "past_k_rot": drawn(2, 1, same("keys", plus=-4), 6)},
                      "4 new tokens after a drawn number of cached ones, values drawn for this submission",
                      id="main_cache_drawn")],
    hints=(
        "only a slice of each head carries the position: the last R coordinates of every query head, and one "
        "rotary key that all heads share. The rest of the head is left alone.",
        "split with `nope = q.shape[-1] - rope`, `rope = cos.shape[-1]`: `q_pass` is the first nope coordinates, "
        "`q_rot` the last rope ones. Both `q_rot` and `k_rot` come in interleaved pairs: `rope_interleave` them, "
        "then `apply_rope_half` with cos and sin.",
        "when `past_k_rot is not None`, the cached rotated keys go before the new ones (dim=-2); the key of every "
        "head is `torch.cat((k_nope, k_rot.expand(-1, k_nope.shape[1], -1, -1)), dim=-1)`.",
        "key line: `q_rot, k_rot = rope_interleave(q_rot), rope_interleave(k_rot)`",
    ),
    mistakes={
        "mla_rope_part_first": Mistake(
            MLA,
            "the rotation landed on the first R coordinates of each query head, as chapter 4's partial RoPE does on a "
            "whole head; in DeepSeek's layout the nope part comes first and the rope part is the last R coordinates",
            hints=(
                "MLA's query head is [nope part, rope part]: the position lives in its last qk_rope_head_dim "
                "coordinates, and the concatenation keeps that order.",
                "the split of `q` with `nope = q.shape[-1] - rope`: `q_pass` first, `q_rot` last, and the query "
                "rebuilt as `torch.cat((q_pass, q_rot), dim=-1)`.",
                "key line: `q_pass, q_rot = q[..., :nope], q[..., nope:]`",
            ),
            wrong="q_rot, q_pass = q[..., :rope], q[..., rope:]",
            also={"query = torch.cat((q_pass, q_rot), dim=-1)": "query = torch.cat((q_rot, q_pass), dim=-1)"},
        ),
        "mla_interleave_missing": Mistake(
            MLA,
            "the interleave permutation is missing: DeepSeek's rope parts come in pairs (x0, x1), (x2, x3), ...; "
            "rope_interleave them to the half layout before the half-layout rotation",
            hints=(
                "the cos and sin tables are in the half layout, but the weights that made q and k_rot interleave "
                "their pairs: one of them has to be rearranged.",
                "before `apply_rope_half`, pass both `q_rot` and `k_rot` through `rope_interleave`.",
                "key line: `q_rot, k_rot = rope_interleave(q_rot), rope_interleave(k_rot)`",
            ),
            wrong="q_rot, k_rot = q_rot, k_rot",
        ),
        "mla_key_per_head": Mistake(
            MLA,
            "the rotary key was copied to every head before it was rotated, so the cache you return holds H copies: "
            "rotate the one shared key (B, 1, L, R) and expand it only inside the key",
            hints=(
                "MLA's saving is that one rotary key per token serves every head; the cache keeps that one key.",
                "rotate `k_rot` as it comes, (B, 1, L, R), beside `q_rot`; the expand to k_nope's heads happens when "
                "the key is concatenated.",
                "key line: `q_rot, k_rot = apply_rope_half(q_rot, cos, sin), apply_rope_half(k_rot, cos, sin)`",
            ),
            wrong="q_rot, k_rot = apply_rope_half(q_rot, cos, sin), "
                  "apply_rope_half(k_rot.expand(-1, q.shape[1], -1, -1), cos, sin)",
        ),
        "mla_key_not_rotated": Mistake(
            MLA,
            "only the query's rope part was rotated: the shared rotary key must be rotated at its own position too, "
            "or the score is not a function of the distance",
            hints=(
                "RoPE's scores depend on the distance because both sides turn, the query by its position and the key "
                "by its own.",
                "the rotation line: `k_rot` goes through `apply_rope_half` with the same cos and sin as `q_rot`.",
                "key line: `q_rot, k_rot = apply_rope_half(q_rot, cos, sin), apply_rope_half(k_rot, cos, sin)`",
            ),
            wrong="q_rot, k_rot = apply_rope_half(q_rot, cos, sin), k_rot",
        ),
        "mla_past_after": Mistake(
            MLA,
            "the cached keys went after the new ones: the cache holds the earlier tokens, so past_k_rot comes first "
            "along the tokens",
            hints=(
                "keys are kept in the order of their positions: the cached tokens came before the new ones.",
                "when `past_k_rot is not None`, concatenate along dim=-2 with the cache first.",
                "key line: `k_rot = torch.cat((past_k_rot, k_rot), dim=-2)`",
            ),
            wrong="k_rot = torch.cat((k_rot, past_k_rot), dim=-2)",
        ),
    },
)


# ---- mla_softmax_scale -------------------------------------------------------------------------------
SCALE = "mla_softmax_scale"
SCALE_MISTAKES = ("mla_scale_rope_dim", "mla_scale_nope_dim", "mla_scale_v_dim", "mla_mscale_not_squared")
HEAD_SIZES = [draw_int(8, 256, step=8), draw_int(8, 128, step=8), draw_int(8, 256, step=8)]

MLA_SOFTMAX_SCALE_CHECKS = [
    Check(SCALE, "nope 32, rope 16, values 24, no YaRN", "number", {"args": [32, 16, 24]}, public=True,
          mistakes=but(SCALE_MISTAKES, "mla_mscale_not_squared"),
          hint="the scores are dot products over nope + rope coordinates: scale = (N + R) ** -0.5",
          id="sizes_32_16_24", twin={"args": HEAD_SIZES}),
    Check(SCALE, "the same with YaRN, factor 40, mscale_all_dim 1", "number", {"args": [32, 16, 24, 40.0, 1.0]},
          points=2, public=True, mistakes=SCALE_MISTAKES,
          hint="m = 0.1·mscale_all_dim·ln(factor) + 1 multiplies the scale twice",
          id="yarn_factor_40", twin={"args": [*HEAD_SIZES, draw_float(2.0, 64.0, digits=3), 1.0]}),
    Check(SCALE, "DeepSeek-V3: nope 128, rope 64, values 128, YaRN factor 40", "number",
          {"args": [128, 64, 128, 40.0, 1.0]}, public=True,
          # nope and values are both 128 here
          mistakes=but(SCALE_MISTAKES, "mla_scale_nope_dim", "mla_scale_v_dim"), id="deepseek_v3_yarn",
          twin={"args": [*HEAD_SIZES, draw_float(2.0, 64.0, digits=3), draw_float(0.5, 2.0, digits=3)]}),
    Check(SCALE, "factor 1: no YaRN factor even with mscale_all_dim set", "number", {"args": [32, 16, 24, 1.0, 1.0]},
          public=True, mistakes=but(SCALE_MISTAKES, "mla_mscale_not_squared"), id="factor_1_no_mscale",
          twin={"args": [*HEAD_SIZES, 1.0, draw_float(0.5, 2.0, digits=3)]}),
    Check(SCALE, "nope 64, rope 32, values 128, YaRN factor 16, mscale_all_dim 0.707", "number",
          {"args": [64, 32, 128, 16.0, 0.707]}, mistakes=SCALE_MISTAKES, id="mscale_all_dim_0_707_hidden",
          twin={"args": [*HEAD_SIZES, draw_float(2.0, 64.0, digits=3), draw_float(0.5, 2.0, digits=3)]}),
    Check(SCALE, "YaRN factor 40 with mscale_all_dim 0: no m", "number", {"args": [32, 16, 24, 40.0, 0.0]},
          mistakes=but(SCALE_MISTAKES, "mla_mscale_not_squared"), id="mscale_all_dim_0_hidden",
          twin={"args": [*HEAD_SIZES, draw_float(2.0, 64.0, digits=3), 0.0]}),
]

MLA_SOFTMAX_SCALE = Exercise(
    SCALE,
    convention="a float: (N + R)^(-1/2), times (0.1·mscale_all_dim·ln(factor) + 1)² when factor > 1 and "
               "mscale_all_dim ≠ 0 (`DeepseekV3Attention.scaling`)",
    checks=MLA_SOFTMAX_SCALE_CHECKS,
    main=[unseen_like(find(MLA_SOFTMAX_SCALE_CHECKS, SCALE, "yarn_factor_40"),
                      {"args": [*HEAD_SIZES, draw_float(2.0, 64.0, digits=3), draw_float(0.5, 2.0, digits=3)]},
                      "head sizes and YaRN's factor drawn for this submission", id="main_yarn_drawn")],
    hints=(
        "a softmax scale is one over the square root of the length of the dot products it scales; here the query "
        "and key heads hold a nope part and a rope part.",
        "`qk_head_dim = qk_nope_head_dim + qk_rope_head_dim`; the value heads' size plays no part in the scores.",
        "under YaRN (`factor > 1 and mscale_all_dim`), `mscale = 0.1 * mscale_all_dim * math.log(factor) + 1.0` "
        "multiplies the scale twice.",
        "key line: `scale = qk_head_dim ** -0.5`",
    ),
    mistakes={
        "mla_scale_rope_dim": Mistake(
            SCALE,
            "the scale used the rope part's size only: the scores are dot products over the whole query head, nope "
            "and rope parts, so scale = (qk_nope_head_dim + qk_rope_head_dim) ** -0.5",
            hints=(
                "the nope part and the rope part are added in the same dot product; its length is their sum.",
                "compute `qk_head_dim = qk_nope_head_dim + qk_rope_head_dim` and use it for the scale.",
                "key line: `scale = qk_head_dim ** -0.5`",
            ),
            wrong="scale = qk_rope_head_dim ** -0.5",
        ),
        "mla_scale_nope_dim": Mistake(
            SCALE,
            "the scale used the nope part's size only: the rope part belongs to the same dot product, so scale = "
            "(qk_nope_head_dim + qk_rope_head_dim) ** -0.5",
            hints=(
                "the decoupled rope part is appended to the query head, and the dot product runs over both parts.",
                "compute `qk_head_dim = qk_nope_head_dim + qk_rope_head_dim` and use it for the scale.",
                "key line: `scale = qk_head_dim ** -0.5`",
            ),
            wrong="scale = qk_nope_head_dim ** -0.5",
        ),
        "mla_scale_v_dim": Mistake(
            SCALE,
            "the scale used the value heads' size: the softmax scales the query-key dot products, whose length is "
            "qk_nope_head_dim + qk_rope_head_dim",
            hints=(
                "in MLA the value heads have their own size, which no score involves.",
                "compute `qk_head_dim = qk_nope_head_dim + qk_rope_head_dim` and use it for the scale.",
                "key line: `scale = qk_head_dim ** -0.5`",
            ),
            wrong="scale = v_head_dim ** -0.5",
        ),
        "mla_mscale_not_squared": Mistake(
            SCALE,
            "YaRN's factor m was applied once: DeepSeek multiplies the softmax scale by m twice (m for the query and "
            "m for the key)",
            hints=(
                "YaRN sharpens attention by a factor on the query and the same on the key; the score sees their "
                "product.",
                "when `factor > 1 and mscale_all_dim`, multiply the scale by `mscale` two times.",
                "key line: `scale = scale * mscale * mscale`",
            ),
            wrong="scale = scale * mscale",
        ),
    },
)


# ---- nope_layer_temperature ---------------------------------------------------------------------------
TEMP = "nope_layer_temperature"
TEMP_MISTAKES = ("temp_no_plus_one", "temp_no_floor", "temp_missing_one", "temp_scale_inside")


NOPE_LAYER_TEMPERATURE_CHECKS = [
    Check(TEMP, "positions 0..39, floor_scale 8, attn_scale 0.1", "call", {"args": [arange(40), 8, 0.1]}, points=2,
          public=True, mistakes=TEMP_MISTAKES,
          hint="tau(p) = 1 + attn_scale·log1p(floor((p + 1)/floor_scale)): exactly 1 up to position floor_scale - 2",
          id="positions_0_39_floor_8",
          twin={"args": [arange(draw_int(20, 80)), draw_int(2, 16), draw_float(0.05, 0.5, digits=3)]}),
    Check(TEMP, "Llama 4's values (8192, 0.1) at positions up to 200000", "call",
          {"args": [{"t": "randint", "low": 0, "high": 200000, "shape": [32], "seed": 0}, 8192, 0.1]}, public=True,
          mistakes=TEMP_MISTAKES, id="llama4_long_positions"),
    Check(TEMP, "decoding after a cache: positions 100..109, floor_scale 16", "call",
          {"args": [arange(110, start=100), 16, 0.25]}, public=True, mistakes=TEMP_MISTAKES,
          id="positions_after_cache",
          twin={"args": [arange(draw_int(110, 140), start=100), draw_int(2, 32), draw_float(0.05, 0.5, digits=3)]}),
    Check(TEMP, "runs on the device of positions (checked on the meta device)", "meta_call",
          {"args": [arange(40), 8, 0.1]}, expect="ok", public=True,
          hint="build nothing on a fixed device: arithmetic on positions stays on positions.device",
          id="runs_positions_device_checked_meta",
          twin={"args": [arange(draw_int(20, 2000)), draw_int(2, 64), 0.1]}),
    Check(TEMP, "positions up to 10 million, floor_scale 8192", "call",
          {"args": [{"t": "randint", "low": 0, "high": 10_000_000, "shape": [64], "seed": 3}, 8192, 0.1]},
          mistakes=but(TEMP_MISTAKES, "temp_no_plus_one"),  # (p + 1) a multiple of 8192: hardly ever drawn
          id="positions_up_to_10_million_hidden"),
    # the factor is computed in float32 from integer positions whatever the model's dtype (Llama4TextAttention):
    # no bfloat16 check
    Check(TEMP, "on CUDA (float32 factors from int64 positions)", "call",
          {"args": [{"t": "randint", "low": 0, "high": 200000, "shape": [256], "seed": 0}, 8192, 0.1],
           "device": "cuda"},
          cuda=True, hint="build nothing on a fixed device: arithmetic on positions stays on positions.device",
          id="cuda_float32"),
]

NOPE_LAYER_TEMPERATURE = Exercise(
    TEMP,
    convention="`(L,)` int → `(L,)` float32: 1 + attn_scale·log(1 + ⌊(p + 1)/floor_scale⌋), the query scale of "
               "Llama 4's NoPE layers (`Llama4TextAttention`)",
    checks=NOPE_LAYER_TEMPERATURE_CHECKS,
    main=[unseen_like(find(NOPE_LAYER_TEMPERATURE_CHECKS, TEMP, "llama4_long_positions"),
                      {"args": [{"t": "randint", "low": 0, "high": 100000, "shape": [24], "seed": SEED},
                                draw_int(64, 4096), draw_float(0.05, 0.5, digits=3)]},
                      "positions, floor_scale and attn_scale drawn for this submission", id="main_temperature")],
    hints=(
        "the factor stays 1 for the first positions and grows like a logarithm of how many blocks of floor_scale "
        "tokens the query has behind it.",
        "count the blocks with `torch.floor((positions.float() + 1.0) / floor_scale)`; call it `steps`.",
        "then `torch.log1p(steps)`, times attn_scale, plus 1.",
        "key line: `return torch.log1p(steps) * attn_scale + 1.0`",
    ),
    mistakes={
        "temp_no_plus_one": Mistake(
            TEMP,
            "the count of blocks used p instead of p + 1: transformers computes floor((p + 1)/floor_scale), so the "
            "factor first rises at position floor_scale - 1",
            hints=(
                "the count includes the query itself: position p is the (p + 1)-th token.",
                "the line that makes `steps`: add 1.0 to the positions before dividing by floor_scale.",
                "key line: `steps = torch.floor((positions.float() + 1.0) / floor_scale)`",
            ),
            wrong="steps = torch.floor(positions.float() / floor_scale)",
        ),
        "temp_no_floor": Mistake(
            TEMP,
            "the factor rises smoothly: Llama 4 counts whole blocks, floor((p + 1)/floor_scale), so it rises in steps",
            hints=(
                "the factor is constant within each block of floor_scale positions.",
                "the line that makes `steps`: wrap the division in `torch.floor`.",
                "key line: `steps = torch.floor((positions.float() + 1.0) / floor_scale)`",
            ),
            wrong="steps = (positions.float() + 1.0) / floor_scale",
        ),
        "temp_missing_one": Mistake(
            TEMP,
            "the factor is missing its 1: tau(p) = 1 + attn_scale·log1p(steps), so short positions keep their queries "
            "as they are (your factor is 0 there)",
            hints=(
                "the temperature multiplies the queries; on short inputs it must leave them unchanged.",
                "after `torch.log1p(steps) * attn_scale`, add 1.0.",
                "key line: `return torch.log1p(steps) * attn_scale + 1.0`",
            ),
            wrong="return torch.log1p(steps) * attn_scale",
        ),
        "temp_scale_inside": Mistake(
            TEMP,
            "attn_scale went inside the logarithm: it multiplies log1p(steps), tau = log1p(steps)·attn_scale + 1",
            hints=(
                "attn_scale sets how strongly the logarithm of the block count raises the factor.",
                "take `torch.log1p(steps)` first, then multiply by attn_scale and add 1.0.",
                "key line: `return torch.log1p(steps) * attn_scale + 1.0`",
            ),
            wrong="return torch.log1p(steps * attn_scale) + 1.0",
        ),
    },
)


# ---- no_rope_layers ---------------------------------------------------------------------------------
NOROPE = "no_rope_layers"
NOROPE_MISTAKES = ("nope_flags_inverted", "nope_first_layer")
LAYERS = [draw_int(5, 200), draw_int(2, 8)]

NO_ROPE_LAYERS_CHECKS = [
    Check(NOROPE, "12 layers, interval 4", "int_list", {"args": [12, 4]}, points=2, public=True,
          mistakes=NOROPE_MISTAKES,
          hint="1 marks a layer that uses RoPE: [1, 1, 1, 0, 1, 1, 1, 0, ...], a 0 where (i + 1) % interval == 0",
          id="twelve_layers_interval_4", twin={"args": LAYERS}),
    Check(NOROPE, "Llama 4 Scout: 48 layers, interval 4", "int_list", {"args": [48, 4]}, public=True,
          mistakes=NOROPE_MISTAKES, id="scout_48_layers", twin={"args": LAYERS}),
    Check(NOROPE, "interval 3, 10 layers", "int_list", {"args": [10, 3]}, public=True, mistakes=NOROPE_MISTAKES,
          id="ten_layers_interval_3", twin={"args": LAYERS}),
    Check(NOROPE, "interval 0 raises ValueError naming interval", "raises", {"args": [8, 0]}, expect="raises",
          mentions=("interval",), public=True, id="interval_0_raises"),
    Check(NOROPE, "an interval longer than the model: every layer keeps RoPE", "int_list", {"args": [5, 7]},
          mistakes=NOROPE_MISTAKES, id="interval_past_last_layer_hidden",
          twin={"args": [draw_int(2, 40), draw_int(41, 100)]}),
]

NO_ROPE_LAYERS = Exercise(
    NOROPE,
    convention="a list of num_hidden_layers ints: int((i + 1) % interval != 0); **1 = the layer uses RoPE**, 0 = a "
               "NoPE layer (`Llama4TextConfig.no_rope_layers`)",
    checks=NO_ROPE_LAYERS_CHECKS,
    main=[unseen_like(find(NO_ROPE_LAYERS_CHECKS, NOROPE, "twelve_layers_interval_4"), {"args": LAYERS},
                      "layers and interval drawn for this submission", id="main_layers")],
    hints=(
        "despite its name, the list marks the layers that keep RoPE with a 1; every interval-th layer, counting "
        "from one, gets a 0.",
        "layer i (from 0) is the (i + 1)-th: it is a NoPE layer when `(i + 1) % interval == 0`.",
        "one int per layer, in a list comprehension over `range(num_hidden_layers)`.",
        "key line: `return [int((i + 1) % interval != 0) for i in range(num_hidden_layers)]`",
    ),
    mistakes={
        "nope_flags_inverted": Mistake(
            NOROPE,
            "your 1s mark the NoPE layers: in transformers a 1 in no_rope_layers means the layer uses RoPE "
            "(use_rope = no_rope_layers[layer_idx])",
            hints=(
                "the attention layer reads its entry as use_rope: a 1 turns RoPE on.",
                "give 1 where `(i + 1) % interval != 0`, the layers that keep RoPE.",
                "key line: `return [int((i + 1) % interval != 0) for i in range(num_hidden_layers)]`",
            ),
            wrong="return [int((i + 1) % interval == 0) for i in range(num_hidden_layers)]",
        ),
        "nope_first_layer": Mistake(
            NOROPE,
            "the NoPE layers start at layer 0: Llama 4 counts from one, so the first NoPE layer is layer interval - 1 "
            "(layers 3, 7, 11, ... for interval 4)",
            hints=(
                "every interval-th layer counting from one: the fourth, the eighth, ...",
                "test `(i + 1) % interval`, not `i % interval`.",
                "key line: `return [int((i + 1) % interval != 0) for i in range(num_hidden_layers)]`",
            ),
            wrong="return [int(i % interval != 0) for i in range(num_hidden_layers)]",
        ),
    },
)


# ---- chunked_causal_mask -----------------------------------------------------------------------------
CHUNK = "chunked_causal_mask"
CHUNK_MISTAKES = ("chunk_past_ignored", "chunk_not_causal", "chunk_sliding")

CHUNKED_CAUSAL_MASK_CHECKS = [
    Check(CHUNK, "12 tokens, chunks of 4, no cache", "call", {"args": [12, 4]}, public=True,
          mistakes=but(CHUNK_MISTAKES, "chunk_past_ignored"),  # no cache: the offset is 0
          hint="query q may see key k when k <= q and k // chunk_size == q // chunk_size",
          id="twelve_tokens_chunks_4", twin={"args": [draw_int(5, 60), draw_int(2, 30)], "kwargs": {"past": 0}}),
    Check(CHUNK, "5 tokens after 7 cached, chunks of 4", "call", {"args": [5, 4], "kwargs": {"past": 7}}, points=2,
          public=True, mistakes=CHUNK_MISTAKES,
          hint="the new queries sit at positions past, past + 1, ...: compare them with the keys' positions 0 .. "
               "past + seq_len - 1",
          id="five_after_seven_chunks_4",
          twin={"args": [draw_int(2, 12), draw_int(2, 8)], "kwargs": {"past": draw_int(1, 30)}}),
    Check(CHUNK, "one chunk larger than everything (16 > 9 positions)", "call",
          {"args": [6, 16], "kwargs": {"past": 3}}, public=True,
          mistakes=but(CHUNK_MISTAKES, "chunk_sliding"),  # one chunk: a window of 16 is the causal mask too
          id="one_chunk_larger",
          twin={"args": [draw_int(2, 12), draw_int(50, 200)], "kwargs": {"past": draw_int(1, 30)}}),
    Check(CHUNK, "chunk_size 0 raises ValueError naming chunk_size", "raises", {"args": [4, 0]}, expect="raises",
          mentions=("chunk_size",), public=True, id="chunk_size_0_raises"),
    Check(CHUNK, "Llama 4's chunks of 8192: 6 queries across a chunk boundary after 8189 cached", "call",
          {"args": [6, 8192], "kwargs": {"past": 8189}}, mistakes=CHUNK_MISTAKES, id="chunk_8192_boundary_hidden",
          twin={"args": [draw_int(2, 12), draw_int(1024, 8192)], "kwargs": {"past": draw_int(1000, 9000)}}),
]

CHUNKED_CAUSAL_MASK = Exercise(
    CHUNK,
    convention="`(seq_len, past + seq_len)` bool, True = may attend: query q = past + i sees key k iff k ≤ q and "
               "⌊k/C⌋ = ⌊q/C⌋ (transformers' `chunked_causal_mask_function`)",
    checks=CHUNKED_CAUSAL_MASK_CHECKS,
    main=[unseen_like(find(CHUNKED_CAUSAL_MASK_CHECKS, CHUNK, "five_after_seven_chunks_4"),
                      {"args": [draw_int(2, 12), draw_int(2, 8)], "kwargs": {"past": draw_int(1, 30)}},
                      "lengths, chunk size and cache drawn for this submission", id="main_chunked")],
    hints=(
        "a query sees the keys that are not in its future and that lie in the same block of chunk_size positions "
        "as it does; with a cache, the new queries come after the cached tokens.",
        "absolute positions: `q = torch.arange(past, past + seq_len)[:, None]` for the queries, `k = "
        "torch.arange(past + seq_len)[None, :]` for the keys.",
        "two conditions joined with &: `k <= q`, and equal chunk numbers, `k // chunk_size == q // chunk_size`.",
        "key line: `return (k <= q) & (k // chunk_size == q // chunk_size)`",
    ),
    mistakes={
        "chunk_past_ignored": Mistake(
            CHUNK,
            "the new queries were placed at positions 0, 1, ...: after a cache of past tokens they sit at past, past + "
            "1, ..., so start their arange at past",
            hints=(
                "with a cache, the first new token is token number past, not token 0.",
                "the queries' positions: an arange from past to past + seq_len.",
                "key line: `q = torch.arange(past, past + seq_len)[:, None]`",
            ),
            wrong="q = torch.arange(seq_len)[:, None]",
        ),
        "chunk_not_causal": Mistake(
            CHUNK,
            "your mask lets a query see the later tokens of its chunk: the chunked mask is causal too, k <= q",
            hints=(
                "the chunks only cut the past into blocks; the model still never sees its future.",
                "join `k <= q` to the same-chunk test with &.",
                "key line: `return (k <= q) & (k // chunk_size == q // chunk_size)`",
            ),
            wrong="return k // chunk_size == q // chunk_size",
        ),
        "chunk_sliding": Mistake(
            CHUNK,
            "you built a sliding window (q - k < chunk_size): Llama 4's chunks are fixed blocks, so the first query of "
            "a chunk sees only itself, whatever came just before",
            hints=(
                "a chunk starts at a multiple of chunk_size, whatever the query's position: the boundary does not move "
                "with the query.",
                "compare chunk numbers, `k // chunk_size == q // chunk_size`, instead of the distance.",
                "key line: `return (k <= q) & (k // chunk_size == q // chunk_size)`",
            ),
            wrong="return (k <= q) & (q - k < chunk_size)",
        ),
    },
)


# ---- layer_rope_inv_freq ------------------------------------------------------------------------------
GEMMA = "layer_rope_inv_freq"
GEMMA_MISTAKES = ("gemma_bases_swapped", "gemma_factor_on_local", "gemma_factor_multiplied", "gemma_factor_ignored")
GEMMA_TYPES = ["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"]


def gemma(head_dim, global_base, local_base, factor, types=GEMMA_TYPES):
    return {"args": [list(types), head_dim, global_base, local_base, factor]}


LAYER_ROPE_INV_FREQ_CHECKS = [
    Check(GEMMA, "local, local, global, local; head_dim 16, bases 1e6 and 1e4, factor 8", "call",
          gemma(16, 1e6, 1e4, 8.0), points=2, public=True, mistakes=GEMMA_MISTAKES,
          hint="sliding_attention: local_base^(-2i/d); full_attention: global_base^(-2i/d) / global_factor",
          id="gemma3_pattern_16",
          twin={"args": [GEMMA_TYPES, draw_int(4, 64, step=2), draw_float(1e5, 1e7, log=True),
                         draw_float(1e3, 1e5, log=True), draw_float(2.0, 16.0, digits=3)]}),
    Check(GEMMA, "Gemma 3's six-layer pattern, head_dim 256", "call",
          gemma(256, 1e6, 1e4, 8.0, types=["sliding_attention"] * 5 + ["full_attention"]), public=True,
          mistakes=GEMMA_MISTAKES, id="gemma3_six_layers_256",
          twin={"args": [["sliding_attention"] * 5 + ["full_attention"], draw_choice(128, 256),
                         draw_float(1e5, 1e7, log=True), draw_float(1e3, 1e5, log=True),
                         draw_float(2.0, 16.0, digits=3)]}),
    Check(GEMMA, "factor 1 (the 1B model): only the bases differ", "call", gemma(32, 1e6, 1e4, 1.0), public=True,
          mistakes=("gemma_bases_swapped",), id="factor_1_only_bases",
          twin={"args": [GEMMA_TYPES, draw_int(4, 64, step=2), draw_float(1e5, 1e7, log=True),
                         draw_float(1e3, 1e5, log=True), 1.0]}),
    Check(GEMMA, "an unknown layer type raises ValueError naming it", "raises",
          gemma(16, 1e6, 1e4, 8.0, types=["sliding_attention", "chunked_attention"]), expect="raises",
          mentions=("chunked_attention",), public=True, id="unknown_type_raises"),
    Check(GEMMA, "a global layer first, head_dim 128", "call",
          gemma(128, 1e6, 1e4, 8.0, types=["full_attention", "sliding_attention"] * 3), mistakes=GEMMA_MISTAKES,
          id="global_first_head_dim_128_hidden",
          twin={"args": [["full_attention", "sliding_attention"] * 3, draw_choice(64, 128, 256),
                         draw_float(1e5, 1e7, log=True), draw_float(1e3, 1e5, log=True),
                         draw_float(2.0, 16.0, digits=3)]}),
]

LAYER_ROPE_INV_FREQ = Exercise(
    GEMMA,
    convention="a list of `(head_dim/2,)` float32 tensors, one per layer: local_base^(-2i/d) for "
               "`\"sliding_attention\"`, global_base^(-2i/d)/global_factor for `\"full_attention\"` (Gemma 3)",
    checks=LAYER_ROPE_INV_FREQ_CHECKS,
    main=[unseen_like(find(LAYER_ROPE_INV_FREQ_CHECKS, GEMMA, "gemma3_pattern_16"),
                      {"args": [GEMMA_TYPES, draw_int(4, 64, step=2), draw_float(1e5, 1e7, log=True),
                                draw_float(1e3, 1e5, log=True), draw_float(2.0, 16.0, digits=3)]},
                      "head_dim, bases and factor drawn for this submission", id="main_gemma")],
    hints=(
        "two ladders of frequencies, chapter 4's formula with two bases; the global one is also divided by the "
        "linear factor, as chapter 5's position interpolation.",
        "`exponents = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim`; `local = 1.0 / local_base ** "
        "exponents`; `global_` the same with global_base, divided by global_factor.",
        "a dict from the layer type to its ladder, `tables`, then one entry per layer.",
        "key line: `global_ = 1.0 / global_base ** exponents / global_factor`",
    ),
    mistakes={
        "gemma_bases_swapped": Mistake(
            GEMMA,
            "the bases are swapped: Gemma 3's sliding-window (local) layers use the small base, the global layers the "
            "large one",
            hints=(
                "a local layer only sees a short window, so it keeps the short wavelengths of the small base; the "
                "global layers need long ones.",
                "the dict `tables`: `\"sliding_attention\"` maps to `local`, `\"full_attention\"` to `global_`.",
                "key line: `tables = dict(sliding_attention=local, full_attention=global_)`",
            ),
            wrong="tables = dict(sliding_attention=global_, full_attention=local)",
        ),
        "gemma_factor_on_local": Mistake(
            GEMMA,
            "the local layers were scaled too: Gemma 3's linear factor applies to the global layers only "
            "(rope_parameters[\"full_attention\"])",
            hints=(
                "the scaling extends the context of the layers that see all of it; a sliding window never needs it.",
                "`local` is `1.0 / local_base ** exponents`, with no factor.",
                "key line: `local = 1.0 / local_base ** exponents`",
            ),
            wrong="local = 1.0 / local_base ** exponents / global_factor",
        ),
        "gemma_factor_multiplied": Mistake(
            GEMMA,
            "the factor multiplied the frequencies: linear scaling divides them (positions interpolated, wavelengths "
            "longer), theta_i / factor",
            hints=(
                "position interpolation squeezes positions by the factor, which slows every pair down.",
                "divide `1.0 / global_base ** exponents` by global_factor.",
                "key line: `global_ = 1.0 / global_base ** exponents / global_factor`",
            ),
            wrong="global_ = 1.0 / global_base ** exponents * global_factor",
        ),
        "gemma_factor_ignored": Mistake(
            GEMMA,
            "the global layers' linear factor is missing: divide their frequencies by global_factor",
            hints=(
                "the released Gemma 3 models scale their global layers' RoPE linearly, on top of the large base.",
                "`global_` is `1.0 / global_base ** exponents`, divided by global_factor.",
                "key line: `global_ = 1.0 / global_base ** exponents / global_factor`",
            ),
            wrong="global_ = 1.0 / global_base ** exponents",
        ),
    },
)


# ---- sliding_window_mask -----------------------------------------------------------------------------
WINDOW = "sliding_window_mask"
WINDOW_MISTAKES = ("window_one_too_wide", "window_past_ignored", "window_not_causal")

SLIDING_WINDOW_MASK_CHECKS = [
    Check(WINDOW, "10 tokens, window 4, no cache", "call", {"args": [10, 4]}, public=True,
          mistakes=but(WINDOW_MISTAKES, "window_past_ignored"),  # no cache: the offset is 0
          hint="query q sees key k when q - window < k <= q: itself and the window - 1 tokens before",
          id="ten_tokens_window_4", twin={"args": [draw_int(5, 60), draw_int(2, 30)], "kwargs": {"past": 0}}),
    Check(WINDOW, "4 tokens after 6 cached, window 3", "call", {"args": [4, 3], "kwargs": {"past": 6}}, points=2,
          public=True, mistakes=WINDOW_MISTAKES,
          hint="the new queries sit at positions past, past + 1, ...", id="four_after_six_window_3",
          twin={"args": [draw_int(2, 12), draw_int(2, 8)], "kwargs": {"past": draw_int(1, 30)}}),
    Check(WINDOW, "window 0 raises ValueError naming window", "raises", {"args": [4, 0]}, expect="raises",
          mentions=("window",), public=True, id="window_0_raises"),
    Check(WINDOW, "gpt-oss's window of 128: 5 queries after 300 cached", "call",
          {"args": [5, 128], "kwargs": {"past": 300}}, mistakes=WINDOW_MISTAKES, id="window_128_after_300_hidden",
          twin={"args": [draw_int(2, 12), draw_int(64, 1024)], "kwargs": {"past": draw_int(1100, 4000)}}),
]

SLIDING_WINDOW_MASK = Exercise(
    WINDOW,
    convention="`(seq_len, past + seq_len)` bool, True = may attend: query q = past + i sees key k iff q − W < k ≤ q "
               "(transformers' `sliding_window_causal_mask_function`)",
    checks=SLIDING_WINDOW_MASK_CHECKS,
    main=[unseen_like(find(SLIDING_WINDOW_MASK_CHECKS, WINDOW, "four_after_six_window_3"),
                      {"args": [draw_int(2, 12), draw_int(2, 8)], "kwargs": {"past": draw_int(1, 30)}},
                      "lengths, window and cache drawn for this submission", id="main_window")],
    hints=(
        "a query sees itself and the tokens just before it, as many as the window holds in all, and nothing of its "
        "future.",
        "the positions as in the chunked mask: `q = torch.arange(past, past + seq_len)[:, None]`, `k = "
        "torch.arange(past + seq_len)[None, :]`.",
        "transformers writes the window as `kv_idx > q_idx - sliding_window`: join `k > q - window` and `k <= q`.",
        "key line: `return (k <= q) & (k > q - window)`",
    ),
    mistakes={
        "window_one_too_wide": Mistake(
            WINDOW,
            "your window holds window + 1 tokens: transformers keeps k > q - window, the query and the window - 1 "
            "tokens before it",
            hints=(
                "count the tokens a query sees: the window is that count, the query included.",
                "the lower bound is strict: `k > q - window`.",
                "key line: `return (k <= q) & (k > q - window)`",
            ),
            wrong="return (k <= q) & (k >= q - window)",
        ),
        "window_past_ignored": Mistake(
            WINDOW,
            "the new queries were placed at positions 0, 1, ...: after a cache of past tokens they sit at past, past + "
            "1, ...",
            hints=(
                "with a cache, the first new token is token number past.",
                "the queries' positions: an arange from past to past + seq_len.",
                "key line: `q = torch.arange(past, past + seq_len)[:, None]`",
            ),
            wrong="q = torch.arange(seq_len)[:, None]",
        ),
        "window_not_causal": Mistake(
            WINDOW,
            "your window reaches into the future: a decoder's sliding window is causal, q - window < k <= q",
            hints=(
                "the window slides behind the query, never ahead of it.",
                "the upper bound is the query itself: `k <= q`.",
                "key line: `return (k <= q) & (k > q - window)`",
            ),
            wrong="return (k < q + window) & (k > q - window)",
        ),
    },
)


# ---- attention_with_sinks ----------------------------------------------------------------------------
SINKS = "attention_with_sinks"
SINKS_MISTAKES = ("sinks_ignored", "sink_first", "sink_scaled")  # those the values show; the device's below


def sinks(batch, heads, new, keys, dim, mask, scaling, seed=0):
    return {"args": [randn(batch, heads, new, dim, seed=seed), randn(batch, heads, keys, dim, seed=seed + 1),
                     randn(batch, heads, keys, dim, seed=seed + 2), randn(heads, seed=seed + 3), mask, scaling]}


ATTENTION_WITH_SINKS_CHECKS = [
    Check(SINKS, "3 heads, 4 queries after 2 cached keys, causal", "call",
          sinks(2, 3, 4, 6, 8, {"t": "causal_mask", "q": 4, "k": 6}, 0.35), points=2, public=True,
          mistakes=SINKS_MISTAKES,
          hint="append each head's sink logit as one more column, softmax over S + 1 columns, drop that column",
          id="three_heads_causal"),
    Check(SINKS, "no mask", "call", sinks(1, 2, 5, 5, 4, None, 0.5, seed=10), public=True, mistakes=SINKS_MISTAKES,
          id="no_mask"),
    Check(SINKS, "a random mask (every query keeps its first key)", "call",
          sinks(2, 2, 3, 7, 4, {"t": "random_bool_mask", "shape": [3, 7], "seed": 5}, 0.5, seed=20), public=True,
          mistakes=SINKS_MISTAKES, hint="masked scores are -inf before the softmax; the sink column is never masked",
          id="random_mask"),
    Check(SINKS, "scaling 1: the sink is not scaled anyway", "call", sinks(1, 2, 3, 3, 4, None, 1.0, seed=30),
          public=True, mistakes=but(SINKS_MISTAKES, "sink_scaled"), id="scaling_1"),
    Check(SINKS, "runs on the device of q (checked on the meta device)", "meta_call",
          sinks(1, 2, 3, 5, 4, {"t": "causal_mask", "q": 3, "k": 5}, 0.5), expect="ok", public=True,
          mistakes=("sink_column_on_cpu",),
          hint="build nothing on a fixed device: the sink column comes from sinks itself (reshape, expand)",
          id="runs_q_device_checked_meta"),
    Check(SINKS, "16 queries over 64 keys, head_dim 32, causal", "call",
          sinks(1, 4, 16, 64, 32, {"t": "causal_mask", "q": 16, "k": 64}, 32 ** -0.5, seed=40),
          mistakes=SINKS_MISTAKES, id="sixteen_queries_64_keys_hidden"),
    # gpt-oss's eager_attention_forward runs in the model's dtype: scores, sinks, softmax and all
    Check(SINKS, "bfloat16 throughout, as gpt-oss computes it (the CUDA check's dtype, on the CPU)", "call",
          {**sinks(2, 4, 8, 24, 16, {"t": "causal_mask", "q": 8, "k": 24}, 0.25, seed=50), "dtype": "bfloat16"},
          mistakes=but(SINKS_MISTAKES, "sink_scaled"),  # a sink scaled by 0.25 stays within bfloat16's tolerance
          hint="return q's dtype: compute in it (or wider) and cast the output back",
          id="bfloat16_cpu_hidden"),
    *[
        Check(SINKS, f"on CUDA in {dtype}", "call",
              {**sinks(2, 8, 32, 64, 64, {"t": "causal_mask", "q": 32, "k": 64}, 0.125), "device": "cuda",
               "dtype": dtype},
              cuda=True, hint="build nothing on a fixed device, and return q's dtype", id=f"cuda_{dtype}")
        for dtype in CUDA_DTYPES
    ],
]

ATTENTION_WITH_SINKS = Exercise(
    SINKS,
    convention="`(B, H, L, D)`: softmax over [q·k·scaling (masked to −∞), sink_h] per row, the sink's column dropped, "
               "times v (gpt-oss's `eager_attention_forward`)",
    checks=ATTENTION_WITH_SINKS_CHECKS,
    main=[unseen_like(find(ATTENTION_WITH_SINKS_CHECKS, SINKS, "three_heads_causal"),
                      {"args": [drawn(2, 3, 4, 8), drawn(2, 3, 6, 8), drawn(2, 3, 6, 8), drawn(3),
                                {"t": "causal_mask", "q": 4, "k": 6}, draw_choice(0.25, 0.35, 0.5)]},
                      "values drawn for this submission", id="main_sinks")],
    hints=(
        "the sink is one more key that every query of the head sees, with a learned score and no value: it takes "
        "part in the normalisation and is then thrown away.",
        "`scores` as usual (masked with `masked_fill(~mask, float(\"-inf\"))`); `sink` is the head's logit "
        "broadcast to (B, H, L, 1); `logits = torch.cat((scores, sink), dim=-1)`.",
        "subtract the row's maximum, softmax over the last axis, keep all columns but the last, then weight v.",
        "key line: `probs = torch.softmax(logits, dim=-1)[..., :-1]`",
    ),
    mistakes={
        "sinks_ignored": Mistake(
            SINKS,
            "the sink took no part in the softmax: normalise over the scores and the sink logit together, then drop "
            "the sink's column; each row then sums to less than 1",
            hints=(
                "with a sink, a head may give part of its attention to nothing: the keys' weights no longer sum to 1.",
                "the softmax runs over `logits`, the scores with the sink column appended, and the last column is "
                "dropped after it.",
                "key line: `probs = torch.softmax(logits, dim=-1)[..., :-1]`",
            ),
            wrong="probs = torch.softmax(scores, dim=-1)",
        ),
        "sink_first": Mistake(
            SINKS,
            "the sink column went first, so dropping the last column dropped a real key: append the sink after the "
            "scores, or drop the column you added",
            hints=(
                "the column you drop after the softmax must be the sink's.",
                "append `sink` after `scores` in the concatenation.",
                "key line: `logits = torch.cat((scores, sink), dim=-1)`",
            ),
            wrong="logits = torch.cat((sink, scores), dim=-1)",
        ),
        "sink_scaled": Mistake(
            SINKS,
            "the sink logit was multiplied by the scaling: gpt-oss scales q·k only and appends the learned sink as it "
            "is",
            hints=(
                "the sink is a learned logit, already on the scale of the scaled scores.",
                "build `sink` from `sinks` without the scaling.",
                "key line: `sink = sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)`",
            ),
            wrong="sink = (sinks * scaling).reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1)"
                  ".to(scores.dtype)",
        ),
        "sink_column_on_cpu": Mistake(
            SINKS,
            "the sink column was built from a tensor made on the CPU (torch.zeros without device=), so on a GPU that "
            "line mixes devices: build it from sinks itself, which lives where q does (reshape and expand)",
            hints=(
                "a tensor made from nothing lands on the default device, the CPU, whatever device the inputs are on.",
                "the line that makes `sink`: no `torch.zeros` there; reshape `sinks` to (1, H, 1, 1) and expand it to "
                "(B, H, L, 1).",
                "key line: `sink = sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)`",
            ),
            wrong="sink = (torch.zeros(q.shape[0], 1, q.shape[-2], 1) + sinks.reshape(1, -1, 1, 1)).to(scores.dtype)",
        ),
    },
)


EXERCISES = (ROPE_INTERLEAVE, MLA_QUERY_KEY, MLA_SOFTMAX_SCALE, NOPE_LAYER_TEMPERATURE, NO_ROPE_LAYERS,
             CHUNKED_CAUSAL_MASK, LAYER_ROPE_INV_FREQ, SLIDING_WINDOW_MASK, ATTENTION_WITH_SINKS)
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
