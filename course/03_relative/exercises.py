"""Chapter 3 checks: relative_positions, shaw_attention_direct, shaw_attention, RelativePositionBias,
t5_bucket, alibi_slopes, alibi_bias."""

from grader.exercise import Exercise, declared
from grader.spec import SEED, Check, Mistake, draw_choice, draw_int, find, same, unseen_like

# head counts for alibi_slopes' twins: powers of two (one sequence) and the others (two interleaved)
POWERS_OF_TWO = tuple(1 << n for n in range(14))  # up to 8192: past it float32 slopes drift from exact ones
NOT_POWERS = tuple(n for n in range(3, 2049) if n & (n - 1))


def heads(*among, lo=1, hi=8192):
    """A head count drawn from `among` (POWERS_OF_TWO or NOT_POWERS) within [lo, hi], for each student."""
    return draw_choice(*[n for n in among if lo <= n <= hi])


def square(lo, hi):
    """q_len = k_len, drawn in [lo, hi] for each student (args of relative_positions)."""
    return [draw_int(lo, hi, name="n"), same("n")]


def randn(*shape, seed=0, scale=1.0):
    return {"t": "randn", "shape": list(shape), "seed": seed, "scale": scale}


def shaw_inputs(batch, heads, q_len, k_len, head_dim, max_distance, seed=0, table_scale=0.5):
    """Positional args of shaw_attention: q, k, v, rel_k, rel_v, max_distance (seeded, as data)."""
    rows = 2 * max_distance + 1
    return [randn(batch, heads, q_len, head_dim, seed=seed), randn(batch, heads, k_len, head_dim, seed=seed + 1),
            randn(batch, heads, k_len, head_dim, seed=seed + 2),
            randn(rows, head_dim, seed=seed + 3, scale=table_scale),
            randn(rows, head_dim, seed=seed + 4, scale=table_scale), max_distance]


def shaw(batch, heads, q_len, k_len, head_dim, max_distance, causal=False, seed=0):
    return {"args": shaw_inputs(batch, heads, q_len, k_len, head_dim, max_distance, seed),
            "kwargs": {"causal": causal}}


SHAW_KINDS = ("sign_flipped", "clip_off_by_one", "unscaled", "value_ignored", "causal_flipped")

ALIGN_HINT = ("with fewer queries than keys, query i sits at position k_len − q_len + i (after the cached keys); "
              "relative_positions(q_len, k_len) already gives j − i for that alignment")
DEVICE_HINT = ("the bias was built on another device than {where}: create the positions with device={device} "
               "(a hard-coded 'cuda' if torch.cuda.is_available() else 'cpu' breaks a CPU model on a GPU machine)")


def drawn(*shape, scale=1.0):
    return {"t": "randn", "shape": list(shape), "seed": SEED, "scale": scale}


def shaw_drawn(causal):
    """shaw_attention's inputs with B=2 and H, L, d, K drawn: q, k, v (2, H, L, d), tables (2K + 1, d), K."""
    q = drawn(2, draw_int(1, 4, name="h"), draw_int(2, 9, name="l"), draw_choice(4, 8, name="d"))
    k, v = drawn(2, same("h"), same("l"), same("d")), drawn(2, same("h"), same("l"), same("d"))
    rel_k, rel_v = (drawn(same("max_distance", times=2, plus=1), same("d"), scale=0.5) for _ in range(2))
    return {"args": [q, k, v, rel_k, rel_v, draw_int(1, 4, name="max_distance")], "kwargs": {"causal": causal}}


# Shaw attention's two forms mask the same way, in the same statement: one ladder for both
SHAW_CAUSAL_FLIPPED = dict(
    hints=(
        "causal means a query sees its own key and the keys before it: the keys to hide are those after the "
        "query, where the key's position minus the query's is positive.",
        "the mask on the logits `scores` when `causal`: -inf where the distances `rel` (key minus query) are "
        "greater than 0.",
        "key line: `scores = scores.masked_fill(rel > 0, float(\"-inf\"))`",
    ),
    wrong="scores = scores.masked_fill(rel < 0, float(\"-inf\"))",
)

# messages that more than one mistake shows (the same slip in two exercises)
_SHAW_SIGN_FLIPPED_MESSAGE = (
    "the relative distance has the wrong sign: the tables are indexed with i − j. Shaw et al. use clip(j − i, "
    "−K, K) + K (key position minus query position), so a key one step before the query reads row K − 1"
)
_SHAW_CLIP_OFF_BY_ONE_MESSAGE = (
    "distances are clipped at ±(K − 1), so rows 0 and 2K of the tables are never read: clip j − i to [−K, K] (2K "
    "+ 1 rows), then add K"
)
_SHAW_UNSCALED_MESSAGE = (
    "the relative logit q·a^K is not divided by sqrt(d): in e_ij = q_i·(k_j + a^K_ij) / sqrt(d) both terms are "
    "scaled"
)
_SHAW_VALUE_IGNORED_MESSAGE = (
    "the value table is ignored: the output is sum_j alpha_ij (v_j + a^V_ij), not just attn @ v"
)
_SHAW_CAUSAL_FLIPPED_MESSAGE = (
    "the causal mask points the wrong way: it hides the keys before the query and keeps those after it. Mask the "
    "keys with j − i > 0 (relative_positions > 0)"
)


# ---- relative_positions --------------------------------------------------------------------------
REL = "relative_positions"

REL_MISTAKES = ("rel_sign_flipped", "rel_start_aligned")

RELATIVE_POSITIONS_CHECKS = [
    Check(REL, "j − i for q_len = k_len = 5", "call", {"args": [5, 5]}, public=True, mistakes=REL_MISTAKES,
          id="j_i_q_len_k_len_5", twin={"args": square(2, 1101)}),
    Check(REL, "decoding: 3 queries aligned to the end of 8 keys", "call", {"args": [3, 8]}, public=True,
          mistakes=REL_MISTAKES, hint=ALIGN_HINT, id="decoding_3_queries_aligned_end_8_keys",
          twin={"args": [draw_int(2, 30), draw_int(31, 100)]}),
    Check(REL, "q_len=0 raises ValueError naming it", "raises", {"args": [0, 4]}, expect="raises",
          mentions=("q_len",), public=True, id="q_len_0_raises_valueerror_naming",
          twin={"args": [0, draw_int(1, 1000)]}),
    Check(REL, "one decoding step: 1 query against 6 keys", "call", {"args": [1, 6]}, mistakes=REL_MISTAKES,
          hint=ALIGN_HINT, public=True, id="one_decoding_step_1_query_against_6_keys",
          twin={"args": [1, draw_int(2, 1201)]}),
    Check(REL, "a long square matrix (q_len = k_len = 300)", "call", {"args": [300, 300]}, mistakes=REL_MISTAKES,
          public=True, id="long_square_matrix_q_len_k_len_300", twin={"args": square(200, 1299)}),
    Check(REL, "k_len=-2 raises ValueError naming it", "raises", {"args": [2, -2]}, expect="raises",
          mentions=("k_len",), public=True, id="k_len_2_raises_valueerror_naming",
          twin={"args": [draw_int(1, 1000), draw_int(-1000, -1)]}),
    Check(REL, "built on the requested device (checked on the meta device)", "meta_call",
          {"args": [3, 5], "kwargs": {"device": "meta"}}, expect="ok",
          hint="create both aranges with device=device", public=True, id="built_requested_device_checked_meta",
          twin={"args": [draw_int(1, 40), draw_int(40, 80)], "kwargs": {"device": "meta"}}),
]

