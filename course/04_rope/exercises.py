"""Chapter 4 checks: rope_inv_freq, rope_cos_sin, rotate_half, apply_rope, apply_rope_interleaved,
interleaved_to_half_perm, check_relative_property, RoPEAttention."""


from grader.checks.mutation import Catalogue
from grader.exercise import Exercise, declared
from grader.spec import SEED, Check, Mistake, draw_among, draw_float, draw_int, find, same, unseen_like


def randn(*shape, seed=0, scale=1.0):
    return {"t": "randn", "shape": list(shape), "seed": seed, "scale": scale}


def arange(end, start=0):
    return {"t": "arange", "start": start, "end": end}


def randint(high, *shape, seed=0):
    return {"t": "randint", "low": 0, "high": high, "shape": list(shape), "seed": seed}


def call(*args, **kwargs):
    return {"args": list(args), "kwargs": kwargs}


def drawn_base(lo=100.0, hi=100000.0):
    """A base drawn log-uniformly for each student (a twin's or a main check's)."""
    return draw_float(lo, hi, log=True)


def even(lo, hi):
    """An even head_dim in [lo, hi], drawn for each student."""
    return draw_int(lo, hi, step=2)


# float32 angles p * theta lose about p * 6e-8 radians (course contract): tables are allowed that much
# per position; rotated vectors (entries up to ~4) and attention outputs a few times more.
def pos_tol(max_position, per_position=6e-8):
    return {"per_position": per_position, "max_position": max_position}


DEVICE_HINT = ("build positions, frequencies and tables on the device of the input (device=x.device or "
               "position_ids.device), never on the default CPU")


def drawn(*shape, scale=1.0):
    return {"t": "randn", "shape": list(shape), "seed": SEED, "scale": scale}


EVEN = draw_int(2, 32, step=2)


# messages that more than one mistake shows (the same slip in two exercises)
_FREQ_I_OVER_D_MESSAGE = (
    "the exponent is i/d; it should be 2i/d (theta_i = base^(-2i/d), from torch.arange(0, d, 2) / d)"
)
_SIGN_MESSAGE = (
    "rotate_half has its minus sign on the wrong half: it must be cat(-x2, x1). Yours turns every plane the "
    "other way (-m·theta): still relative, but not the convention of the checkpoints"
)


# ---- rope_inv_freq -------------------------------------------------------------------------------
INV_FREQ_MISTAKES = ("inv_freq_i_over_d", "inv_freq_not_inverted")

ROPE_INV_FREQ_CHECKS = [
    Check("rope_inv_freq", "matches the reference for head_dim=8", "call", call(8), public=True,
          mistakes=INV_FREQ_MISTAKES, id="matches_reference_head_dim_8",
          twin=call(even(2, 64), base=drawn_base())),
    Check("rope_inv_freq", "odd head_dim raises ValueError naming it", "raises", call(7), expect="raises",
          mentions=("head_dim", "7"), public=True, hint="pairs of coordinates need an even head_dim: check it first",
          id="odd_head_dim_raises_valueerror_naming",
          twin={"params": call(draw_int(1, 255, step=2, name="d"), base=drawn_base()),
                "mentions": ("head_dim", same("d"))}),
    Check("rope_inv_freq", "head_dim=128 with LLaMA 3's base 500000", "call", call(128, base=500000.0), points=2,
          mistakes=INV_FREQ_MISTAKES, hint="use the base argument, not the constant 10000",
          public=True, id="head_dim_128_llama_3_s_base_500000",
          twin=call(even(66, 256), base=drawn_base(100000.0, 2000000.0))),
    # [1.0] whatever the base: no draw can make its answer unseen, so it gives feedback and earns no points
    Check("rope_inv_freq", "head_dim=2 has the single frequency 1", "call", call(2),
          public=True, id="head_dim_2_has_single_frequency_1", points=0),
    Check("rope_inv_freq", "head_dim=0 raises ValueError naming it", "raises", call(0), expect="raises",
          mentions=("head_dim",), public=True, id="head_dim_0_raises_valueerror_naming",
          twin=call(0, base=drawn_base())),
]

ROPE_INV_FREQ = Exercise(
    "rope_inv_freq",
    convention="`(head_dim/2,)`: θ_i = base^(−2i/d), float32",
    checks=ROPE_INV_FREQ_CHECKS,
    main=[
        unseen_like(find(ROPE_INV_FREQ_CHECKS, "rope_inv_freq", "matches_reference_head_dim_8"),
                    call(EVEN, base=drawn_base()),
                    "matches the reference for a head_dim drawn for this submission", id="main_inv_freq_v2"),
    ],
    hints=(
        "one frequency per plane (pair of coordinates), falling geometrically from 1 for the first plane to nearly "
        "1/base for the last.",
        "theta_i = 1 / base^(2i/d) for i = 0 .. d/2 - 1: the exponents 2i/d are `torch.arange(0, head_dim, 2)` "
        "divided by head_dim, in float32.",
        "check head_dim first: positive and even, or raise ValueError naming head_dim and its value.",
        "key line: `exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim`",
    ),
    mistakes={
        "inv_freq_i_over_d": Mistake(
            "rope_inv_freq",
            _FREQ_I_OVER_D_MESSAGE,
            hints=(
                "plane i uses the exponent 2i/d, with 2i the index of its first coordinate, so the slowest plane turns "
                "at nearly 1/base, not 1/sqrt(base).",
                "the exponents: the even indices 0, 2, 4, ... up to head_dim, divided by head_dim.",
                "key line: `exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim`",
            ),
            wrong="exponents = torch.arange(0, head_dim // 2, dtype=torch.float32, device=device) / head_dim",
        ),
        "inv_freq_not_inverted": Mistake(
            "rope_inv_freq",
            "these are base^(2i/d); the frequencies are their inverses, 1 / base^(2i/d)",
            hints=(
                "the frequencies fall from 1 to about 1/base: theta_i is the inverse of base^(2i/d).",
                "what you return from the `exponents`: one over base to that power.",
                "key line: `return 1.0 / (base ** exponents)`",
            ),
            wrong="return base ** exponents",
        ),
    },
)


# ---- rope_cos_sin --------------------------------------------------------------------------------
COS_SIN_MISTAKES = ("cos_sin_interleaved", "cos_sin_i_over_d")

ROPE_COS_SIN_CHECKS = [
    Check("rope_cos_sin", "position_ids (6,), head_dim=8: tables (6, 8)", "call", call(arange(6), 8), public=True,
          mistakes=COS_SIN_MISTAKES, tol=pos_tol(6), id="position_ids_6_head_dim_8_tables_6_8",
          twin=call(arange(draw_int(2, 6)), even(2, 64), base=drawn_base())),
    Check("rope_cos_sin", "built on the device of position_ids (checked on the meta device)", "meta_call",
          call(arange(5), 8), expect="ok", public=True, hint=DEVICE_HINT, id="built_device_position_ids_checked_meta",
          twin=call(arange(draw_int(1, 50)), even(2, 64))),
    Check("rope_cos_sin", "position_ids (batch, seq) = (2, 5), head_dim=16, base 500000", "call",
          call(randint(100, 2, 5), 16, base=500000.0), points=2, mistakes=COS_SIN_MISTAKES, tol=pos_tol(100),
          hint="index the angles with position_ids[..., None] so any leading shape works",
          public=True, id="position_ids_batch_seq_2_5_head_dim_16"),
    Check("rope_cos_sin", "positions 4000..4096 stay accurate to float32 rounding", "call",
          call(arange(4097, start=4000), 64), mistakes=COS_SIN_MISTAKES, tol=pos_tol(4097),
          public=True, id="positions_4000_4096_stay_accurate",
          # the case is the far positions: head_dim and base stay the public ones, where float32 frequencies (as
          # transformers computes them) keep the tolerance
          twin=call(arange(4097, start=draw_int(2000, 4000)), 64)),
    Check("rope_cos_sin", "odd head_dim raises ValueError naming it", "raises", call(arange(3), 5), expect="raises",
          mentions=("head_dim",), public=True, id="odd_head_dim_raises_valueerror_naming",
          twin=call(arange(draw_int(1, 50)), draw_int(1, 255, step=2), base=drawn_base())),
    Check("rope_cos_sin", "on CUDA: tables on the GPU, float32", "call", {**call(arange(9), 16), "device": "cuda"},
          cuda=True, hint=DEVICE_HINT, id="cuda_tables_gpu_float32",
          twin={**call(arange(draw_int(2, 12)), even(2, 64), base=drawn_base()), "device": "cuda"}),
]

