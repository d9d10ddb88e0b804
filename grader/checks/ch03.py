"""Chapter 3 checks: relative_positions, shaw_attention_direct, shaw_attention, RelativePositionBias,
t5_bucket, alibi_slopes, alibi_bias."""

from grader.spec import SEED, Check, draw_choice, draw_int, find, same, unseen_like


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


def bias_forward(num_heads, max_distance, q_len, k_len, **kw):
    return {"ctor_args": [num_heads, max_distance], "ctor_kwargs": {}, "forward_args": [q_len, k_len], **kw}


def seeded(*args, **kw):
    """module_forward params with seeded (identical) parameter values for learner and reference."""
    return {**bias_forward(*args, **kw), "seed_params": 0}


def distances(start, end, shape=None):
    spec = {"t": "arange", "start": start, "end": end}
    return {**spec, "shape": shape} if shape else spec


REL = "relative_positions"
DIRECT = "shaw_attention_direct"
SHAW = "shaw_attention"
BIAS = "RelativePositionBias"
T5 = "t5_bucket"
SLOPES = "alibi_slopes"
ALIBI = "alibi_bias"

REL_MISTAKES = ("rel_sign_flipped", "rel_start_aligned")
SHAW_KINDS = ("sign_flipped", "clip_off_by_one", "unscaled", "value_ignored", "causal_flipped")
SHAW_MISTAKES = tuple(f"shaw_{k}" for k in SHAW_KINDS)
DIRECT_MISTAKES = tuple(f"shaw_direct_{k}" for k in SHAW_KINDS)
BIAS_MISTAKES = ("bias_sign_flipped", "bias_clip_off_by_one")
T5_MISTAKES = ("t5_causal_as_bidirectional", "t5_sign_flipped")
ALIBI_MISTAKES = ("alibi_bias_power_of_two_formula", "alibi_bias_key_position", "alibi_bias_positive")
ALIGN_HINT = ("with fewer queries than keys, query i sits at position k_len − q_len + i (after the cached keys); "
              "relative_positions(q_len, k_len) already gives j − i for that alignment")
DEVICE_HINT = ("the bias was built on another device than {where}: create the positions with device={device} "
               "(a hard-coded 'cuda' if torch.cuda.is_available() else 'cpu' breaks a CPU model on a GPU machine)")

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

# docs/conventions.md's row of each exercise, in the order of the table (`python -m grader build` writes the
# table: this description beside the reference's signature)
CONVENTIONS = {
    "relative_positions": "`(q_len, k_len)` integer matrix of j − i, queries aligned to the end",
    "shaw_attention_direct": ("Shaw et al. (2018) written as the paper does, with a `(B, H, Lq, Lk, d)` tensor of "
                              "relative embeddings: the baseline"),
    "shaw_attention": ("the same result without that tensor: tables `(2K+1, head_dim)` shared by the heads, row "
                       "clip(j − i, −K, K) + K, both logit terms divided by √d, values plus the a^V term"),
    "RelativePositionBias": ("`(1, H, q_len, k_len)`: a learned bias per head and clipped distance (attribute "
                             "`bias: nn.Embedding(2K+1, num_heads)`), on the module's device, for SDPA's float "
                             "`attn_mask`"),
    "t5_bucket": ("T5's logarithmic buckets (Raffel et al., 2020), equal to transformers' "
                  "`_relative_position_bucket`"),
    "alibi_slopes": ("`(num_heads,)`: the geometric slopes of Press et al. (2022), including head counts that are "
                     "not powers of two"),
    "alibi_bias": "`(1, H, q_len, k_len)`: −slope_h · abs(j − i)",
}

