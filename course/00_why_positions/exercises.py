"""Chapter 0 checks: scaled_dot_product_attention from scratch, equal to torch's SDPA."""

from grader.exercise import Exercise, declared
from grader.spec import SEED, Check, Mistake, draw_choice, draw_int, find, same, unseen_like

# ---- scaled_dot_product_attention ----------------------------------------------------------------
EX = "scaled_dot_product_attention"
CORE = ("sdpa_no_scale", "sdpa_scale_by_d", "sdpa_softmax_over_queries")
MASKED = CORE + ("sdpa_mask_inverted", "sdpa_mask_after_softmax")
MASK_HINT = ("a bool mask is True where a query MAY attend: scores.masked_fill(~mask, float('-inf')) before the "
             "softmax; a float mask is added to the scores before the softmax")


def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


def qkv(batch, heads, q_len, k_len, head_dim, v_dim=None, seed=0):
    """q (B, H, Lq, d), k (B, H, Lk, d), v (B, H, Lk, dv) as input descriptions."""
    return [randn(batch, heads, q_len, head_dim, seed=seed), randn(batch, heads, k_len, head_dim, seed=seed + 1),
            randn(batch, heads, k_len, v_dim or head_dim, seed=seed + 2)]


def causal(q_len, k_len, kind="bool"):
    """Queries aligned to the end: query i may see keys j <= k_len - q_len + i."""
    return {"t": "causal_mask", "q": q_len, "k": k_len, "kind": kind}


# (B, 1, Lq, Lk), broadcast over heads; seed 5 leaves no row all True, so an inverted mask stays finite
BOOL_MASK = {"t": "random_bool_mask", "shape": [2, 1, 5, 5], "p": 0.6, "seed": 5}


def drawn(shape):
    return {"t": "randn", "shape": shape, "seed": SEED}


# (B, H, L, d) with H, L, d drawn once, then reused
DRAWN_QKV = [drawn([2, draw_int(1, 4, name="h"), draw_int(3, 9, name="l"), draw_choice(4, 8, 16, name="d")]),
             drawn([2, same("h"), same("l"), same("d")]), drawn([2, same("h"), same("l"), same("d")])]