ROPE_COS_SIN = Exercise(
    "rope_cos_sin",
    convention="`(cos, sin)`, each `position_ids.shape + (head_dim,)`, half layout, float32",
    checks=ROPE_COS_SIN_CHECKS,
    main=[
        unseen_like(find(ROPE_COS_SIN_CHECKS, "rope_cos_sin", "position_ids_6_head_dim_8_tables_6_8"),
                    call({"t": "arange", "start": 0, "end": draw_int(2, 20)}, EVEN, base=drawn_base()),
                    "tables for positions and a head_dim drawn for this submission", id="main_tables_v2",
                    tol=pos_tol(20)),
    ],
    hints=(
        "every position gets one angle per plane, position times frequency; the tables hold the cosine and sine of "
        "each angle, laid out as rotate_half pairs the coordinates.",
        "angles for any leading shape: position_ids as float32 with a new last axis, `position_ids[..., None]`, "
        "times rope_inv_freq (d/2,), broadcast to position_ids.shape + (d/2,).",
        "half layout: coordinates i and i + d/2 share plane i's angle, so the table holds the d/2 angles twice, end "
        "to end, `torch.cat((freqs, freqs), dim=-1)`; repeat_interleave would build the interleaved layout.",
        "build the frequencies on position_ids.device."
        " The frequencies are `inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)`.",
        "key line: `freqs = position_ids[..., None].float() * inv_freq`",
    ),
    mistakes={
        "cos_sin_interleaved": Mistake(
            "rope_cos_sin",
            "rotate_half pairs coordinate i with i + d/2 (half layout), but the cos/sin tables repeat each angle side "
            "by side (repeat_interleave, interleaved layout): the blocks are not rotations. Build them with "
            "torch.cat((freqs, freqs), dim=-1)",
            hints=(
                "rotate_half pairs coordinate i with coordinate i + d/2, so both must carry the same angle: the table "
                "holds the d/2 angles once for each half, end to end, not each angle twice side by side.",
                "where the angles `freqs` (..., L, d/2) become the (..., L, d) table: join two copies of `freqs` on "
                "the last axis; `repeat_interleave` builds the interleaved layout instead.",
                "key line: `emb = torch.cat((freqs, freqs), dim=-1)`",
            ),
            wrong="emb = freqs.repeat_interleave(2, dim=-1)",
        ),
        "cos_sin_i_over_d": Mistake(
            "rope_cos_sin",
            _FREQ_I_OVER_D_MESSAGE,
            hints=(
                "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so "
                "the slowest plane reaches nearly 1/base, not 1/sqrt(base).",
                "where the frequencies `inv_freq` come from: your rope_inv_freq already builds them from the even "
                "indices; call it with position_ids' device instead of writing the exponents again.",
                "key line: `inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)`",
            ),
            wrong="inv_freq = 1.0 / base ** (torch.arange(head_dim // 2, dtype=torch.float32, "
                  "device=position_ids.device) / head_dim)",
        ),
    },
)


# ---- rotate_half ---------------------------------------------------------------------------------
ROTATE_MISTAKES = ("rotate_half_sign", "rotate_half_no_minus", "rotate_half_neighbours")

ROTATE_HALF_CHECKS = [
    Check("rotate_half", "x of shape (2, 3, 4, 8)", "call", call(randn(2, 3, 4, 8)), public=True,
          mistakes=ROTATE_MISTAKES, id="x_shape_2_3_4_8"),
    Check("rotate_half", "a single pair: (a, b) -> (-b, a)", "call", call(randn(2, seed=1)), mistakes=ROTATE_MISTAKES,
          public=True, id="single_pair_b_b"),
    Check("rotate_half", "a float16 input keeps float16", "call", {**call(randn(3, 16, seed=2)), "dtype": "float16"},
          mistakes=ROTATE_MISTAKES, public=True, id="float16_input_float16"),
    Check("rotate_half", "an odd last dimension raises ValueError naming its size", "raises", call(randn(2, 5)),
          expect="raises", mentions=("5",), public=True, id="odd_last_dimension_raises_valueerror"),
]

ROTATE_HALF = Exercise(
    "rotate_half",
    convention="cat(−x2, x1) over the last dimension",
    checks=ROTATE_HALF_CHECKS,
    main=[
        unseen_like(find(ROTATE_HALF_CHECKS, "rotate_half", "x_shape_2_3_4_8"),
                    call(drawn(2, draw_int(1, 4), draw_int(1, 8), EVEN)),
                    "x of a shape drawn for this submission", id="main_rotate"),
    ],
    hints=(
        "x1 = x[..., :d/2] and x2 = x[..., d/2:]; the minus sign goes on x2, which moves to the front.",
        "an odd last dimension cannot be split in halves: raise ValueError naming its size.",
        "key line: `return torch.cat((-x2, x1), dim=-1)`",
    ),
    mistakes={
        "rotate_half_sign": Mistake(
            "rotate_half",
            _SIGN_MESSAGE,
            hints=(
                "rotate_half turns each plane (x1, x2) by +90 degrees: the pair becomes (-x2, x1), the minus on the "
                "half that moves to the front.",
                "the concatenation of the two halves x1 and x2: which half comes first, and which carries the minus.",
                "key line: `return torch.cat((-x2, x1), dim=-1)`",
            ),
            wrong="return torch.cat((x2, -x1), dim=-1)",
        ),
        "rotate_half_no_minus": Mistake(
            "rotate_half",
            "the minus sign is missing: rotate_half(x) = cat(-x2, x1), without it the map is no rotation",
            hints=(
                "a quarter turn of the plane (x1, x2) is (-x2, x1): without the minus the map swaps the halves, which "
                "is a reflection, not a rotation.",
                "the concatenation of the two halves x1 and x2: the second half, moved to the front, is negated.",
                "key line: `return torch.cat((-x2, x1), dim=-1)`",
            ),
            wrong="return torch.cat((x2, x1), dim=-1)",
        ),
        "rotate_half_neighbours": Mistake(
            "rotate_half",
            "that rotates neighbouring pairs (2i, 2i+1), GPT-J's rotate_every_two (interleaved layout); rotate_half "
            "pairs the two halves: cat(-x2, x1)",
            hints=(
                "the half layout pairs coordinate i with coordinate i + d/2: rotate_half works on the two halves of "
                "the last axis, not on neighbouring coordinates (that is GPT-J's interleaved layout).",
                "the return: concatenate the halves x1 and x2 on the last axis, the second half negated and first; no "
                "strided slices, no `torch.stack`.",
                "key line: `return torch.cat((-x2, x1), dim=-1)`",
            ),
            wrong="return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)",
        ),
    },
)