RELATIVE_POSITIONS = Exercise(
    "relative_positions",
    convention="`(q_len, k_len)` integer matrix of j − i, queries aligned to the end",
    checks=RELATIVE_POSITIONS_CHECKS,
    main=[
        unseen_like(find(RELATIVE_POSITIONS_CHECKS, REL, "j_i_q_len_k_len_5"),
                    {"args": [draw_int(1, 40), draw_int(40, 80)]},
                    "j − i for q_len and k_len drawn for this submission", id="main_distances_v2"),
    ],
    hints=(
        "the matrix holds, for each query row and key column, how far the key is from the query: key position minus "
        "query position.",
        "query i sits at position k_len - q_len + i, so the query positions are "
        "`torch.arange(k_len - q_len, k_len)`; the key positions are 0 .. k_len - 1.",
        "broadcasting builds the matrix: a row vector minus a column vector, indexed `[None, :]` and `[:, None]`. "
        "Rows are queries and columns keys: R[i, j] = (position of key j) - (position of query i).",
        "build both aranges with device=device, and check q_len and k_len first."
        " Call them `query_pos` and `key_pos`.",
        "key line: `return key_pos[None, :] - query_pos[:, None]`",
    ),
    mistakes={
        "rel_sign_flipped": Mistake(
            "relative_positions",
            "the sign is flipped: you compute i − j; the convention (Shaw et al., T5) is j − i, key position minus "
            "query position",
            hints=(
                "the relative position is the key's position minus the query's: positive for keys after the query.",
                "the subtraction at the end: the key positions, `key_pos`, as a row vector, minus the query "
                "positions, `query_pos`, as a column vector.",
                "key line: `return key_pos[None, :] - query_pos[:, None]`",
            ),
            wrong="return query_pos[:, None] - key_pos[None, :]",
        ),
        "rel_start_aligned": Mistake(
            "relative_positions",
            "the queries are aligned to the start: with fewer queries than keys, query i sits at position k_len − "
            "q_len + i (after the cached keys), not at i",
            hints=(
                "with fewer queries than keys the queries are the newest tokens: they sit at the end of the keys, not "
                "at their start.",
                "the query positions, `query_pos`: the last q_len of the k_len positions.",
                "key line: `query_pos = torch.arange(k_len - q_len, k_len, device=device)`",
            ),
            wrong="query_pos = torch.arange(q_len, device=device)",
        ),
    },
)


# ---- shaw_attention_direct -----------------------------------------------------------------------
DIRECT = "shaw_attention_direct"

DIRECT_MISTAKES = tuple(f"shaw_direct_{k}" for k in SHAW_KINDS)

SHAW_ATTENTION_DIRECT_CHECKS = [
    Check(DIRECT, "matches the reference: B=2, H=3, L=7, d=8, K=2", "call", shaw(2, 3, 7, 7, 8, 2), public=True,
          mistakes=DIRECT_MISTAKES, id="matches_reference_b_2_h_3_l_7_d_8_k_2"),
    Check(DIRECT, "causal, decoding: 3 queries against 9 keys", "call", shaw(2, 2, 3, 9, 8, 2, causal=True, seed=5),
          public=True, mistakes=DIRECT_MISTAKES, hint=ALIGN_HINT, id="causal_decoding_3_queries_against_9_keys"),
    Check(DIRECT, "causal, B=1, H=4, L=12, d=16, K=3", "call", shaw(1, 4, 12, 12, 16, 3, causal=True, seed=9),
          mistakes=DIRECT_MISTAKES, public=True, id="causal_b_1_h_4_l_12_d_16_k_3"),
    Check(DIRECT, "float64 in, float64 out", "call", {**shaw(1, 2, 5, 5, 4, 1, seed=3), "dtype": "float64"},
          mistakes=DIRECT_MISTAKES, hint="keep the input's dtype: build nothing in float32 explicitly",
          public=True, id="float64_float64_out"),
]

SHAW_ATTENTION_DIRECT = Exercise(
    "shaw_attention_direct",
    convention="Shaw et al. (2018) written as the paper does, with a `(B, H, Lq, Lk, d)` tensor of "
               "relative embeddings: the baseline",
    checks=SHAW_ATTENTION_DIRECT_CHECKS,
    main=[
        unseen_like(find(SHAW_ATTENTION_DIRECT_CHECKS, DIRECT, "matches_reference_b_2_h_3_l_7_d_8_k_2"),
                    shaw_drawn(False),
                    "matches the reference on inputs drawn for this submission", id="main_bidirectional"),
        unseen_like(find(SHAW_ATTENTION_DIRECT_CHECKS, DIRECT, "causal_decoding_3_queries_against_9_keys"),
                    shaw_drawn(True),
                    "causal, on inputs drawn for this submission", id="main_causal"),
    ],
    hints=(
        "each pair (i, j) reads one row of each table, the row of its clipped distance; the key table adds to the "
        "logit, the value table to the output.",
        "the row of pair (i, j) is c = clip(j - i, -K, K) + K: `relative_positions(Lq, Lk, device=q.device)`, "
        "`.clamp(-K, K)`, plus K. Indexing the table with it, `rel_k[idx]`, gives (Lq, Lk, d).",
        "relative logits by broadcasting: q (B, H, Lq, d) with a new axis before d, times a^K (Lq, Lk, d), summed "
        "over d, is (B, H, Lq, Lk). Both logit terms are divided by sqrt(d).",
        "causal: before the softmax, give -inf to the keys after the query, where relative_positions > 0. The value "
        "term: attn (B, H, Lq, Lk) with a new last axis, times a^V, summed over the keys."
        " The value vectors of the pairs are `a_v = rel_v[c]` (Lq, Lk, d), and `attn` the softmax weights.",
        "key line: `return attn @ v + (attn.unsqueeze(-1) * a_v).sum(-2)`",
    ),
    mistakes={
        "shaw_direct_sign_flipped": Mistake(
            "shaw_attention_direct",
            _SHAW_SIGN_FLIPPED_MESSAGE,
            hints=(
                "the tables are indexed by the key's position minus the query's, j - i: a key one step before the "
                "query reads row K - 1, one step after it row K + 1.",
                "the index of the table rows: the distances `rel`, relative_positions(Lq, Lk) (key minus query), "
                "clipped to [-K, K] with K = max_distance, plus K; do not negate them.",
                "key line: `idx = rel.clamp(-max_distance, max_distance) + max_distance`",
            ),
            wrong="idx = (-rel).clamp(-max_distance, max_distance) + max_distance",
        ),
        "shaw_direct_clip_off_by_one": Mistake(
            "shaw_attention_direct",
            _SHAW_CLIP_OFF_BY_ONE_MESSAGE,
            hints=(
                "the tables have 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so rows 0 "
                "and 2K serve every key K or more steps away.",
                "the clip of the distances `rel` before indexing: the bounds are -K and K (K = max_distance), then add "
                "K.",
                "key line: `idx = rel.clamp(-max_distance, max_distance) + max_distance`",
            ),
            wrong="idx = rel.clamp(-(max_distance - 1), max_distance - 1) + max_distance",
        ),
        "shaw_direct_unscaled": Mistake(
            "shaw_attention_direct",
            _SHAW_UNSCALED_MESSAGE,
            hints=(
                "Shaw et al. add the relative key to the key before the dot product, e_ij = q_i·(k_j + a^K_ij) / "
                "sqrt(d): both logit terms are divided by sqrt(d), not q·k alone.",
                "the logits: add q·a^K (q against the key rows of the pairs, `a_k`) to q·k first, then divide the sum "
                "by the square root of q's last dimension.",
                "key line: `scores = q @ k.transpose(-2, -1) + (q.unsqueeze(-2) * a_k).sum(-1)`",
            ),
            wrong="scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + (q.unsqueeze(-2) * a_k).sum(-1)",
            also={"scores = scores / math.sqrt(q.shape[-1])": "pass"},
        ),
        "shaw_direct_value_ignored": Mistake(
            "shaw_attention_direct",
            _SHAW_VALUE_IGNORED_MESSAGE,
            hints=(
                "the value table carries position into the output too: z_i = sum_j alpha_ij (v_j + a^V_ij), so each "
                "key's weight also takes the value row of its distance.",
                "what you return: besides `attn @ v`, the weights `attn` times the value rows of the pairs, `a_v = "
                "rel_v[idx]` (Lq, Lk, d), summed over the keys.",
                "key line: `return attn @ v + (attn.unsqueeze(-1) * a_v).sum(-2)`",
            ),
            wrong="return attn @ v",
        ),
        "shaw_direct_causal_flipped": Mistake(
            "shaw_attention_direct",
            _SHAW_CAUSAL_FLIPPED_MESSAGE,
            **SHAW_CAUSAL_FLIPPED,
        ),
    },
)