CHECKS = [
    # ---- relative_positions -----------------------------------------------------------------------
    Check(REL, "j − i for q_len = k_len = 5", "call", {"args": [5, 5]}, public=True, mistakes=REL_MISTAKES,
          id="j_i_q_len_k_len_5"),
    Check(REL, "decoding: 3 queries aligned to the end of 8 keys", "call", {"args": [3, 8]}, public=True,
          mistakes=REL_MISTAKES, hint=ALIGN_HINT, id="decoding_3_queries_aligned_end_8_keys"),
    Check(REL, "q_len=0 raises ValueError naming it", "raises", {"args": [0, 4]}, expect="raises",
          mentions=("q_len",), public=True, id="q_len_0_raises_valueerror_naming"),
    Check(REL, "one decoding step: 1 query against 6 keys", "call", {"args": [1, 6]}, mistakes=REL_MISTAKES,
          hint=ALIGN_HINT, public=True, id="one_decoding_step_1_query_against_6_keys"),
    Check(REL, "a long square matrix (q_len = k_len = 300)", "call", {"args": [300, 300]}, mistakes=REL_MISTAKES,
          public=True, id="long_square_matrix_q_len_k_len_300"),
    Check(REL, "k_len=-2 raises ValueError naming it", "raises", {"args": [2, -2]}, expect="raises",
          mentions=("k_len",), public=True, id="k_len_2_raises_valueerror_naming"),
    Check(REL, "built on the requested device (checked on the meta device)", "meta_call",
          {"args": [3, 5], "kwargs": {"device": "meta"}}, expect="ok",
          hint="create both aranges with device=device", public=True, id="built_requested_device_checked_meta"),
    # ---- shaw_attention_direct --------------------------------------------------------------------
    Check(DIRECT, "matches the reference: B=2, H=3, L=7, d=8, K=2", "call", shaw(2, 3, 7, 7, 8, 2), public=True,
          mistakes=DIRECT_MISTAKES, id="matches_reference_b_2_h_3_l_7_d_8_k_2"),
    Check(DIRECT, "causal, decoding: 3 queries against 9 keys", "call", shaw(2, 2, 3, 9, 8, 2, causal=True, seed=5),
          public=True, mistakes=DIRECT_MISTAKES, hint=ALIGN_HINT, id="causal_decoding_3_queries_against_9_keys"),
    Check(DIRECT, "causal, B=1, H=4, L=12, d=16, K=3", "call", shaw(1, 4, 12, 12, 16, 3, causal=True, seed=9),
          mistakes=DIRECT_MISTAKES, public=True, id="causal_b_1_h_4_l_12_d_16_k_3"),
    Check(DIRECT, "float64 in, float64 out", "call", {**shaw(1, 2, 5, 5, 4, 1, seed=3), "dtype": "float64"},
          mistakes=DIRECT_MISTAKES, hint="keep the input's dtype: build nothing in float32 explicitly",
          public=True, id="float64_float64_out"),
    # ---- shaw_attention ---------------------------------------------------------------------------
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
          hint="keep the input's dtype: build nothing in float32 explicitly", public=True, id="bfloat16_cpu"),
    # the scale check's counterpart in the self-check: the same call measured on the meta device, for free
    Check(SHAW, f"no buffer over 3 GiB at B=1, H=8, L={L_BIG}, d=64, K=16 (measured on the meta device)",
          "meta_largest_buffer",
          {**shaw(1, 8, L_BIG, L_BIG, 64, 16, causal=True, seed=16), "allowance_mib": 3072,
           "known_sizes": KNOWN_SIZES, "where": f"at B=1, H=8, L={L_BIG}, d=64, K=16"},
          expect="ok", hint=SCALE_HINT, public=True, id="no_buffer_over_3_gib_on_meta"),
    Check(SHAW, "negative max_distance raises ValueError naming it", "raises",
          {"args": shaw_inputs(1, 1, 3, 3, 4, 0)[:5] + [-1]}, expect="raises", mentions=("max_distance",),
          public=True, id="negative_max_distance_raises_valueerror"),
    Check(SHAW, f"runs at B=1, H=8, L={L_BIG}, d=64, K=16 within a 3 GiB memory allowance", "memory_capped_call",
          {**shaw(1, 8, L_BIG, L_BIG, 64, 16, causal=True, seed=16), "allowance_mib": 3072, "timeout_s": 20,
           "sample_step": 64, "known_sizes": KNOWN_SIZES, "where": f"at B=1, H=8, L={L_BIG}, d=64, K=16",
           "reference_note": "The efficient form needs about 0.5 GB and one second here"},
          points=3, hint=SCALE_HINT, id="runs_at_scale_within_3_gib"),
] + [
    Check(SHAW, f"on CUDA in {dtype}", "call", {**shaw(2, 4, 64, 64, 32, 8, causal=True, seed=17), "device": "cuda",
                                                 "dtype": dtype},
          cuda=True, hint="build the relative positions with device=q.device", id=f"cuda_{dtype}")
    for dtype in ("float32", "bfloat16")
] + [
    # ---- RelativePositionBias ---------------------------------------------------------------------
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
          id="built_module_s_device_checked_moving"),
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
          expect="raises", mentions=("num_heads",), public=True, id="num_heads_0_raises_valueerror_naming"),
    Check(BIAS, "max_distance=-1 raises ValueError naming it", "raises", {"ctor_args": [4, -1], "ctor_kwargs": {}},
          expect="raises", mentions=("max_distance",), public=True, id="max_distance_1_raises_valueerror_naming"),
    Check(BIAS, "on CUDA", "module_forward", seeded(8, 16, 40, 64, device="cuda"), cuda=True,
          hint=DEVICE_HINT.format(where="the module's table", device="self.bias.weight.device"), id="cuda"),
    # ---- t5_bucket --------------------------------------------------------------------------------
    Check(T5, "bidirectional buckets for j − i in [−200, 200] (32 buckets, max_distance 128)", "call",
          {"args": [distances(-200, 201)]}, public=True, mistakes=T5_MISTAKES,
          id="bidirectional_buckets_j_i_200_200_32"),
    Check(T5, "causal buckets for j − i in [−200, 200]", "call",
          {"args": [distances(-200, 201)], "kwargs": {"bidirectional": False}}, public=True, mistakes=T5_MISTAKES,
          hint="causal: n = max(i − j, 0) = max(−r, 0), all num_buckets for the past, no offset",
          id="causal_buckets_j_i_200_200"),
    Check(T5, "keeps the shape of a (q, k) matrix of distances", "call", {"args": [distances(-20, 20, [5, 8])]},
          public=True, id="shape_q_k_matrix_distances"),
    Check(T5, "bidirectional, 64 buckets, max_distance 256, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"num_buckets": 64, "max_distance": 256}}, points=2,
          mistakes=T5_MISTAKES, public=True, id="bidirectional_64_buckets_max_distance"),
    Check(T5, "causal, 8 buckets, max_distance 128, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"bidirectional": False, "num_buckets": 8}}, points=2,
          mistakes=T5_MISTAKES, public=True, id="causal_8_buckets_max_distance_128_every"),
    Check(T5, "causal, 32 buckets, max_distance 256, every j − i in [−2000, 2000]", "call",
          {"args": [distances(-2000, 2001)], "kwargs": {"bidirectional": False, "max_distance": 256}},
          mistakes=T5_MISTAKES, public=True, id="causal_32_buckets_max_distance_256_every"),
    Check(T5, "the output is on the input's device (checked on the meta device)", "meta_call",
          {"args": [distances(-10, 10)]}, expect="ok",
          hint="build every helper tensor from the input (zeros_like, ...)",
          public=True, id="output_input_s_device_checked_meta"),
    Check(T5, "on CUDA", "call", {"args": [distances(-300, 300)], "kwargs": {"bidirectional": False}, "device": "cuda"},
          cuda=True, id="cuda"),
    # ---- alibi_slopes -----------------------------------------------------------------------------
    Check(SLOPES, "8 heads: 1/2, 1/4, ..., 1/256", "call", {"args": [8]}, public=True, id="8_heads_1_2_1_4_1_256"),
    Check(SLOPES, "12 heads (not a power of two)", "call", {"args": [12]}, public=True,
          mistakes=("alibi_slopes_power_of_two_formula",), id="12_heads_not_power_two"),
    Check(SLOPES, "num_heads=0 raises ValueError naming it", "raises", {"args": [0]}, expect="raises",
          mentions=("num_heads",), public=True, id="num_heads_0_raises_valueerror_naming"),
    Check(SLOPES, "1 head", "call", {"args": [1]}, public=True, id="1_head"),
    Check(SLOPES, "112 heads (BLOOM-176B)", "call", {"args": [112]}, points=2,
          mistakes=("alibi_slopes_power_of_two_formula",), public=True, id="112_heads_bloom_176b"),
    Check(SLOPES, "24 heads", "call", {"args": [24]}, mistakes=("alibi_slopes_power_of_two_formula",),
          public=True, id="24_heads"),
    Check(SLOPES, "6 heads", "call", {"args": [6]}, mistakes=("alibi_slopes_power_of_two_formula",),
          public=True, id="6_heads"),
    Check(SLOPES, "64 heads", "call", {"args": [64]}, public=True, id="64_heads"),
    # ---- alibi_bias -------------------------------------------------------------------------------
    Check(ALIBI, "8 heads, q_len = k_len = 5", "call", {"args": [8, 5, 5]}, public=True, mistakes=ALIBI_MISTAKES,
          id="8_heads_q_len_k_len_5"),
    Check(ALIBI, "decoding: 3 queries against 7 keys", "call", {"args": [4, 3, 7]}, public=True,
          mistakes=ALIBI_MISTAKES, hint=ALIGN_HINT, id="decoding_3_queries_against_7_keys"),
    Check(ALIBI, "-m·|j − i|: zero at the query, linear in the distance", "call", {"args": [4, 6, 6]},
          expect="property", property="linear_distance_penalty",
          property_params={"num_heads": 4, "q_len": 6, "k_len": 6}, public=True, mistakes=ALIBI_MISTAKES,
          id="m_j_i_zero_query_linear_distance"),
    Check(ALIBI, "built on the requested device (checked on the meta device)", "meta_call",
          {"args": [4, 3, 5], "kwargs": {"device": "meta"}}, expect="ok", public=True,
          hint=DEVICE_HINT.format(where="the one asked for", device="device, for the slopes and for the distances"),
          id="built_requested_device_checked_meta"),
    Check(ALIBI, "12 heads, q_len = k_len = 9", "call", {"args": [12, 9, 9]}, points=2, mistakes=ALIBI_MISTAKES,
          public=True, id="12_heads_q_len_k_len_9"),
    Check(ALIBI, "one decoding step: 1 query against 40 keys, 16 heads", "call", {"args": [16, 1, 40]},
          mistakes=ALIBI_MISTAKES, hint=ALIGN_HINT, public=True, id="one_decoding_step_1_query_against_40"),
    Check(ALIBI, "on CUDA", "call", {"args": [8, 16, 32], "kwargs": {"device": "cuda"}, "device": "cuda"}, cuda=True,
          hint=DEVICE_HINT.format(where="the one asked for", device="device, for the slopes and for the distances"),
          id="cuda"),
]