# ---- apply_rope ----------------------------------------------------------------------------------
APPLY_MISTAKES = ("apply_sign", "apply_rotate_half_no_minus", "apply_rotate_half_neighbours")

PARTIAL_HINT = "rotate x[..., :R] with R = cos.shape[-1] and concatenate x[..., R:] unchanged"

APPLY_ROPE_CHECKS = [
    Check("apply_rope", "tables (seq, head_dim) for x of shape (2, 3, 5, 8)", "rope_apply",
          {"x": randn(2, 3, 5, 8), "angles": randn(5, 4, seed=1, scale=3.0)}, public=True,
          mistakes=APPLY_MISTAKES, id="tables_seq_head_dim_x_shape_2_3_5_8"),
    Check("apply_rope", "tables (batch, seq, head_dim), shared by the heads", "rope_apply",
          {"x": randn(2, 4, 6, 16), "angles": randn(2, 6, 8, seed=1, scale=3.0)}, public=True, points=2,
          mistakes=APPLY_MISTAKES, hint="insert the head axis into (B, L, R) tables: cos[:, None] is (B, 1, L, R)",
          id="tables_batch_seq_head_dim_shared_heads"),
    Check("apply_rope", "partial rotary: the first 4 of 16 coordinates (GPT-NeoX)", "rope_apply",
          {"x": randn(2, 2, 5, 16), "angles": randn(5, 2, seed=1, scale=3.0)}, public=True, points=2,
          mistakes=APPLY_MISTAKES, hint=PARTIAL_HINT, id="partial_rotary_first_4_16_coordinates"),
    Check("apply_rope", "partial rotary: 32 of 80 coordinates (Phi-2's factor 0.4), batched tables", "rope_apply",
          {"x": randn(2, 2, 4, 80), "angles": randn(2, 4, 16, seed=1, scale=3.0)}, mistakes=APPLY_MISTAKES,
          hint=PARTIAL_HINT, public=True, id="partial_rotary_32_80_coordinates_phi_2_s"),
    Check("apply_rope", "bfloat16 input with float32 tables: the output stays bfloat16", "rope_apply",
          {"x": randn(2, 3, 5, 8), "angles": randn(5, 4, seed=1, scale=3.0), "dtype": "bfloat16"}, points=2,
          mistakes=("apply_no_cast",) + APPLY_MISTAKES,
          hint="cos and sin arrive in float32: bring them to x.dtype before multiplying (type promotion would "
               "otherwise turn the result into float32)",
          public=True, id="bfloat16_input_float32_tables_output"),
    Check("apply_rope", "float16 input with float32 tables (the CUDA check's dtype, on the CPU)", "rope_apply",
          {"x": randn(2, 4, 6, 16), "angles": randn(6, 8, seed=1, scale=3.0), "dtype": "float16"},
          mistakes=("apply_no_cast",) + APPLY_MISTAKES,
          hint="cos and sin arrive in float32: bring them to x.dtype before multiplying (type promotion would "
               "otherwise turn the result into float32)", public=True, id="float16_input_float32_tables_cpu"),
    Check("apply_rope", "tables wider than the head raise ValueError", "raises",
          call(randn(1, 1, 2, 4), randn(2, 8), randn(2, 8)), expect="raises", mentions=("8",),
          public=True, id="tables_wider_than_head_raise_valueerror"),
    Check("apply_rope", "on CUDA in float16", "rope_apply",
          {"x": randn(2, 4, 16, 64), "angles": randn(16, 32, seed=1, scale=3.0), "device": "cuda",
           "dtype": "float16"}, cuda=True, id="cuda_float16"),
]

APPLY_ROPE = Exercise(
    "apply_rope",
    convention="x·cos + rotate_half(x)·sin for x `(B, H, L, D)` and tables `(L, R)` or `(B, L, R)` broadcast "
               "over heads; R < D rotates the first R dimensions only (partial rotary)",
    checks=APPLY_ROPE_CHECKS,
    main=[
        unseen_like(find(APPLY_ROPE_CHECKS, "apply_rope", "tables_seq_head_dim_x_shape_2_3_5_8"),
                    {"x": drawn(2, draw_int(1, 4), draw_int(2, 9, name="l"), same("r", times=2)),
                     "angles": drawn(same("l"), draw_int(1, 8, name="r"), scale=3.0)},
                    "tables (seq, head_dim) for x drawn for this submission", id="main_apply"),
        unseen_like(find(APPLY_ROPE_CHECKS, "apply_rope", "partial_rotary_first_4_16_coordinates"),
                    {"x": drawn(2, draw_int(1, 4), draw_int(2, 9, name="l"), same("r", times=4)),
                     "angles": drawn(same("l"), draw_int(1, 4, name="r"), scale=3.0)},
                    "partial rotary (half of a head drawn for this submission)", id="main_partial"),
    ],
    hints=(
        "the formula on the rotated part x_r = x[..., :R]: x_r·cos + rotate_half(x_r)·sin; then concatenate "
        "x[..., R:] back on the last axis.",
        "broadcasting over the heads: (L, R) tables line up with x's last two axes as they are; (B, L, R) tables "
        "need a head axis between B and L, (B, 1, L, R).",
        "cos and sin arrive in float32: cast them to x.dtype first, or a bfloat16 x comes out as float32 (type "
        "promotion).",
        "key line: `cos, sin = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)`",
    ),
    mistakes={
        "apply_sign": Mistake(
            "apply_rope",
            "the rotation turns the wrong way (-m·theta): out = x * cos + rotate_half(x) * sin, plus, not minus; if "
            "your formula has the plus, your rotate_half has its minus sign on the wrong half (its own self-check says "
            "so)",
            hints=(
                "the rotation by +m·theta is x·cos + rotate_half(x)·sin, with a plus: with a minus every plane turns "
                "by -m·theta, which is still relative but not the convention the checkpoints were trained with.",
                "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
                "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the first half of `out` gains -x2·sin, "
                "the second half +x1·sin.",
                "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1); out[..., half:rot].addcmul_(x1, "
                "sin[..., half:])`",
            ),
            wrong="out[..., :half].addcmul_(x2, sin[..., :half])\n"
                  "out[..., half:rot].addcmul_(x1, sin[..., half:], value=-1)",
        ),
        "apply_rotate_half_no_minus": Mistake(
            "apply_rope",
            "the rotation inside is not a rotation: rotate_half(x) must be cat(-x2, x1), and this one has no minus "
            "sign. If you call your rotate_half, fix it first (its own self-check says so)",
            hints=(
                "rotate_half(x) is (-x2, x1): the half that moves to the front is negated. Without that minus the map "
                "swaps the halves, a reflection, and the result is no rotation.",
                "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
                "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the first half of `out` gains minus "
                "x2·sin. If you call your own rotate_half, its self-check shows the same fix.",
                "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1)`",
            ),
            wrong="out[..., :half].addcmul_(x2, sin[..., :half])",
        ),
        "apply_rotate_half_neighbours": Mistake(
            "apply_rope",
            "the rotation pairs neighbouring coordinates (2i, 2i+1), the interleaved layout, while the tables are for "
            "the half layout: rotate_half must be cat(-x2, x1) on the two halves. If you call your rotate_half, fix it "
            "first",
            hints=(
                "the tables are in the half layout, so the rotation must pair coordinate i with i + d/2, the two "
                "halves, not neighbouring coordinates 2i and 2i + 1.",
                "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
                "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the halves x1 and x2 feed the halves of "
                "`out`, with no strided slices. If you call your own rotate_half, fix it first.",
                "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1); out[..., half:rot].addcmul_(x1, "
                "sin[..., half:])`",
            ),
            wrong="out[..., 0:rot:2].addcmul_(x[..., 1:rot:2], sin[..., 0::2], value=-1)\n"
                  "out[..., 1:rot:2].addcmul_(x[..., 0:rot:2], sin[..., 1::2])",
        ),
        "apply_no_cast": Mistake(
            "apply_rope",
            "cos and sin are float32 and were not cast to x.dtype, so the output was promoted to float32: cast them "
            "with cos.to(x.dtype) before multiplying",
            hints=(
                "outputs keep the input's dtype: float32 tables times a bfloat16 x promote the product to float32.",
                "before the tables meet x: cast cos and sin to x's dtype.",
                "key line: `cos, sin = cos.to(x.dtype), sin.to(x.dtype)`",
            ),
            wrong="cos, sin = cos, sin",
        ),
    },
)