# ---- shaw_attention ------------------------------------------------------------------------------
SHAW = "shaw_attention"

SHAW_MISTAKES = tuple(f"shaw_{k}" for k in SHAW_KINDS)
# bfloat16 at L=64: the reference rounds every step to 8 bits (scores, weights, the weights summed per table row
# by scatter_add), so correct code that works in float32 or float64 and rounds once differs from it by up to
# 0.038 beyond rtol 0.02 · |expected| (3,000 drawn inputs; the reference's own direct form, also all bfloat16,
# by as much), where the default atol is 0.02; each known mistake differs by at least 1.0. atol 2^-4 keeps both.
SHAW_BF16_TOL = {"atol": 0.0625}

# The scale check: B=1, H=8, L=2048, d=64, under a 3 GiB allowance. The efficient form needs about 0.5 GB beyond
# its inputs; gathering the (Lq, Lk, d) tables (1.1 GB each, allowed by the contract) needs about 2.2 GB; one
# (1, 8, 2048, 2048, 64) float32 intermediate needs 8.6 GB. Sizes the learner is told about when they fail:
L_BIG = 2048
KNOWN_SIZES = [
    [[1, 8, L_BIG, L_BIG, 64], 4, "one float32 d-vector for every (batch, head, query, key): the broadcast product "
                                  "q[..., None, :] * a_K, or the (Lq, Lk, d) table repeated over batch and heads"],
    [[8, L_BIG, L_BIG, 64], 4, "one float32 d-vector for every (head, query, key): the table repeated over heads"],
    [[L_BIG, L_BIG, 64], 4, "a gathered (Lq, Lk, d) float32 table: allowed, but not several at once beside the "
                            "(B, H, Lq, Lk) logits"],
]
SCALE_HINT = ("never build a (B, H, Lq, Lk, d) tensor and never repeat the table over batch or heads: gather "
              "q·rel_k from (q @ rel_k.T), shape (B, H, Lq, 2K+1), and scatter-add the attention weights into "
              "2K+1 slots before multiplying by rel_v (section 3.3)")

SCALE_NAME = f"runs at B=1, H=8, L={L_BIG}, d=64, K=16 within a 3 GiB memory allowance"
# the allowance both checks at scale measure against (on the meta device, and in the capped run), and what they name
SCALE_BUDGET = {"allowance_mib": 3072, "known_sizes": KNOWN_SIZES, "where": f"at B=1, H=8, L={L_BIG}, d=64, K=16"}
SCALE_LIMITS = {**SCALE_BUDGET, "timeout_s": 20, "sample_step": 64,
                "reference_note": "The efficient form needs about 0.5 GB and one second here"}


def shaw_at_scale():
    """The scale check's call on inputs drawn for each student: q, k, v (1, 8, L_BIG, 64), tables (33, 64), K = 16,
    causal. A main check, its own twin: a fixed input would need a twin at the same size, a second run of about a
    second in every grade."""
    q, k, v = (drawn(1, 8, L_BIG, 64) for _ in range(3))
    rel_k, rel_v = (drawn(33, 64, scale=0.5) for _ in range(2))
    return {"args": [q, k, v, rel_k, rel_v, 16], "kwargs": {"causal": True}, **SCALE_LIMITS}