SCALED_DOT_PRODUCT_ATTENTION_CHECKS = [
    Check(EX, "matches torch's SDPA without a mask, shape (2, 3, 5, 8)", "call", {"args": qkv(2, 3, 5, 5, 8)},
          points=2, public=True, mistakes=CORE, id="matches_torch_s_sdpa_without_mask_shape"),
    Check(EX, "fewer queries than keys (q_len=3, k_len=7)", "call", {"args": qkv(2, 2, 3, 7, 8, seed=10)},
          public=True, mistakes=CORE,
          hint="scores are (..., q_len, k_len): q @ k.transpose(-2, -1), softmax over the last dimension",
          id="fewer_queries_than_keys_q_len_3_k_len_7"),
    Check(EX, "a bool mask (True = may attend), broadcast over heads", "call",
          {"args": qkv(2, 3, 5, 5, 8, seed=20) + [BOOL_MASK]}, points=2, public=True, mistakes=MASKED,
          hint=MASK_HINT, id="bool_mask_true_may_attend_broadcast_over"),
    Check(EX, "a float mask is added to the scores (a bias per head)", "call",
          {"args": qkv(1, 3, 5, 5, 8, seed=30) + [randn(1, 3, 5, 5, seed=33)]}, public=True, mistakes=MASKED,
          hint=MASK_HINT, id="float_mask_added_scores_bias_per_head"),
    Check(EX, "a causal bool mask", "call", {"args": qkv(2, 2, 6, 6, 8, seed=40) + [causal(6, 6)]},
          public=True, mistakes=MASKED, hint=MASK_HINT, id="causal_bool_mask"),
    Check(EX, "permutation equivariance: attention(P x) = P attention(x)", "permute_tokens",
          {"batch": 2, "seq": 6, "dim": 8, "seed": 0}, expect="property", property="permutation_equivariant",
          public=True, hint="compute each query's output from all keys the same way, with no per-position term",
          id="permutation_equivariance_attention_p_x_p"),
    Check(EX, "q and k with different head_dim raise ValueError naming it", "raises",
          {"args": [randn(1, 1, 3, 8), randn(1, 1, 3, 4), randn(1, 1, 3, 4)]}, expect="raises",
          mentions=("head_dim",), public=True, hint="compare q.shape[-1] with k.shape[-1] before multiplying",
          id="q_k_different_head_dim_raise_valueerror"),
    Check(EX, "a single token (L=1)", "call", {"args": qkv(1, 1, 1, 1, 4, seed=50)},
          public=True, id="single_token_l_1"),
    Check(EX, "a single query against 9 keys (one decoding step)", "call", {"args": qkv(2, 4, 1, 9, 8, seed=55)},
          mistakes=CORE, public=True, id="single_query_against_9_keys_one_decoding"),
    Check(EX, "a causal mask with fewer queries than keys (queries aligned to the end)", "call",
          {"args": qkv(2, 2, 3, 6, 8, seed=60) + [causal(3, 6)]}, points=2, mistakes=MASKED, hint=MASK_HINT,
          public=True, id="causal_mask_fewer_queries_than_keys"),
    Check(EX, "a causal float mask (0 where allowed, -inf elsewhere)", "call",
          {"args": qkv(1, 2, 5, 5, 8, seed=70) + [causal(5, 5, kind="float")]}, hint=MASK_HINT,
          public=True, id="causal_float_mask_0_where_allowed_inf"),
    Check(EX, "values wider than the keys (d_v=6, head_dim=4)", "call",
          {"args": qkv(2, 2, 5, 5, 4, v_dim=6, seed=80)}, mistakes=CORE,
          hint="the output has v's last dimension; scale by sqrt of q's last dimension",
          public=True, id="values_wider_than_keys_d_v_6_head_dim_4"),
    Check(EX, "float64 inputs give a float64 output", "call",
          {"args": qkv(2, 3, 5, 5, 8, seed=90) + [BOOL_MASK], "dtype": "float64"}, mistakes=MASKED,
          hint="keep the input's dtype: compute in float64 when the inputs are float64",
          public=True, id="float64_inputs_float64_output"),
    Check(EX, "float16 inputs give a float16 output", "call",
          {"args": qkv(2, 2, 5, 5, 8, seed=100), "dtype": "float16"}, mistakes=CORE,
          hint="compute in float32 (q.float() ...) and cast the result back to q.dtype",
          public=True, id="float16_inputs_float16_output"),
    Check(EX, "bfloat16 inputs give a bfloat16 output (the CUDA check's dtype, on the CPU)", "call",
          {"args": qkv(2, 2, 5, 5, 8, seed=105) + [causal(5, 5)], "dtype": "bfloat16"}, mistakes=CORE,
          hint="compute in float32 (q.float() ...) and cast the result back to q.dtype", public=True,
          id="bfloat16_inputs_bfloat16_output_cpu"),
    Check(EX, "a query that may see no key gets zeros, as torch's SDPA returns", "call",
          {"args": qkv(1, 2, 4, 2, 8, seed=110) + [causal(4, 2)]},
          hint="with every key of a row masked, softmax computes 0/0 = NaN; set those rows of weights to 0 "
               "(torch.isneginf(scores).all(dim=-1, keepdim=True))",
          public=True, id="query_may_see_no_key_gets_zeros_torch_s"),
    Check(EX, "runs on the device of its inputs (checked on the meta device)", "meta_call",
          {"args": qkv(2, 2, 5, 5, 8) + [causal(5, 5)]}, expect="ok",
          hint="build every tensor you need from the inputs (device=q.device), never on a fixed device",
          public=True, id="runs_device_inputs_checked_meta_device"),
    Check(EX, "k and v with different numbers of keys raise ValueError", "raises",
          {"args": [randn(1, 1, 3, 8), randn(1, 1, 7, 8), randn(1, 1, 5, 8)]}, expect="raises",
          mentions=("7", "5"), hint="compare k.shape[-2] with v.shape[-2] and name both lengths",
          public=True, id="k_v_different_numbers_keys_raise"),
    Check(EX, "an integer mask raises ValueError", "raises",
          {"args": qkv(1, 1, 3, 3, 4) + [{"t": "randint", "low": 0, "high": 2, "shape": [3, 3], "seed": 0}]},
          expect="raises", mentions=("mask",),
          hint="an integer 0/1 mask is ambiguous (attend, or add 1?): accept bool or floating masks only",
          public=True, id="integer_mask_raises_valueerror"),
    *[
        Check(EX, f"on CUDA in {dtype}", "call",
              {"args": qkv(2, 4, 16, 16, 32, seed=120) + [causal(16, 16)], "device": "cuda", "dtype": dtype},
              cuda=True, hint="build every tensor you need on q.device", id=f"cuda_{dtype}")
        for dtype in ("float32", "float16", "bfloat16")
    ],
]