# ---- apply_rope_interleaved ----------------------------------------------------------------------
INTERLEAVED_MISTAKES = ("interleaved_half_layout", "interleaved_layout_mix", "interleaved_conjugate",
                        "interleaved_i_over_d")


def positions():
    return {"t": "arange", "start": 0, "end": same("l")}


APPLY_ROPE_INTERLEAVED_CHECKS = [
    Check("apply_rope_interleaved", "x (2, 3, 5, 8) at positions 0..4", "call", call(randn(2, 3, 5, 8), arange(5)),
          public=True, mistakes=INTERLEAVED_MISTAKES, id="x_2_3_5_8_positions_0_4"),
    Check("apply_rope_interleaved", "runs on the device of its input (checked on the meta device)", "meta_call",
          call(randn(1, 2, 3, 8), arange(3)), expect="ok", public=True, hint=DEVICE_HINT,
          id="runs_device_input_checked_meta_device"),
    Check("apply_rope_interleaved", "position_ids (batch, seq) and Code Llama's base 1e6", "call",
          call(randn(2, 2, 4, 16), randint(1000, 2, 4), base=1e6), points=2, mistakes=INTERLEAVED_MISTAKES,
          tol=pos_tol(1000, 3e-7), hint="(B, L) positions give (B, L, d/2) angles: insert the head axis",
          public=True, id="position_ids_batch_seq_code_llama_s_base"),
    Check("apply_rope_interleaved", "positions 4000..4096 stay accurate to float32 rounding", "call",
          call(randn(1, 2, 97, 32), arange(4097, start=4000)), mistakes=INTERLEAVED_MISTAKES, tol=pos_tol(4097, 3e-7),
          public=True, id="positions_4000_4096_stay_accurate"),
    Check("apply_rope_interleaved", "a bfloat16 input gives a bfloat16 output", "call",
          {**call(randn(2, 2, 6, 16), arange(6)), "dtype": "bfloat16"},
          hint="rotate in float32 and cast the result back to x.dtype",
          public=True, id="bfloat16_input_bfloat16_output"),
    Check("apply_rope_interleaved", "a float16 input gives a float16 output", "call",
          {**call(randn(2, 2, 6, 16, seed=3), arange(6)), "dtype": "float16"},
          hint="rotate in float32 and cast the result back to x.dtype", public=True, id="float16_input_float16_output"),
    Check("apply_rope_interleaved", "odd head_dim raises ValueError naming it", "raises",
          call(randn(1, 1, 2, 5), arange(2)), expect="raises", mentions=("head_dim",),
          public=True, id="odd_head_dim_raises_valueerror_naming"),
    Check("apply_rope_interleaved", "on CUDA in bfloat16", "call",
          {**call(randn(2, 4, 16, 64), arange(16)), "device": "cuda", "dtype": "bfloat16"}, cuda=True,
          id="cuda_bfloat16"),
]

APPLY_ROPE_INTERLEAVED = Exercise(
    "apply_rope_interleaved",
    convention="the interleaved layout: pairs (2i, 2i+1) rotated as complex numbers",
    checks=APPLY_ROPE_INTERLEAVED_CHECKS,
    main=[
        unseen_like(find(APPLY_ROPE_INTERLEAVED_CHECKS, "apply_rope_interleaved", "x_2_3_5_8_positions_0_4"),
                    call(drawn(2, draw_int(1, 4), draw_int(2, 9, name="l"), EVEN), positions()),
                    "x and positions drawn for this submission", id="main_interleaved"),
    ],
    hints=(
        "each neighbouring pair of coordinates is one complex number; rotating it by an angle is multiplying it by a "
        "complex number of modulus one.",
        "the complex view: reshape the last axis to (D/2, 2) and call `torch.view_as_complex` on float32 values "
        "(it needs a last axis of size 2, and float16 or bfloat16 must be upcast first).",
        "the rotation: `torch.polar(torch.ones_like(angles), angles)` is e^(i·angle). (B, L) positions give "
        "(B, L, D/2) angles, which need the head axis: (B, 1, L, D/2).",
        "back to real numbers: `torch.view_as_real(...)` gives (..., D/2, 2); flatten the last two axes and cast to "
        "x.dtype.",
        "key line: `return torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)`",
    ),
    mistakes={
        "interleaved_half_layout": Mistake(
            "apply_rope_interleaved",
            "that is the half layout (planes i, i + d/2); the interleaved layout rotates neighbouring pairs (2i, 2i+1) "
            "as complex numbers x_2i + i·x_2i+1",
            hints=(
                "the interleaved layout rotates neighbours: coordinates 2i and 2i + 1 form plane i, one complex number "
                "x_2i + i·x_2i+1, and the output keeps them side by side.",
                "how you read the pairs and write them back (with `head_dim = x.shape[-1]` and `rotation` = "
                "e^(i·angles)): reshape the last axis to (head_dim // 2, 2), real and imaginary part adjacent, and "
                "flatten the same way back; no halves, no rotate_half.",
                "key line: `pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2)); return "
                "torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)`",
            ),
            wrong="pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], 2, head_dim // 2).transpose(-1, -2)"
                  ".contiguous())\n"
                  "return torch.view_as_real(pairs * rotation).transpose(-1, -2).flatten(-2).to(x.dtype)",
        ),
        "interleaved_layout_mix": Mistake(
            "apply_rope_interleaved",
            "layout mismatch: the tables pair neighbours (repeat_interleave) but rotate_half pairs i with i + d/2, so "
            "the blocks are not rotations. Rotate the neighbouring pairs (2i, 2i+1) themselves, as complex numbers "
            "x_2i + i·x_2i+1",
            hints=(
                "a layout is a pairing and its tables together: neighbour-paired tables with rotate_half's halves "
                "rotate no plane. Here each neighbouring pair is one complex number, turned by one angle.",
                "how you read the pairs and write them back (with `head_dim = x.shape[-1]` and `rotation` = "
                "e^(i·angles)): the neighbours as complex numbers, `torch.view_as_complex` on a last axis of size 2, "
                "instead of rotate_half with repeated tables.",
                "key line: `pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2)); return "
                "torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)`",
            ),
            wrong="emb = angles.repeat_interleave(2, dim=-1)\n"
                  "return x * emb.cos().to(x.dtype) + rotate_half(x) * emb.sin().to(x.dtype)",
        ),
        "interleaved_conjugate": Mistake(
            "apply_rope_interleaved",
            "the rotation turns the wrong way: multiply by e^(+i·p·theta), torch.polar(ones, +angles)",
            hints=(
                "multiplying by e^(+i·p·theta) turns a pair forwards; its conjugate e^(-i·p·theta) turns it backwards, "
                "by -p·theta.",
                "the complex rotation built from the `angles`: modulus one, and the angles as they are, no minus.",
                "key line: `rotation = torch.polar(torch.ones_like(angles), angles)`",
            ),
            wrong="rotation = torch.polar(torch.ones_like(angles), -angles)",
        ),
        "interleaved_i_over_d": Mistake(
            "apply_rope_interleaved",
            _FREQ_I_OVER_D_MESSAGE,
            hints=(
                "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so "
                "the slowest plane reaches nearly 1/base, not 1/sqrt(base).",
                "where the frequencies `inv_freq` come from, for `head_dim = x.shape[-1]`: your rope_inv_freq already "
                "builds them right; call it on x's device instead of writing the exponents again.",
                "key line: `inv_freq = rope_inv_freq(head_dim, base, device=x.device)`",
            ),
            wrong="inv_freq = 1.0 / base ** (torch.arange(head_dim // 2, dtype=torch.float32, device=x.device) "
                  "/ head_dim)",
        ),
    },
)