SHAW_ATTENTION_CHECKS = [
    Check(SHAW, "matches the reference: B=2, H=3, L=7, d=8, K=2", "call", shaw(2, 3, 7, 7, 8, 2), public=True,
          mistakes=SHAW_MISTAKES, id="matches_reference_b_2_h_3_l_7_d_8_k_2"),
    Check(SHAW, "causal, B=2, H=3, L=7, d=8, K=2", "call", shaw(2, 3, 7, 7, 8, 2, causal=True, seed=20),
          public=True, mistakes=SHAW_MISTAKES, id="causal_b_2_h_3_l_7_d_8_k_2"),
    Check(SHAW, "causal, decoding: 3 queries against 9 keys", "call", shaw(2, 2, 3, 9, 8, 2, causal=True, seed=5),
          public=True, mistakes=SHAW_MISTAKES, hint=ALIGN_HINT, id="causal_decoding_3_queries_against_9_keys"),
    Check(SHAW, "with zero tables it is plain scaled dot-product attention", "call",
          {"args": [randn(2, 2, 6, 8, seed=7), randn(2, 2, 6, 8, seed=8), randn(2, 2, 6, 8, seed=9),
                    randn(5, 8, scale=0.0), randn(5, 8, scale=0.0), 2], "kwargs": {"causal": True}},
          expect="property", property="plain_attention_without_tables", public=True,
          property_params={"q": randn(2, 2, 6, 8, seed=7), "k": randn(2, 2, 6, 8, seed=8),
                           "v": randn(2, 2, 6, 8, seed=9), "causal": True},
          hint="e_ij = (q_i·k_j + q_i·a^K_ij) / sqrt(d), softmax over the keys, masked with -inf above the diagonal",
          id="zero_tables_plain_scaled_dot_product"),
    Check(SHAW, "runs on the device of its inputs (checked on the meta device)", "meta_call",
          {"args": shaw_inputs(1, 2, 4, 6, 8, 2), "kwargs": {"causal": True}}, expect="ok", public=True,
          hint="build the relative positions with device=q.device", id="runs_device_inputs_checked_meta_device"),
    Check(SHAW, "a table with the wrong number of rows raises ValueError naming rel_k", "raises",
          {"args": shaw_inputs(1, 2, 4, 4, 8, 2)[:3] + [randn(4, 8), randn(5, 8), 2]}, expect="raises",
          mentions=("rel_k",), public=True, hint="rel_k and rel_v must have 2 * max_distance + 1 rows",
          id="table_wrong_number_rows_raises"),
    Check(SHAW, "one query against 10 keys, causal", "call", shaw(1, 2, 1, 10, 8, 3, causal=True, seed=11),
          points=2, mistakes=SHAW_MISTAKES, hint=ALIGN_HINT, public=True, id="one_query_against_10_keys_causal"),
    Check(SHAW, "K larger than the sequence (nothing is clipped)", "call", shaw(1, 3, 6, 6, 8, 10, seed=12),
          mistakes=SHAW_MISTAKES, public=True, id="k_larger_than_sequence_nothing_clipped"),
    Check(SHAW, "K = 0: one vector for every distance", "call", shaw(2, 2, 5, 5, 4, 0, seed=13),
          public=True, id="k_0_one_vector_every_distance"),
    Check(SHAW, "B=3, H=4, L=33, d=16, K=4, causal", "call", shaw(3, 4, 33, 33, 16, 4, causal=True, seed=14),
          points=2, mistakes=SHAW_MISTAKES, public=True, id="b_3_h_4_l_33_d_16_k_4_causal"),
    Check(SHAW, "float64 in, float64 out", "call", {**shaw(1, 2, 5, 5, 4, 1, seed=3), "dtype": "float64"},
          mistakes=SHAW_MISTAKES, hint="keep the input's dtype: build nothing in float32 explicitly",
          public=True, id="float64_float64_out"),
    Check(SHAW, "gradients reach q, rel_k and rel_v (the tables can be trained)", "call_with_grads",
          {**shaw(2, 2, 6, 6, 8, 2, causal=True, seed=15), "wrt": [0, 3, 4],
           "names": ["q", "k", "v", "rel_k", "rel_v"]}, points=2, mistakes=SHAW_MISTAKES,
          hint="use out-of-place operations on tensors that need gradients (gather, scatter_add, matmul)",
          public=True, id="gradients_reach_q_rel_k_rel_v_tables_can"),
    Check(SHAW, "bfloat16 in, bfloat16 out (the CUDA check's dtype, on the CPU)", "call",
          {**shaw(2, 4, 64, 64, 32, 8, causal=True, seed=17), "dtype": "bfloat16"}, mistakes=SHAW_MISTAKES,
          tol=SHAW_BF16_TOL,
          hint="keep the input's dtype: build nothing in float32 explicitly", public=True, id="bfloat16_cpu"),
    # the scale check's counterpart in the self-check: the same call measured on the meta device, for free
    Check(SHAW, f"no buffer over 3 GiB at B=1, H=8, L={L_BIG}, d=64, K=16 (measured on the meta device)",
          "meta_largest_buffer",
          {**shaw(1, 8, L_BIG, L_BIG, 64, 16, causal=True, seed=16), **SCALE_BUDGET},
          expect="ok", hint=SCALE_HINT, public=True, id="no_buffer_over_3_gib_on_meta"),
    Check(SHAW, "negative max_distance raises ValueError naming it", "raises",
          {"args": shaw_inputs(1, 1, 3, 3, 4, 0)[:5] + [-1]}, expect="raises", mentions=("max_distance",),
          public=True, id="negative_max_distance_raises_valueerror"),
    *[
        Check(SHAW, f"on CUDA in {dtype}", "call", {**shaw(2, 4, 64, 64, 32, 8, causal=True, seed=17), "device": "cuda",
                                                     "dtype": dtype},
              cuda=True, tol=SHAW_BF16_TOL if dtype == "bfloat16" else None,
              hint="build the relative positions with device=q.device", id=f"cuda_{dtype}")
        for dtype in ("float32", "bfloat16")
    ],
]