# ---- main checks: inputs drawn for each submission (grader/unseen.py) ---------------------------------
def drawn(*shape, scale=1.0):
    return {"t": "randn", "shape": list(shape), "seed": SEED, "scale": scale}


def shaw_drawn(causal):
    """shaw_attention's inputs with B=2 and H, L, d, K drawn: q, k, v (2, H, L, d), tables (2K + 1, d), K."""
    q = drawn(2, draw_int(1, 4, name="h"), draw_int(2, 9, name="l"), draw_choice(4, 8, name="d"))
    k, v = drawn(2, same("h"), same("l"), same("d")), drawn(2, same("h"), same("l"), same("d"))
    rel_k, rel_v = (drawn(same("max_distance", times=2, plus=1), same("d"), scale=0.5) for _ in range(2))
    return {"args": [q, k, v, rel_k, rel_v, draw_int(1, 4, name="max_distance")], "kwargs": {"causal": causal}}


CHECKS += [
    unseen_like(find(CHECKS, REL, "j_i_q_len_k_len_5"), {"args": [draw_int(1, 8), draw_int(8, 14)]},
                "j − i for q_len and k_len drawn for this submission", id="main_distances"),
    unseen_like(find(CHECKS, DIRECT, "matches_reference_b_2_h_3_l_7_d_8_k_2"), shaw_drawn(False),
                "matches the reference on inputs drawn for this submission", id="main_bidirectional"),
    unseen_like(find(CHECKS, DIRECT, "causal_decoding_3_queries_against_9_keys"), shaw_drawn(True),
                "causal, on inputs drawn for this submission", id="main_causal"),
    unseen_like(find(CHECKS, SHAW, "matches_reference_b_2_h_3_l_7_d_8_k_2"), shaw_drawn(False),
                "matches the reference on inputs drawn for this submission", id="main_bidirectional"),
    unseen_like(find(CHECKS, SHAW, "causal_b_2_h_3_l_7_d_8_k_2"), shaw_drawn(True),
                "causal, on inputs drawn for this submission", id="main_causal"),
    unseen_like(find(CHECKS, BIAS, "bias_h_4_k_3_q_len_k_len_6"),
                {"ctor_args": [draw_int(1, 8), draw_int(1, 6)], "ctor_kwargs": {},
                 "forward_args": [draw_int(1, 6, name="q"), draw_int(6, 12)], "seed_params": SEED},
                "bias for H, K, q_len and k_len drawn for this submission", id="main_bias"),
    unseen_like(find(CHECKS, T5, "bidirectional_buckets_j_i_200_200_32"),
                {"args": [{"t": "arange", "start": draw_int(-300, -20), "end": draw_int(20, 300)}]},
                "bidirectional buckets for distances drawn for this submission", id="main_bidirectional"),
    unseen_like(find(CHECKS, T5, "causal_buckets_j_i_200_200"),
                {"args": [{"t": "arange", "start": draw_int(-300, -20), "end": draw_int(20, 300)}],
                 "kwargs": {"bidirectional": False}},
                "causal buckets for distances drawn for this submission", id="main_causal"),
    unseen_like(find(CHECKS, SLOPES, "8_heads_1_2_1_4_1_256"), {"args": [draw_choice(2, 4, 16, 32)]},
                "a power-of-two number of heads drawn for this submission", id="main_power_of_two"),
    unseen_like(find(CHECKS, SLOPES, "12_heads_not_power_two"), {"args": [draw_choice(3, 5, 6, 10, 12, 20, 24)]},
                "a number of heads (not a power of two) drawn for this submission", id="main_other"),
    unseen_like(find(CHECKS, ALIBI, "8_heads_q_len_k_len_5"),
                {"args": [draw_choice(2, 4, 8, 16), draw_int(1, 6), draw_int(6, 12)]},
                "heads, q_len and k_len drawn for this submission", id="main_bias"),
]