# ---- interleaved_to_half_perm --------------------------------------------------------------------
INTERLEAVED_TO_HALF_PERM_CHECKS = [
    Check("interleaved_to_half_perm", "head_dim=8", "call", call(8), public=True, mistakes=("perm_inverse",),
          id="head_dim_8", twin=(call(even(2, 64)),) * 3),
    Check("interleaved_to_half_perm", "head_dim=128", "call", call(128), mistakes=("perm_inverse",),
          public=True, id="head_dim_128", twin=call(even(66, 2264))),
    Check("interleaved_to_half_perm", "odd head_dim raises ValueError naming it", "raises", call(9), expect="raises",
          mentions=("head_dim",), public=True, id="odd_head_dim_raises_valueerror_naming",
          twin=call(draw_int(1, 2001, step=2))),
]

INTERLEAVED_TO_HALF_PERM = Exercise(
    "interleaved_to_half_perm",
    convention="the permutation with apply_rope(x[..., perm]) == apply_rope_interleaved(x)[..., "
               "perm]",
    checks=INTERLEAVED_TO_HALF_PERM_CHECKS,
    main=[
        unseen_like(find(INTERLEAVED_TO_HALF_PERM_CHECKS, "interleaved_to_half_perm", "head_dim_8"),
                    call(even(2, 2400)),
                    "a head_dim drawn for this submission", id="main_perm_v2"),
    ],
    hints=(
        "position i of x[..., perm] reads x[perm[i]]: the first half reads the even indices 0, 2, 4, ..., the "
        "second half the odd ones.",
        "check head_dim: positive and even.",
        "key line: `return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))`",
    ),
    mistakes={
        "perm_inverse": Mistake(
            "interleaved_to_half_perm",
            "that is the inverse permutation (half to interleaved); x[..., perm] must put x[2i] at position i and "
            "x[2i+1] at i + d/2: perm = [0, 2, 4, ..., 1, 3, 5, ...]",
            hints=(
                "x[..., perm] reads: position i of the result takes x[perm[i]]. So perm lists where each new position "
                "reads from: first every even index, then every odd one. The other direction is the inverse "
                "permutation.",
                "the return: the even indices 0, 2, 4, ... followed by the odd ones 1, 3, 5, ..., each from "
                "`torch.arange` with step 2.",
                "key line: `return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))`",
            ),
            wrong="return torch.arange(head_dim).view(2, head_dim // 2).T.flatten()",
        ),
    },
)


# ---- check_relative_property ---------------------------------------------------------------------
GOOD, BAD = "rope_other_frequencies", "rope_layout_mix"  # public anchors, asked about in every check
# public candidates: the self-check's counterparts of the hidden ones, one per kind of test mistake
PUBLIC_ACCEPT = {
    "rope_reversed_shifted_partial": "a correct RoPE that turns the other way, counts positions from 3 and leaves "
                                     "the last quarter of the head unrotated",
}
PUBLIC_REJECT = {
    "rope_angle_not_affine": "an absolute-position leak that keeps every length: angles grow like (m + m²/500)·theta",
    "rope_clipped_at_160": "positions clipped at 160 (relative only below 160)",
    "rope_same_rotation_everywhere": "a no-op in disguise: every token rotated as if at position 11 (lengths kept, "
                                     "scores the same at every distance)",
    "rope_shrinks_by_0_9": "a length change: every vector shrinks by 10% (scores stay relative)",
}
ACCEPT = {
    "rope_half_10000": "a correct RoPE in the half layout (Hugging Face), base 10000",
    "rope_interleaved_10000": "a correct RoPE in the interleaved layout (Meta, GPT-J), base 10000",
    "rope_half_500000": "a correct RoPE with LLaMA 3's base 500000",
    "rope_half_reversed": "a correct RoPE that turns the other way (rotate_half with its sign flipped, angle -m·theta)",
    "rope_interleaved_1e6_float64": "a correct RoPE computed in float64, base 1e6",
    "rope_half_i_over_d": "a RoPE with the exponent i/d (just another base, so still relative)",
    "rope_partial_quarter": "a partial RoPE rotating a quarter of the head (GPT-NeoX)",
    "rope_shifted_positions": "a RoPE whose positions are all shifted by 7 (distances unchanged)",
}
REJECT = {
    "rope_interleaved_half_tables": "the other layout mix (neighbouring pairs with cat(freqs, freqs) tables)",
    "rope_rotate_half_no_minus": "a sign error: rotate_half without its minus, cat(x2, x1)",
    "rope_rotate_half_both_minus": "a sign error: rotate_half = cat(-x2, -x1)",
    "rope_quadratic_angle": "an absolute-position leak: angles grow like m + m²/200 (norms are kept)",
    "rope_clipped_positions": "an absolute-position leak: positions clipped at 64 (relative only below 64)",
    "rope_scaled": "a length change: cos and sin multiplied by 1.1 (scores stay relative)",
    "rope_sin_angle_off": "sin taken at 1.1 times the angle of cos (not a rotation)",
    "rope_identity": "a no-op: x returned unchanged (the position is never used)",
    "rope_constant_rotation": "a no-op in disguise: positions ignored, every token rotated as if at position 5",
    "rope_last_row_for_all": "a no-op in disguise: the tables of the last position rotate every token",
}
ABOUT = {GOOD: "a correct RoPE with its own frequency ladder (neighbouring planes, theta_i = 2^-i)",
         BAD: "the layout mix of section 4.7 (rotate_half with repeat_interleave tables)", **PUBLIC_ACCEPT,
         **PUBLIC_REJECT, **ACCEPT, **REJECT}


CATALOGUE = Catalogue("check_relative_property", "relative_property", "verdicts", GOOD, BAD, ACCEPT, REJECT, ABOUT,
                      "RoPE")
verdict_check = CATALOGUE.verdict_check