SHAW_ATTENTION = Exercise(
    "shaw_attention",
    convention="the same result without that tensor: tables `(2K+1, head_dim)` shared by the heads, row "
               "clip(j − i, −K, K) + K, both logit terms divided by √d, values plus the a^V term",
    checks=SHAW_ATTENTION_CHECKS,
    hidden=("memory_capped_call",),  # hidden_probes.py: the run at scale under a memory cap
    main=[
        unseen_like(find(SHAW_ATTENTION_CHECKS, SHAW, "matches_reference_b_2_h_3_l_7_d_8_k_2"), shaw_drawn(False),
                    "matches the reference on inputs drawn for this submission", id="main_bidirectional"),
        unseen_like(find(SHAW_ATTENTION_CHECKS, SHAW, "causal_b_2_h_3_l_7_d_8_k_2"), shaw_drawn(True),
                    "causal, on inputs drawn for this submission", id="main_causal"),
        unseen_like(Check(SHAW, SCALE_NAME, "memory_capped_call", hint=SCALE_HINT), shaw_at_scale(), SCALE_NAME,
                    id="main_runs_at_scale_within_3_gib", points=3),
    ],
    hints=(
        "never build the (Lq, Lk, d) table: compute the product of each query with the 2K + 1 table rows once, then "
        "pick (for the keys) or pool (for the values) by distance.",
        "keys: P = q @ rel_k.T holds q_i·w^K_r for every row r. The relative logit of pair (i, j) is P[..., i, c_ij]: "
        "`torch.gather` along the last axis, with the (Lq, Lk) index expanded (a view, no copy) to "
        "(B, H, Lq, Lk).",
        "values: S[..., i, r] = the sum of attn[..., i, j] over the keys j with c_ij = r. `scatter_add_` computes it "
        "into a zeros tensor of shape (B, H, Lq, 2K + 1); then S @ rel_v.",
        "no `repeat`, no broadcast product with a (Lq, Lk, d) table, no `.contiguous()` of an expanded table: each "
        "builds a (B, H, Lq, Lk, d)-sized tensor, 8.6 GB at L = 2048."
        " The sizes are `batch, heads, q_len, head_dim = q.shape`; `idx` is the expanded index of the clipped "
        "distances, and `attn` the softmax weights.",
        "key line: `per_row = attn.new_zeros(batch, heads, q_len, 2 * max_distance + 1).scatter_add_(-1, idx, "
        "attn)`",
    ),
    mistakes={
        "shaw_sign_flipped": Mistake(
            "shaw_attention",
            _SHAW_SIGN_FLIPPED_MESSAGE,
            hints=(
                "the tables are indexed by the key's position minus the query's, j - i: a key one step before the "
                "query reads row K - 1, one step after it row K + 1.",
                "the index of the table rows: the distances `rel`, relative_positions(Lq, Lk) (key minus query), "
                "clipped to [-K, K] with K = max_distance, plus K, the whole expanded (a view) to (batch, heads, "
                "q_len, k_len); do not negate them.",
                "key line: `idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
                "k_len)`",
            ),
            wrong="idx = ((-rel).clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
                  "k_len)",
        ),
        "shaw_clip_off_by_one": Mistake(
            "shaw_attention",
            _SHAW_CLIP_OFF_BY_ONE_MESSAGE,
            hints=(
                "the tables have 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so rows 0 "
                "and 2K serve every key K or more steps away.",
                "the clip of the distances `rel` before indexing: the bounds are -K and K (K = max_distance), then add "
                "K, the whole expanded (a view) to (batch, heads, q_len, k_len).",
                "key line: `idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
                "k_len)`",
            ),
            wrong="idx = (rel.clamp(-(max_distance - 1), max_distance - 1) + max_distance).expand(batch, heads, "
                  "q_len, k_len)",
        ),
        "shaw_unscaled": Mistake(
            "shaw_attention",
            _SHAW_UNSCALED_MESSAGE,
            hints=(
                "Shaw et al. add the relative key to the key before the dot product, e_ij = q_i·(k_j + a^K_ij) / "
                "sqrt(d): both logit terms are divided by sqrt(d), not q·k alone.",
                "the logits: the relative logits `rel_logits` (q against the key table, gathered by distance) join q·k "
                "first, and the sum is divided by sqrt(head_dim), with `head_dim = q.shape[-1]`.",
                "key line: `scores = (q @ k.transpose(-2, -1) + rel_logits) / math.sqrt(head_dim)`",
            ),
            wrong="scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim) + rel_logits",
        ),
        "shaw_value_ignored": Mistake(
            "shaw_attention",
            _SHAW_VALUE_IGNORED_MESSAGE,
            hints=(
                "the value table carries position into the output too: z_i = sum_j alpha_ij (v_j + a^V_ij), so each "
                "key's weight also takes the value row of its distance.",
                "what you return: besides `attn @ v`, the weights `attn` summed per table row with `scatter_add_` into "
                "`per_row` (B, H, Lq, 2K + 1), times the value table rel_v.",
                "key line: `return attn @ v + per_row @ rel_v`",
            ),
            wrong="return attn @ v",
        ),
        "shaw_causal_flipped": Mistake(
            "shaw_attention",
            _SHAW_CAUSAL_FLIPPED_MESSAGE,
            **SHAW_CAUSAL_FLIPPED,
        ),
    },
)


# ---- RelativePositionBias ------------------------------------------------------------------------
def bias_forward(num_heads, max_distance, q_len, k_len, **kw):
    return {"ctor_args": [num_heads, max_distance], "ctor_kwargs": {}, "forward_args": [q_len, k_len], **kw}


def seeded(*args, **kw):
    """module_forward params with seeded (identical) parameter values for learner and reference."""
    return {**bias_forward(*args, **kw), "seed_params": 0}


BIAS = "RelativePositionBias"

BIAS_MISTAKES = ("bias_sign_flipped", "bias_clip_off_by_one")

RELATIVE_POSITION_BIAS_CHECKS = [
    Check(BIAS, "bias for H=4, K=3, q_len = k_len = 6", "module_forward", seeded(4, 3, 6, 6), public=True,
          mistakes=BIAS_MISTAKES, id="bias_h_4_k_3_q_len_k_len_6"),
    Check(BIAS, "depends only on j − i and is constant beyond ±K", "module_forward", seeded(3, 2, 7, 7),
          expect="property", property="depends_only_on_distance",
          property_params={"num_heads": 3, "q_len": 7, "k_len": 7, "max_distance": 2}, public=True,
          mistakes=BIAS_MISTAKES, id="depends_only_j_i_constant_beyond_k"),
    Check(BIAS, "one nn.Embedding(2K+1, num_heads) named bias, all trainable", "module_info",
          {"ctor_args": [4, 3], "ctor_kwargs": {}, "attr": "bias"}, expect="fields",
          fields={"attr_type": "Embedding", "n_trainable": 28, "n_params": 28}, public=True,
          hint="self.bias = nn.Embedding(2 * max_distance + 1, num_heads), and no other parameters",
          id="one_nn_embedding_2k_1_num_heads_named"),
    Check(BIAS, "built on the module's device (checked by moving it to the meta device)", "meta_forward",
          bias_forward(4, 3, 5, 5), expect="ok", public=True,
          hint=DEVICE_HINT.format(where="the module's table", device="self.bias.weight.device"),
          id="built_module_s_device_checked_moving",
          twin=bias_forward(draw_int(1, 16), draw_int(0, 8), draw_int(1, 12), draw_int(1, 12))),
    Check(BIAS, "decoding: 2 queries against 7 keys", "module_forward", seeded(4, 2, 2, 7), points=2,
          mistakes=BIAS_MISTAKES, hint=ALIGN_HINT, public=True, id="decoding_2_queries_against_7_keys"),
    Check(BIAS, "initialised with trunc_normal_(std=0.02)", "module_info",
          {"ctor_args": [16, 32], "ctor_kwargs": {}, "attr": "bias"}, expect="fields",
          fields={"attr_std": [0.016, 0.024]},
          hint="nn.init.trunc_normal_(self.bias.weight, std=0.02)",
          public=True, id="initialised_trunc_normal_std_0_02"),
    Check(BIAS, "long sequences reuse the edge rows (K=4, L=50)", "module_forward", seeded(2, 4, 50, 50),
          mistakes=BIAS_MISTAKES, public=True, id="long_sequences_reuse_edge_rows_k_4_l_50"),
    Check(BIAS, "follows .to(torch.float64)", "module_forward", seeded(2, 2, 4, 4, dtype="float64"),
          mistakes=BIAS_MISTAKES, hint="look up the table as it is; do not cast the output to float32",
          public=True, id="follows_torch_float64"),
    Check(BIAS, "num_heads=0 raises ValueError naming it", "raises", {"ctor_args": [0, 3], "ctor_kwargs": {}},
          expect="raises", mentions=("num_heads",), public=True, id="num_heads_0_raises_valueerror_naming",
          twin={"ctor_args": [0, draw_int(0, 1000)], "ctor_kwargs": {}}),
    Check(BIAS, "max_distance=-1 raises ValueError naming it", "raises", {"ctor_args": [4, -1], "ctor_kwargs": {}},
          expect="raises", mentions=("max_distance",), public=True, id="max_distance_1_raises_valueerror_naming",
          twin={"ctor_args": [draw_int(1, 64), draw_int(-1000, -1)], "ctor_kwargs": {}}),
    Check(BIAS, "on CUDA", "module_forward", seeded(8, 16, 40, 64, device="cuda"), cuda=True,
          hint=DEVICE_HINT.format(where="the module's table", device="self.bias.weight.device"), id="cuda"),
]