SCALED_DOT_PRODUCT_ATTENTION = Exercise(
    "scaled_dot_product_attention",
    convention="softmax(q kᵀ / √d + mask) v, written out; `mask` is boolean (True = may "
               "attend) or float (added to the logits); equals "
               "`F.scaled_dot_product_attention`",
    checks=SCALED_DOT_PRODUCT_ATTENTION_CHECKS,
    main=[
        unseen_like(find(SCALED_DOT_PRODUCT_ATTENTION_CHECKS, EX, "matches_torch_s_sdpa_without_mask_shape"),
                    {"args": DRAWN_QKV}, "matches torch's SDPA without a mask, on inputs drawn for this submission",
                    id="main_no_mask"),
        unseen_like(find(SCALED_DOT_PRODUCT_ATTENTION_CHECKS, EX, "causal_bool_mask"),
                    {"args": DRAWN_QKV + [{"t": "causal_mask", "q": same("l"), "k": same("l"), "kind": "bool"}]},
                    "a causal bool mask, on inputs drawn for this submission", id="main_causal_mask"),
    ],
    hints=(
        "each score compares one query with one key by their dot product, scaled by the square root of the key "
        "dimension, so that the softmax does not saturate as d grows.",
        "every query against every key is one matrix product: q with k transposed on its last two axes, "
        "`k.transpose(-2, -1)`, divided by sqrt(d) where d is q's last dimension (not d_v).",
        "the mask enters before the softmax. A bool mask is True where a query may attend: set the other scores "
        "to -inf with `scores.masked_fill(~mask, float(\"-inf\"))`. A float mask is added to the scores.",
        "the softmax runs over the keys, the last axis. A row whose keys are all masked is -inf everywhere and the "
        "softmax returns NaN there; torch's SDPA returns zeros: find those rows with "
        "`torch.isneginf(scores).all(dim=-1, keepdim=True)` and zero their weights.",
        "precision: compute in float32, or float64 for float64 inputs "
        "(`torch.promote_types(q.dtype, torch.float32)`), and cast the result back to q.dtype.",
        "key line: `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",
    ),
    mistakes={
        "sdpa_no_scale": Mistake(
            "scaled_dot_product_attention",
            "the scores are not scaled: divide q·k by sqrt(d), d = head_dim (q.shape[-1]); without it the scores grow "
            "like sqrt(d) and the softmax saturates",
            hints=(
                "the dot product of two random d-dimensional vectors has variance d: unscaled, the scores grow with d "
                "and the softmax saturates onto one key.",
                "the line that computes the scores: divide them by the square root of q's last dimension, d.",
                "key line: `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",
            ),
            wrong="scores = q @ k.transpose(-2, -1)",
        ),
        "sdpa_scale_by_d": Mistake(
            "scaled_dot_product_attention",
            "the scores are divided by d; divide by sqrt(d) (math.sqrt(q.shape[-1])): q·k has variance d, so sqrt(d) "
            "brings it back to 1",
            hints=(
                "dividing by d over-corrects: the scores' standard deviation is sqrt(d), so sqrt(d) brings it to one.",
                "the line that computes the scores: the divisor is the square root of q's last dimension.",
                "key line: `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",
            ),
            wrong="scores = q @ k.transpose(-2, -1) / q.shape[-1]",
        ),
        "sdpa_softmax_over_queries": Mistake(
            "scaled_dot_product_attention",
            "the softmax runs over the queries (dim=-2); it must run over the keys, the last dimension, so that each "
            "query's weights sum to 1",
            hints=(
                "each query spreads its attention over the keys: its weights must sum to one across the keys.",
                "the softmax's dimension: the scores are (..., Lq, Lk), so the keys are the last axis.",
                "key line: `weights = torch.softmax(scores, dim=-1)`",
            ),
            wrong="weights = torch.softmax(scores, dim=-2)",
        ),
        "sdpa_mask_inverted": Mistake(
            "scaled_dot_product_attention",
            "the bool mask is used the wrong way round: True means the query MAY attend (torch SDPA's convention); set "
            "the scores to -inf where the mask is False (scores.masked_fill(~mask, -inf)). nn.MultiheadAttention uses "
            "the opposite convention",
            hints=(
                "in torch's convention a boolean mask is True where a query may attend; the scores to remove are where "
                "it is False.",
                "the masked fill, where `mask is not None` and `mask.dtype == torch.bool`: fill with -inf under the "
                "negated mask.",
                "key line: `scores = scores.masked_fill(~mask, float(\"-inf\"))`",
            ),
            wrong="scores = scores.masked_fill(mask, float(\"-inf\"))",
        ),
        "sdpa_mask_after_softmax": Mistake(
            "scaled_dot_product_attention",
            "the mask is applied after the softmax; it belongs in the scores before it (-inf where a bool mask is "
            "False, a float mask added), so masked keys get weight 0 and each row of weights still sums to 1",
            hints=(
                "masking removes keys before the weights are made: a masked key's score becomes minus infinity, so the "
                "softmax gives it weight 0 and shares the whole row among the keys that remain. Weights zeroed after "
                "the softmax no longer sum to 1.",
                "move the masking above the softmax, onto the scores `scores`: where `mask is not None` and "
                "`mask.dtype == torch.bool`, fill them with -inf where the mask is False (a float mask is added to "
                "them there too); after the softmax nothing touches the weights.",
                "key line: `scores = scores.masked_fill(~mask, float(\"-inf\"))`",
            ),
            wrong="pass",
            also={"weights = torch.softmax(scores, dim=-1)": "weights = torch.softmax(scores, dim=-1)\n"
                                                                 "if mask is not None and mask.dtype == torch.bool:\n"
                                                                 "    weights = weights.masked_fill(~mask, 0.0)"},
        ),
    },
)


EXERCISES = (SCALED_DOT_PRODUCT_ATTENTION,)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