CHECK_RELATIVE_PROPERTY_CHECKS = [
    verdict_check(GOOD, True, public=True),
    verdict_check(BAD, False, public=True, points=2),
    *[verdict_check(name, True, public=True) for name in PUBLIC_ACCEPT],
    *[verdict_check(name, False, public=True) for name in PUBLIC_REJECT],
    verdict_check("rope_reversed_shifted_partial", True, head_dim=16, public=True),
    verdict_check("rope_same_rotation_everywhere", False, head_dim=16, public=True),
    *[verdict_check(name, True, points=2 if name == "rope_half_reversed" else 1) for name in ACCEPT],
    *[verdict_check(name, False) for name in REJECT],
    verdict_check("rope_half_10000", True, head_dim=16),
    verdict_check("rope_rotate_half_no_minus", False, head_dim=16),
]

CHECK_RELATIVE_PROPERTY = Exercise(
    "check_relative_property",
    convention="a test the learner writes: True when rope_fn(x, position_ids) keeps norms and "
               "makes q·k depend on m − n only. It judges the property, not a convention: the "
               "other rotation direction or another base still has it; a mixed layout, a leak of "
               "absolute position or a change of norm does not",
    checks=CHECK_RELATIVE_PROPERTY_CHECKS,
    hidden=(*ACCEPT, *REJECT),  # hidden_probes.py: the candidates its hidden checks run the learner's test on
    main=[
        CATALOGUE.main_check(),
    ],
    hints=(
        "a real RoPE keeps norms, uses the position, and makes the score of a rotated query and key depend only on "
        "their distance: test all three on many positions at once.",
        "one call gives f(q, m) for every m: build q of shape (V, 1, 1, d), expand it to (V, 1, P, d) and pass "
        "`torch.arange(P)`; the same for k. Compare in float64 from there.",
        "norms: |f(q, m)| = |q| for every m, to a relative tolerance (1e-3 is far above float32 rounding and far "
        "below any broken RoPE). Position: some f(q, m) must differ from f(q, 0) by more than that tolerance, or "
        "the position is never used.",
        "relative scores: S = f(q) @ f(k)^T is (V, P, P). Compare every S[m, n] with the score at the same distance "
        "from position 0, S[m - n, 0] when m >= n and S[0, n - m] otherwise, relative to |q|·|k|."
        " With `positions = torch.arange(P)`, the distance matrix is `delta = positions[None, :] - positions[:, "
        "None]` and the scores are S, `scores`.",
        "key line: `same_distance = torch.where(delta >= 0, scores[:, 0, delta.clamp(min=0)], "
        "scores[:, (-delta).clamp(min=0), 0])`",
    ),
)


# ---- RoPEAttention -------------------------------------------------------------------------------
ATTN_MISTAKES = ("attn_layout_mix", "attn_sign", "attn_i_over_d", "attn_rotates_v", "attn_k_not_rotated",
                 "attn_causal_flipped")
DECODE_MISTAKES = ATTN_MISTAKES + ("attn_no_decode_offset", "attn_top_left_causal", "attn_float_mask")
HALF_MISTAKES = ("attn_angles_in_input_dtype", "attn_inv_freq_cast_by_to")
# the module in half precision rounds every projection, score and weight: against the reference, itself rounded at
# every step, correct code that works in float32 inside erred by up to 1.15x the default tolerance in float16
# (2e-3, 2e-3) and 0.87x in bfloat16 (2e-2, 2e-2), over 1,000 drawn inputs of the checks below; the half-precision
# mistakes stay at 4.3x and 6.1x of it or more. Twice the float16 default and 1.5 times the bfloat16 one:
HALF_TOL = {"float16": {"atol": 4e-3, "rtol": 4e-3}, "bfloat16": {"atol": 0.03, "rtol": 0.03}}

MASK_HINT = ("with a cache the queries are the last L of K positions: query i may see keys j <= K - L + i. "
             "is_causal=True aligns them to the start instead; pass an explicit boolean mask "
             "(True = may attend), e.g. torch.ones(L, K, dtype=torch.bool).tril(K - L): a float mask is added "
             "to the scores and masks nothing")

ATTN = {"d_model": 32, "num_heads": 4}  # head_dim 8
MODULE = "RoPEAttention"


def attention(x, **kw):
    return {**ATTN, "x": x, **kw}