RELATIVE_POSITION_BIAS = Exercise(
    "RelativePositionBias",
    convention="`(1, H, q_len, k_len)`: a learned bias per head and clipped distance (attribute "
               "`bias: nn.Embedding(2K+1, num_heads)`), on the module's device, for SDPA's float "
               "`attn_mask`",
    checks=RELATIVE_POSITION_BIAS_CHECKS,
    main=[
        unseen_like(find(RELATIVE_POSITION_BIAS_CHECKS, BIAS, "bias_h_4_k_3_q_len_k_len_6"),
                    {"ctor_args": [draw_int(1, 8), draw_int(1, 6)], "ctor_kwargs": {},
                     "forward_args": [draw_int(1, 6, name="q"), draw_int(6, 12)], "seed_params": SEED},
                    "bias for H, K, q_len and k_len drawn for this submission", id="main_bias"),
    ],
    hints=(
        "a small learned table holds one number per head and clipped distance; the bias of pair (i, j) is the row of "
        "its distance.",
        "the table is `nn.Embedding(2 * max_distance + 1, num_heads)` named self.bias, initialised with "
        "`nn.init.trunc_normal_(self.bias.weight, std=0.02)`.",
        "the index is relative_positions(q_len, k_len) clipped to [-K, K], plus K, built on the table's device: "
        "`device=self.bias.weight.device`.",
        "nn.Embedding returns (Lq, Lk, H): `permute(2, 0, 1)` puts the heads first and `unsqueeze(0)` adds the "
        "batch axis."
        " Call the distances `rel` (relative_positions on the table's device) and the max_distance K.",
        "key line: `values = self.bias(rel.clamp(-K, K) + K)`",
    ),
    mistakes={
        "bias_sign_flipped": Mistake(
            "RelativePositionBias",
            "the bias is indexed with i − j (Swin's query − key convention); here row clip(j − i, −K, K) + K holds "
            "distance j − i",
            hints=(
                "the table's rows are ordered by the key's position minus the query's, j - i: row K + 1 is the key one "
                "step after the query. Indexing with i - j reads every row's mirror image.",
                "the index of the lookup: the distances `rel`, relative_positions(q_len, k_len) (key minus query), "
                "clipped to [-K, K] with K = self.max_distance, plus K; do not negate them.",
                "key line: `values = self.bias(rel.clamp(-K, K) + K)`",
            ),
            wrong="values = self.bias((-rel).clamp(-K, K) + K)",
        ),
        "bias_clip_off_by_one": Mistake(
            "RelativePositionBias",
            "distances are clipped at ±(K − 1), so the first and last rows of the table are never used: clip j − i to "
            "[−K, K], then add K",
            hints=(
                "the table has 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so the first "
                "and last rows serve every key K or more steps away.",
                "the clip of the distances `rel` before the lookup: the bounds are -K and K (K = self.max_distance), "
                "then add K.",
                "key line: `values = self.bias(rel.clamp(-K, K) + K)`",
            ),
            wrong="values = self.bias(rel.clamp(-(K - 1), K - 1) + K)",
        ),
    },
)


# ---- t5_bucket -----------------------------------------------------------------------------------
def distances(start, end, shape=None):
    spec = {"t": "arange", "start": start, "end": end}
    return {**spec, "shape": shape} if shape else spec


T5 = "t5_bucket"

T5_MISTAKES = ("t5_causal_as_bidirectional", "t5_sign_flipped")

T5_BUCKET_CHECKS = [
    Check(T5, "bidirectional buckets for j − i in [−200, 200] (32 buckets, max_distance 128)", "call",
          {"args": [distances(-200, 201)]}, public=True, mistakes=T5_MISTAKES,
          id="bidirectional_buckets_j_i_200_200_32",
          twin={"args": [distances(draw_int(-400, -100), draw_int(100, 400))]}),
    Check(T5, "causal buckets for j − i in [−200, 200]", "call",
          {"args": [distances(-200, 201)], "kwargs": {"bidirectional": False}}, public=True, mistakes=T5_MISTAKES,
          hint="causal: n = max(i − j, 0) = max(−r, 0), all num_buckets for the past, no offset",
          id="causal_buckets_j_i_200_200",
          twin={"args": [distances(draw_int(-400, -100), draw_int(100, 400))], "kwargs": {"bidirectional": False}}),
    Check(T5, "keeps the shape of a (q, k) matrix of distances", "call", {"args": [distances(-20, 20, [5, 8])]},
          public=True, id="shape_q_k_matrix_distances",
          twin={"args": [{"t": "randint", "low": -300, "high": 300, "shape": [draw_int(2, 40), draw_int(2, 40)],
                          "seed": SEED}]}),
    Check(T5, "bidirectional, 64 buckets, max_distance 256, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"num_buckets": 64, "max_distance": 256}}, points=2,
          mistakes=T5_MISTAKES, public=True, id="bidirectional_64_buckets_max_distance",
          twin={"args": [distances(draw_int(-3000, -1500), draw_int(1500, 3000))],
                "kwargs": {"num_buckets": 64, "max_distance": 256}}),
    Check(T5, "causal, 8 buckets, max_distance 128, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"bidirectional": False, "num_buckets": 8}}, points=2,
          mistakes=T5_MISTAKES, public=True, id="causal_8_buckets_max_distance_128_every",
          twin={"args": [distances(draw_int(-3000, -1500), draw_int(1500, 3000))],
                "kwargs": {"bidirectional": False, "num_buckets": 8}}),
    Check(T5, "causal, 32 buckets, max_distance 256, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"bidirectional": False, "max_distance": 256}},
          mistakes=T5_MISTAKES, public=True, id="causal_32_buckets_max_distance_256_every",
          twin={"args": [distances(draw_int(-3000, -1500), draw_int(1500, 3000))],
                "kwargs": {"bidirectional": False, "max_distance": 256}}),
    Check(T5, "the output is on the input's device (checked on the meta device)", "meta_call",
          {"args": [distances(-10, 10)]}, expect="ok",
          hint="build every helper tensor from the input (zeros_like, ...)",
          public=True, id="output_input_s_device_checked_meta",
          twin={"args": [distances(draw_int(-300, -1), draw_int(1, 300))]}),
    Check(T5, "on CUDA", "call", {"args": [distances(-300, 300)], "kwargs": {"bidirectional": False}, "device": "cuda"},
          cuda=True, id="cuda", twin={"args": [distances(draw_int(-600, -100), draw_int(100, 600))],
                                      "kwargs": {"bidirectional": False}, "device": "cuda"}),
]