ROPE_ATTENTION_CHECKS = [
    Check(MODULE, "causal forward of a batch (2, 7, 32) with 4 heads: output and returned (k, v)", "rope_attention",
          attention(randn(2, 7, 32)), public=True, points=2, mistakes=ATTN_MISTAKES,
          id="causal_forward_batch_2_7_32_4_heads"),
    # what the text asks: nothing trainable beyond four bias-free (d, d) Linear layers (a frozen tensor of
    # frequencies, a buffer or a Parameter with requires_grad=False, is allowed; the names are checked by
    # every forward check, which loads q_proj ... o_proj by name)
    Check(MODULE, "four Linear layers without bias, nothing else trainable", "module_info",
          {"ctor_args": [32, 4], "ctor_kwargs": {}}, expect="fields", fields={"n_trainable": 4 * 32 * 32},
          public=True,
          hint="q_proj, k_proj, v_proj, o_proj = nn.Linear(d_model, d_model, bias=False): 4 * d_model² trainable "
               "numbers and no more (a bias adds d_model each; RoPE itself learns nothing)",
          id="four_linear_layers_nothing_else_trainable"),
    Check(MODULE, "decoding token by token with the cache equals the full forward pass", "rope_attention_decode",
          attention(randn(2, 8, 32, seed=1), prefix=3), expect="property", property="decode_matches_full",
          public=True, points=2, mistakes=("attn_no_decode_offset",), id="decoding_token_token_cache_equals_full"),
    Check(MODULE, "runs on the device of its input (checked on the meta device)", "meta_forward",
          {"ctor_args": [32, 4], "ctor_kwargs": {}, "forward_args": [randn(1, 5, 32)]}, expect="ok", public=True,
          hint=DEVICE_HINT, id="runs_device_input_checked_meta_device"),
    Check(MODULE, "decoding: outputs and final cache match the reference", "rope_attention_decode",
          attention(randn(2, 8, 32, seed=1), prefix=3), points=2, mistakes=DECODE_MISTAKES,
          public=True, id="decoding_outputs_final_cache_match"),
    Check(MODULE, "a 3-token chunk after a cached prefix (queries aligned to the end of the keys)",
          "rope_attention_decode", attention(randn(2, 10, 32, seed=2), prefix=4, chunk=3), points=2,
          mistakes=DECODE_MISTAKES, hint=MASK_HINT, public=True, id="3_token_chunk_after_cached_prefix"),
    Check(MODULE, "decoding with explicit position_ids", "rope_attention_decode",
          attention(randn(1, 6, 32, seed=3), prefix=2, explicit_positions=True), mistakes=DECODE_MISTAKES,
          public=True, id="decoding_explicit_position_ids"),
    Check(MODULE, "non-causal attention (causal=False)", "rope_attention",
          attention(randn(2, 6, 32, seed=4), causal=False), mistakes=ATTN_MISTAKES,
          hint="with causal=False every query sees every key", public=True, id="non_causal_attention_causal_false"),
    Check(MODULE, "position_ids with gaps are used as given", "rope_attention",
          attention(randn(2, 7, 32, seed=5), position_ids=[0, 1, 2, 5, 6, 10, 11]), points=2, mistakes=ATTN_MISTAKES,
          hint="build the tables from the position_ids argument; only when it is None count past .. past + L - 1",
          public=True, id="position_ids_gaps_used_given"),
    Check(MODULE, "position_ids (batch, seq): a packed row whose positions restart at 0", "rope_attention",
          attention(randn(2, 7, 32, seed=6), position_ids=[[0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 0, 1, 2, 3]]),
          points=2, mistakes=ATTN_MISTAKES,
          hint="(B, L) positions give (B, L, d_head) tables; apply_rope inserts the head axis",
          public=True, id="position_ids_batch_seq_packed_row_whose"),
    Check(MODULE, "positions offset by 5000", "rope_attention",
          attention(randn(2, 5, 32, seed=7), position_ids=arange(5005, start=5000)), mistakes=ATTN_MISTAKES,
          tol=pos_tol(5005, 2e-7), public=True, id="positions_offset_5000"),
    Check(MODULE, "LLaMA 3's base 500000, d_model=64", "rope_attention",
          {"d_model": 64, "num_heads": 4, "x": randn(2, 6, 64, seed=8), "base": 500000.0}, mistakes=ATTN_MISTAKES,
          hint="pass base on to the frequencies", public=True, id="llama_3_s_base_500000_d_model_64"),
    Check(MODULE, "decoding on the meta device: positions after the cache are built on x.device", "meta_forward",
          {"ctor_args": [32, 4], "ctor_kwargs": {},
           "forward_args": [randn(1, 2, 32)], "forward_kwargs": {"kv_cache": [randn(1, 4, 3, 8), randn(1, 4, 3, 8)]}},
          expect="ok", hint=DEVICE_HINT, public=True, id="decoding_meta_device_positions_after"),
    Check(MODULE, "bfloat16 at positions 1000..1006: angles in float32, tables cast to bfloat16", "rope_attention",
          attention(randn(2, 7, 32, seed=9), position_ids=arange(1007, start=1000), dtype="bfloat16"), points=2,
          mistakes=HALF_MISTAKES, tol=HALF_TOL["bfloat16"],
          hint="compute positions and angles in float32 (a frequency buffer is cast by .to(dtype) too), then cast "
               "cos and sin to x.dtype (apply_rope does the cast)",
          public=True, id="bfloat16_positions_1000_1006_angles"),
    # the CUDA checks in half precision, on the CPU: the dtypes are judged on every machine
    Check(MODULE, "float16 at positions 300..306 (the CUDA check's dtype, on the CPU)", "rope_attention",
          attention(randn(2, 7, 32, seed=12), position_ids=arange(307, start=300), dtype="float16"),
          mistakes=HALF_MISTAKES, tol=HALF_TOL["float16"],
          hint="compute positions and angles in float32, then cast cos and sin to x.dtype (apply_rope does the cast)",
          public=True, id="float16_positions_300_306_cpu"),
    Check(MODULE, "bfloat16 decoding with the cache, 2-token chunks (the CUDA check's dtype, on the CPU)",
          "rope_attention_decode", attention(randn(2, 9, 32, seed=13), prefix=5, chunk=2, dtype="bfloat16"),
          mistakes=DECODE_MISTAKES + HALF_MISTAKES, tol=HALF_TOL["bfloat16"], hint=MASK_HINT, public=True,
          id="bfloat16_decoding_chunks_cpu"),
    Check(MODULE, "d_model not divisible by num_heads raises ValueError", "raises",
          {"ctor_args": [30, 4], "ctor_kwargs": {}}, expect="raises", mentions=("num_heads",),
          public=True, id="d_model_not_divisible_num_heads_raises",
          twin=draw_among(lambda: [{"ctor_args": [d, h], "ctor_kwargs": {}} for h in range(2, 17)
                                   for d in range(h + 1, 101) if d % h])),
    Check(MODULE, "an odd head width raises ValueError naming head_dim", "raises",
          {"ctor_args": [12, 4], "ctor_kwargs": {}}, expect="raises", mentions=("head_dim",),
          public=True, id="odd_head_width_raises_valueerror_naming",
          twin=draw_among(lambda: [{"ctor_args": [h * w, h], "ctor_kwargs": {"base": drawn_base()}}
                                   for h in range(1, 17) for w in range(1, 64, 2)])),
    *[
        Check(MODULE, f"on CUDA in {dtype}: full forward", "rope_attention",
              attention(randn(2, 33, 32, seed=10), device="cuda", dtype=dtype), cuda=True, tol=HALF_TOL.get(dtype),
              hint=DEVICE_HINT, id=f"cuda_{dtype}_full_forward")
        for dtype in ("float32", "float16", "bfloat16")
    ],
    *[
        Check(MODULE, f"on CUDA in {dtype}: decoding with the cache", "rope_attention_decode",
              attention(randn(2, 12, 32, seed=11), prefix=5, chunk=2, device="cuda", dtype=dtype), cuda=True,
              tol=HALF_TOL[dtype], hint=DEVICE_HINT, id=f"cuda_{dtype}_decoding_cache")
        for dtype in ("float16", "bfloat16")
    ],
]