T5_BUCKET = Exercise(
    "t5_bucket",
    convention="T5's logarithmic buckets (Raffel et al., 2020), equal to transformers' "
               "`_relative_position_bucket`",
    checks=T5_BUCKET_CHECKS,
    main=[
        unseen_like(find(T5_BUCKET_CHECKS, T5, "bidirectional_buckets_j_i_200_200_32"),
                    {"args": [{"t": "arange", "start": draw_int(-300, -20), "end": draw_int(20, 300)}]},
                    "bidirectional buckets for distances drawn for this submission", id="main_bidirectional"),
        unseen_like(find(T5_BUCKET_CHECKS, T5, "causal_buckets_j_i_200_200"),
                    {"args": [{"t": "arange", "start": draw_int(-300, -20), "end": draw_int(20, 300)}],
                     "kwargs": {"bidirectional": False}},
                    "causal buckets for distances drawn for this submission", id="main_causal"),
    ],
    hints=(
        "the direction first. Bidirectional: halve num_buckets, add the halved count where r > 0, and use n = |r|. "
        "Causal: n = max(-r, 0) and no offset.",
        "max_exact = num_buckets // 2, after any halving. Below max_exact the bucket is n itself.",
        "from max_exact on: max_exact + log(n / max_exact) / log(max_distance / max_exact) · (num_buckets - "
        "max_exact), computed in float32, truncated with `.long()`, capped at num_buckets - 1. Clamp n to at "
        "least max_exact before the log, to keep log(0) out."
        " Call the bucket of a large distance `large`, the direction's offset `offset`, and the distance `n`.",
        "key line: `return offset + torch.where(n < max_exact, n, large)`",
    ),
    mistakes={
        "t5_causal_as_bidirectional": Mistake(
            "t5_bucket",
            "the causal buckets are computed with the bidirectional rule: with bidirectional=False use all num_buckets "
            "for n = max(i − j, 0) = max(−r, 0), with no offset for r > 0",
            hints=(
                "a causal model only looks back: with bidirectional=False all num_buckets serve the keys before the "
                "query, by their distance i - j, and every key after it falls into bucket 0. No upper half, no "
                "halving.",
                "the branch where `bidirectional` is false: no offset (zeros), the full num_buckets, and the distance "
                "n = max(-r, 0), which is 0 for every key after the query.",
                "key line: `n = (-r).clamp(min=0)`",
            ),
            wrong="n = r.abs()",
            also={"offset = torch.zeros_like(r, dtype=torch.long)": "num_buckets //= 2\n"
                                                                       "offset = (r > 0).long() * num_buckets"},
        ),
        "t5_sign_flipped": Mistake(
            "t5_bucket",
            "the direction is flipped: the input is r = j − i, so keys after the query have r > 0 (bidirectional: "
            "upper half of the buckets) and the causal distance is max(−r, 0)",
            hints=(
                "the input is r = j - i, key minus query: a key after the query has r > 0. Bidirectional, those keys "
                "take the upper half of the buckets; causal, the keys before the query have r < 0 and the distance -r.",
                "every place where the sign of r enters: the offset when `bidirectional`, for the keys with r > 0, and "
                "the causal distance max(-r, 0).",
                "key line: `offset = (r > 0).long() * num_buckets`",
            ),
            wrong="offset = (r < 0).long() * num_buckets",
        ),
    },
)


# ---- alibi_slopes --------------------------------------------------------------------------------
SLOPES = "alibi_slopes"

ALIBI_SLOPES_CHECKS = [
    Check(SLOPES, "8 heads: 1/2, 1/4, ..., 1/256", "call", {"args": [8]}, public=True, id="8_heads_1_2_1_4_1_256",
          twin=({"args": [heads(*POWERS_OF_TWO)]},) * 3),
    Check(SLOPES, "12 heads (not a power of two)", "call", {"args": [12]}, public=True,
          mistakes=("alibi_slopes_power_of_two_formula",), id="12_heads_not_power_two",
          twin={"args": [heads(*NOT_POWERS)]}),
    Check(SLOPES, "num_heads=0 raises ValueError naming it", "raises", {"args": [0]}, expect="raises",
          mentions=("num_heads",), public=True, id="num_heads_0_raises_valueerror_naming",
          twin={"args": [draw_int(-1000, 0)]}),
    # one input, one answer: no draw can make it unseen, so it gives feedback and earns no points (grader/twins.py)
    Check(SLOPES, "1 head", "call", {"args": [1]}, public=True, id="1_head", points=0),
    Check(SLOPES, "112 heads (BLOOM-176B)", "call", {"args": [112]}, points=2,
          mistakes=("alibi_slopes_power_of_two_formula",), public=True, id="112_heads_bloom_176b",
          twin={"args": [heads(*NOT_POWERS, lo=65)]}),
    Check(SLOPES, "24 heads", "call", {"args": [24]}, mistakes=("alibi_slopes_power_of_two_formula",),
          public=True, id="24_heads", twin={"args": [heads(*NOT_POWERS, lo=17)]}),
    Check(SLOPES, "6 heads", "call", {"args": [6]}, mistakes=("alibi_slopes_power_of_two_formula",),
          public=True, id="6_heads", twin={"args": [heads(*NOT_POWERS)]}),
    Check(SLOPES, "64 heads", "call", {"args": [64]}, public=True, id="64_heads",
          twin=({"args": [heads(*POWERS_OF_TWO, lo=16)]},) * 4),
]

ALIBI_SLOPES = Exercise(
    "alibi_slopes",
    convention="`(num_heads,)`: the geometric slopes of Press et al. (2022), including head counts that are "
               "not powers of two",
    checks=ALIBI_SLOPES_CHECKS,
    main=[
        # no power-of-two main: one call of alibi_slopes(n) has only 14 powers of two up to 8192 to draw from, fewer
        # than Settings' twins.min_space; that case rests on the several-draw twins of the 8, 1 and 64 heads checks
        unseen_like(find(ALIBI_SLOPES_CHECKS, SLOPES, "12_heads_not_power_two"), {"args": [heads(*NOT_POWERS)]},
                    "a number of heads (not a power of two) drawn for this submission", id="main_other_v2"),
    ],
    hints=(
        "for n a power of two: start = 2^(-8/n) and the slopes start^1, start^2, ..., start^n.",
        "otherwise c = 2^floor(log2 n), the largest power of two not above n (an int's `bit_length()` gives its "
        "exponent): the c slopes of c heads, then the n - c odd powers start'^1, start'^3, ... of "
        "start' = 2^(-8/(2c)).",
        "compute in float32, as BLOOM does, on `device`.",
        "key line: `c = 1 << (num_heads.bit_length() - 1)`",
    ),
    mistakes={
        "alibi_slopes_power_of_two_formula": Mistake(
            "alibi_slopes",
            "the power-of-two formula 2^(-8h/n) is used for a head count that is not a power of two. Take c = "
            "2^floor(log2 n): the c slopes 2^(-8h/c), then every other slope of the 2c-head sequence for the remaining "
            "n − c heads (slopes(2c)[0::2][:n − c])",
            hints=(
                "the geometric formula holds for a power-of-two head count only; other counts take the slopes of the "
                "largest power of two below them, then every other slope of the next power of two.",
                "where you choose the head count the formula is applied to: c is the largest power of two not above "
                "num_heads (an int's `bit_length()` gives its exponent), and the n - c extra heads come after.",
                "key line: `c = 1 << (num_heads.bit_length() - 1)`",
            ),
            wrong="c = num_heads",
        ),
    },
)