ROPE_ATTENTION = Exercise(
    "RoPEAttention",
    convention="multi-head attention with RoPE on q and k (half layout) and SDPA inside; `q_proj`, "
               "`k_proj`, `v_proj`, `o_proj` are `nn.Linear` without bias; returns `(out, (k, v))`, the "
               "cache holding rotated keys; decoding token by token with the cache equals the full forward",
    checks=ROPE_ATTENTION_CHECKS,
    main=[
        unseen_like(find(ROPE_ATTENTION_CHECKS, MODULE, "causal_forward_batch_2_7_32_4_heads"),
                    attention(drawn(2, draw_int(2, 10), 32), seed=SEED),
                    "causal forward of a batch and weights drawn for this submission", id="main_forward"),
    ],
    hints=(
        "the block is ordinary multi-head attention in which q and k (never v) are rotated by their positions before "
        "the scores; the cache holds keys already rotated.",
        "q_proj, k_proj, v_proj and o_proj are `nn.Linear(d_model, d_model, bias=False)`, and nothing else is "
        "trainable. Heads: (B, L, d) viewed as (B, L, H, d_head), transposed to (B, H, L, d_head).",
        "positions: without position_ids the new tokens follow the cache, past .. past + L - 1 with "
        "past = kv_cache[0].shape[2] (0 without a cache), built on x.device. Rotate q and k (never v) with "
        "rope_cos_sin and apply_rope, then append the new keys and values to the cache.",
        "the mask: for L == K (no cache) `is_causal=True` is right. For a chunk after a cache the queries are the "
        "last L of K positions: pass an explicit boolean mask (True = may attend) of shape (L, K). A float mask "
        "would be added to the scores and mask nothing."
        " The tables: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`.",
        "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
    ),
    mistakes={
        "attn_layout_mix": Mistake(
            "RoPEAttention",
            "layout mismatch: rotate_half pairs coordinate i with i + d/2 (half layout), but the cos/sin tables repeat "
            "each angle side by side (repeat_interleave, interleaved layout): the blocks are not rotations. Build them "
            "with torch.cat((freqs, freqs), dim=-1)",
            hints=(
                "apply_rope's rotate_half pairs coordinate i with i + d/2, so the tables it gets must be in the same "
                "half layout: each angle once per half, end to end.",
                "where the block builds `cos, sin` for its positions: take them from your rope_cos_sin (half layout), "
                "not from repeated (interleaved) angles.",
                "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
            ),
            wrong="cos, sin = (t[..., : self.head_dim // 2].repeat_interleave(2, dim=-1) "
                  "for t in rope_cos_sin(position_ids, self.head_dim, self.base))",
        ),
        "attn_sign": Mistake(
            "RoPEAttention",
            _SIGN_MESSAGE,
            hints=(
                "RoPE turns every plane forwards, by +m·theta: x·cos + rotate_half(x)·sin with rotate_half(x) = "
                "(-x2, x1). A minus in the wrong place turns it backwards.",
                "where q and k are rotated with the tables `cos, sin`: use your apply_rope (whose formula has the "
                "plus) and the sine as the tables give it.",
                "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
            ),
            wrong="q, k = apply_rope(q, cos, -sin), apply_rope(k, cos, -sin)",
        ),
        "attn_i_over_d": Mistake(
            "RoPEAttention",
            "in the RoPE frequencies, the exponent is i/d; it should be 2i/d (theta_i = base^(-2i/d), from "
            "torch.arange(0, d, 2) / d)",
            hints=(
                "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so "
                "the slowest plane reaches nearly 1/base, not 1/sqrt(base).",
                "where the block builds `cos, sin` for its positions: your rope_cos_sin already uses the right "
                "frequencies, with the block's own base and head_dim.",
                "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
            ),
            wrong="cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base ** 0.5)",
        ),
        "attn_rotates_v": Mistake(
            "RoPEAttention",
            "the values are rotated too: RoPE rotates only q and k (after the projections); rotating v carries each "
            "key's absolute position into the output",
            hints=(
                "the position belongs in the scores q·k: only queries and keys are rotated; the values carry content "
                "and are averaged as they are.",
                "the line that rotates with the tables `cos, sin`, right after the heads are split: q and k go through "
                "apply_rope, v does not.",
                "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
            ),
            wrong="q, k, v = apply_rope(q, cos, sin), apply_rope(k, cos, sin), apply_rope(v, cos, sin)",
        ),
        "attn_k_not_rotated": Mistake(
            "RoPEAttention",
            "the keys are not rotated: apply RoPE to k as well as q, or the score depends on the query's absolute "
            "position instead of m - n",
            hints=(
                "a score depends only on the distance m - n when both sides turn: rotate the keys as well as the "
                "queries, at their own positions.",
                "the line that rotates q with the tables `cos, sin`: k goes through apply_rope too, before it joins "
                "the cache.",
                "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
            ),
            wrong="q = apply_rope(q, cos, sin)",
        ),
        "attn_no_decode_offset": Mistake(
            "RoPEAttention",
            "positions are not offset when decoding: with a cache of `past` tokens the new tokens sit at positions "
            "past, past + 1, ...; yours restart at 0",
            hints=(
                "with a cache the new tokens come after the cached ones: their positions continue from there instead "
                "of restarting at zero.",
                "the default positions, when `position_ids is None`: they start at past, the cached length (`past = "
                "kv_cache[0].shape[2]`), and run for the seq new tokens (`batch, seq, _ = x.shape`).",
                "key line: `position_ids = torch.arange(past, past + seq, device=x.device)`",
            ),
            wrong="position_ids = torch.arange(seq, device=x.device)",
        ),
        "attn_top_left_causal": Mistake(
            "RoPEAttention",
            "with a cache, is_causal=True aligns the queries to the start of the keys; they sit at the end (query i at "
            "k_len - q_len + i): pass attn_mask=torch.ones(L, K, dtype=torch.bool).tril(K - L)",
            hints=(
                "after a cache, the queries of a chunk are the last seq of the k_len positions: the causal rule is "
                "aligned to the end of the keys, while is_causal=True aligns it to their start.",
                "the explicit boolean mask, used when neither `not causal or seq == 1` nor `seq == k_len` holds: query "
                "i may see keys j <= k_len - seq + i, a lower triangle shifted by k_len - seq.",
                "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)`",
            ),
            wrong="allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril()",
        ),
        "attn_causal_flipped": Mistake(
            "RoPEAttention",
            "the causal mask points the wrong way: each query sees the keys after it instead of those before it. True "
            "(may attend) belongs where j <= K - L + i: torch.ones(L, K, dtype=torch.bool).tril(K - L)",
            hints=(
                "causal means a query sees its own key and the keys before it, never those after it: allowed pairs lie "
                "on and below the diagonal, a lower triangle.",
                "both causal paths of the block (the first branch, `not causal or seq == 1`, needs no mask): when "
                "`seq == k_len`, SDPA's own `is_causal=True` draws the right triangle; after a cache, the boolean mask "
                "is a lower triangle shifted by k_len - seq, never an upper one.",
                "key line: `out = F.scaled_dot_product_attention(q, k, v, is_causal=True)`",
            ),
            wrong="out = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(seq, k_len, dtype=torch.bool, "
                  "device=x.device).triu())",
        ),
        "attn_float_mask": Mistake(
            "RoPEAttention",
            "the mask is a float tensor of ones and zeros: SDPA adds a float mask to the scores, so nothing is masked "
            "and each query also sees the keys after it. Build it with dtype=torch.bool (True = may attend)",
            hints=(
                "SDPA reads a boolean mask as may-attend (True) or not, and adds a float mask to the scores: ones and "
                "zeros added to the scores hide nothing.",
                "the mask built when neither `not causal or seq == 1` nor `seq == k_len` holds: give the ones "
                "`dtype=torch.bool` before taking the triangle.",
                "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)`",
            ),
            wrong="allowed = torch.ones(seq, k_len, dtype=q.dtype, device=x.device).tril(k_len - seq)",
        ),
        "attn_inv_freq_cast_by_to": Mistake(
            "RoPEAttention",
            "the frequencies come from a floating buffer, and module.to(torch.bfloat16) (or float16) rounded it to "
            "half precision, as it does in transformers' rotary embeddings: at positions in the hundreds and thousands "
            "the angles are off by hundredths to tenths of a radian, and upcasting does not bring the lost digits "
            "back. Compute the frequencies in forward, in float32 on x.device, as rope_cos_sin does (it costs next to "
            "nothing)",
            hints=(
                "a floating buffer follows module.to(dtype): in bfloat16 each frequency is rounded by up to 0.4%, so "
                "by position 1000 some angles are off by tenths of a radian, and casting back up does not restore "
                "them.",
                "where the block gets `cos, sin`: compute them in forward from the positions, with your rope_cos_sin "
                "(float32, on the positions' device), not from a stored frequency buffer.",
                "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
            ),
            wrong="freqs = position_ids[..., None].float() * rope_inv_freq(self.head_dim, self.base, "
                  "device=x.device).to(x.dtype).float()\n"
                  "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
        ),
        "attn_angles_in_input_dtype": Mistake(
            "RoPEAttention",
            "cos/sin were built in the input's dtype: positions and angles lose their precision in half precision "
            "(bfloat16 cannot even count past 256). Compute angles in float32, then cast cos and sin to x.dtype",
            hints=(
                "angles p·theta need float32: bfloat16 counts integers exactly only up to 256, and its angles at large "
                "positions are off by whole radians. Compute in float32, cast only the finished tables.",
                "where the block gets `cos, sin`: from your rope_cos_sin, which works in float32; apply_rope casts "
                "them to x's dtype afterwards.",
                "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
            ),
            wrong="freqs = position_ids[..., None].to(x.dtype) * rope_inv_freq(self.head_dim, self.base, "
                  "device=x.device).to(x.dtype)\n"
                  "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
        ),
    },
)


EXERCISES = (ROPE_INV_FREQ, ROPE_COS_SIN, ROTATE_HALF, APPLY_ROPE, APPLY_ROPE_INTERLEAVED, INTERLEAVED_TO_HALF_PERM,
             CHECK_RELATIVE_PROPERTY, ROPE_ATTENTION)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