# ---- alibi_bias ----------------------------------------------------------------------------------
ALIBI = "alibi_bias"

ALIBI_MISTAKES = ("alibi_bias_power_of_two_formula", "alibi_bias_key_position", "alibi_bias_positive")

ALIBI_BIAS_CHECKS = [
    Check(ALIBI, "8 heads, q_len = k_len = 5", "call", {"args": [8, 5, 5]}, public=True, mistakes=ALIBI_MISTAKES,
          id="8_heads_q_len_k_len_5", twin={"args": [heads(*POWERS_OF_TWO, hi=64), *square(2, 200)]}),
    Check(ALIBI, "decoding: 3 queries against 7 keys", "call", {"args": [4, 3, 7]}, public=True,
          mistakes=ALIBI_MISTAKES, hint=ALIGN_HINT, id="decoding_3_queries_against_7_keys",
          twin={"args": [draw_int(1, 32), draw_int(2, 10), draw_int(11, 40)]}),
    Check(ALIBI, "-m·|j − i|: zero at the query, linear in the distance", "call", {"args": [4, 6, 6]},
          expect="property", property="linear_distance_penalty",
          property_params={"num_heads": 4, "q_len": 6, "k_len": 6}, public=True, mistakes=ALIBI_MISTAKES,
          id="m_j_i_zero_query_linear_distance",
          twin=(Check(ALIBI, "-m·|j − i| for heads, q_len and k_len drawn for this student", "call",
                      {"args": [draw_int(1, 32, name="h"), draw_int(2, 40, name="n"), same("n")]},
                      expect="property", property="linear_distance_penalty",
                      property_params={"num_heads": same("h"), "q_len": same("n"), "k_len": same("n")},
                      mistakes=ALIBI_MISTAKES),)),  # no id: its check's own twin, never shared
    Check(ALIBI, "built on the requested device (checked on the meta device)", "meta_call",
          {"args": [4, 3, 5], "kwargs": {"device": "meta"}}, expect="ok", public=True,
          hint=DEVICE_HINT.format(where="the one asked for", device="device, for the slopes and for the distances"),
          id="built_requested_device_checked_meta",
          twin={"args": [draw_int(1, 32), draw_int(1, 12), draw_int(12, 30)], "kwargs": {"device": "meta"}}),
    Check(ALIBI, "12 heads, q_len = k_len = 9", "call", {"args": [12, 9, 9]}, points=2, mistakes=ALIBI_MISTAKES,
          public=True, id="12_heads_q_len_k_len_9", twin={"args": [heads(*NOT_POWERS, hi=48), *square(2, 100)]}),
    Check(ALIBI, "one decoding step: 1 query against 40 keys, 16 heads", "call", {"args": [16, 1, 40]},
          mistakes=ALIBI_MISTAKES, hint=ALIGN_HINT, public=True, id="one_decoding_step_1_query_against_40",
          twin={"args": [draw_int(1, 64), 1, draw_int(2, 200)]}),
    Check(ALIBI, "on CUDA", "call", {"args": [8, 16, 32], "kwargs": {"device": "cuda"}, "device": "cuda"}, cuda=True,
          hint=DEVICE_HINT.format(where="the one asked for", device="device, for the slopes and for the distances"),
          id="cuda", twin={"args": [draw_int(1, 32), draw_int(2, 32), draw_int(32, 64)], "kwargs": {"device": "cuda"},
                           "device": "cuda"}),
]

ALIBI_BIAS = Exercise(
    "alibi_bias",
    convention="`(1, H, q_len, k_len)`: −slope_h · abs(j − i)",
    checks=ALIBI_BIAS_CHECKS,
    main=[
        unseen_like(find(ALIBI_BIAS_CHECKS, ALIBI, "8_heads_q_len_k_len_5"),
                    {"args": [draw_int(1, 32), draw_int(1, 12), draw_int(12, 30)]},
                    "heads, q_len and k_len drawn for this submission", id="main_bias_v2"),
    ],
    hints=(
        "ALiBi penalises every key in proportion to its distance from the query, with one slope per head: the bias "
        "is minus the slope times the distance.",
        "reuse your alibi_slopes and relative_positions (queries aligned to the end), both on `device`.",
        "broadcast the slopes as (H, 1, 1) against the (Lq, Lk) distances, then add the leading batch axis.",
        "the sign: ALiBi subtracts m·|j - i|: zero on the query's own key, negative everywhere else.",
        "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
    ),
    mistakes={
        "alibi_bias_power_of_two_formula": Mistake(
            "alibi_bias",
            "the slopes: the power-of-two formula 2^(-8h/n) is used for a head count that is not a power of two. Take "
            "c = 2^floor(log2 n): the c slopes 2^(-8h/c), then every other slope of the 2c-head sequence for the "
            "remaining n − c heads (slopes(2c)[0::2][:n − c])",
            hints=(
                "the bias uses the slopes of alibi_slopes: the geometric formula holds for a power-of-two head count "
                "only; other counts take the slopes of the largest power of two below them, then every other slope of "
                "the next one.",
                "where the bias gets its slopes: reuse your alibi_slopes, once it passes its own self-check, instead "
                "of a formula written again here.",
                "key line: `slopes = alibi_slopes(num_heads, device=device)`",
            ),
            wrong="slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float32, device=device) "
                  "/ num_heads)",
        ),
        "alibi_bias_key_position": Mistake(
            "alibi_bias",
            "this is m·j, BLOOM's shortcut: after a causal softmax it gives the same attention, but the bias asked for "
            "is −m·|j − i| (zero at the query, equal for both directions)",
            hints=(
                "the bias depends on the distance between query and key, |j - i|, not on the key's position alone.",
                "the distances: your relative_positions (queries aligned to the end), their absolute value, times "
                "minus the slope.",
                "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
            ),
            wrong="return (slopes[:, None, None] * torch.arange(k_len, device=device).expand(q_len, "
            "k_len)).unsqueeze(0)",
        ),
        "alibi_bias_positive": Mistake(
            "alibi_bias",
            "the sign: ALiBi *subtracts* m·|j − i|, so distant keys get lower logits",
            hints=(
                "ALiBi lowers the logit of a key the further it is from the query: the bias is negative away from the "
                "diagonal.",
                "the sign of what you return: minus the slope times the distance.",
                "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
            ),
            wrong="return (slopes[:, None, None] * distance).unsqueeze(0)",
        ),
    },
)


EXERCISES = (RELATIVE_POSITIONS, SHAW_ATTENTION_DIRECT, SHAW_ATTENTION, RELATIVE_POSITION_BIAS, T5_BUCKET,
             ALIBI_SLOPES, ALIBI_BIAS)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
