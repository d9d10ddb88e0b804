"""Chapter 7 checks: PositionalAttention and TinyDecoder, wired to schemes the probes build from plain tensors
(posenc_selfcheck/probes_ch07.py), with seeded weights loaded by name."""

from grader.spec import SEED, Check, draw_int, find, unseen_like


def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


def tokens(*shape, seed=0, vocab=20):
    return {"t": "randint", "low": 0, "high": vocab, "shape": list(shape), "seed": seed}


# schemes, as data: probes_ch07.make_scheme builds them
NONE, TABLE, BIAS = {"kind": "none"}, {"kind": "table", "seed": 3}, {"kind": "bias", "seed": 4}
ALIBI = {"kind": "alibi"}
ROTARY, ALL = {"kind": "rotary"}, {"kind": "all", "seed": 5}
ROTARY_SCALED = {"kind": "rotary", "base": 500.0, "attention_factor": 1.139}  # YaRN's factor at s = 4

ATTN = "PositionalAttention"
DECODER = "TinyDecoder"
SIZES = {"d_model": 32, "num_heads": 4}  # head_dim 8
DEC_SIZES = {"vocab_size": 20, "d_model": 32, "num_layers": 2, "num_heads": 4}


def attention(scheme, x, **kw):
    return {**SIZES, "scheme": scheme, "x": x, **kw}


def decoder(scheme, toks, **kw):
    return {**DEC_SIZES, "scheme": scheme, "tokens": toks, **kw}


# float32 angles p * theta lose about p * 6e-8 (course contract)
def pos_tol(max_position, per_position=2e-7):
    return {"per_position": per_position, "max_position": max_position}


# half precision rounds every intermediate: an attention output of order one is good to a few 1e-2, and a
# decoder's logits (a few units, after two layers) to about 0.1, whichever correct order the sums take
HALF_TOL = {"bfloat16": {"atol": 0.05, "rtol": 0.02}}
LOGIT_TOL = {"bfloat16": {"atol": 0.1, "rtol": 0.02}}

# the mistakes each check names (posenc_ref/mistakes/ch07.py): the wiring every scheme shares, then by hook
CORE_MISTAKES = ("scheme_causal_flipped", "scheme_scale_by_d", "scheme_merge_no_transpose",
                 "scheme_split_wrong_order")
BIAS_MISTAKES = ("scheme_bias_after_softmax", "scheme_bias_before_scale", "scheme_no_causal_with_bias",
                 "scheme_bias_negated", "scheme_bias_ignored")
ROTATE_MISTAKES = ("scheme_rotates_v", "scheme_k_not_rotated", "scheme_cache_rotated_again")
ALL_ATTN = CORE_MISTAKES + BIAS_MISTAKES + ROTATE_MISTAKES + ("scheme_embeds_inside",)
DECODE_MISTAKES = ("scheme_no_decode_offset", "scheme_cache_unrotated", "scheme_top_left_causal")
# a bias over (keys, queries) differs from one over (queries, keys) only once a cache makes them differ
CACHE_BIAS_MISTAKES = ("scheme_bias_swapped",)
BLOCK_MISTAKES = ("decoder_post_norm", "decoder_no_attention_residual")
DECODER_MISTAKES = ("decoder_no_final_norm", "decoder_no_embed_scale") + BLOCK_MISTAKES
EMBED_MISTAKES = ("decoder_embed_every_layer", "decoder_embed_after_first_layer", "decoder_one_based_positions",
                  "decoder_embed_scale_after_table") + DECODER_MISTAKES
DEVICE_HINT = ("build positions and masks on the input's device (torch.arange(..., device=x.device)), and keep "
               "the scheme as an attribute (self.scheme = scheme) so that .to() moves its tables")
# the decoder's own wiring; when PositionalAttention fails its checks, the self-check says so itself
BLOCK_HINT = ("the token vectors scaled by sqrt(d_model) meet scheme.embed once, then the given pre-norm blocks "
              "in order, then the final norm and the tied head")

# docs/conventions.md's row of each exercise, in the order of the table (`python -m grader build` writes the
# table: this description beside the reference's signature)
CONVENTIONS = {
    "PositionalAttention": ("multi-head attention whose positions come from `scheme`: `q_proj`, `k_proj`, "
                            "`v_proj`, `o_proj` without bias, q and k rotated before the cache, the bias added to "
                            "q·k/sqrt(d) with the causal mask (queries aligned to the end) folded in, SDPA inside; "
                            "returns `(out, (k, v))`"),
    "TinyDecoder": ("a pre-norm decoder: `embed_tokens` (scaled by sqrt(d_model), then `scheme.embed` once), "
                    "`layers` of the given `DecoderBlock`, `norm`, the head tied to `embed_tokens.weight`; "
                    "positions `past .. past + seq - 1`; returns `(logits, kv_caches)`"),
}

CHECKS = [
    # ---- PositionalAttention ----------------------------------------------------------------------
    Check(ATTN, "in eval mode, the same input twice gives the same output (no dropout left on)", "scheme_repeat",
          {"model": "attention", "scheme": ALIBI, **SIZES, "x": randn(2, 7, 32, seed=16)}, expect="property",
          property="repeatable", public=True, id="eval_repeatable"),
    Check(ATTN, "no positions (NoPE): causal forward of (2, 7, 32) with 4 heads, output and (k, v)",
          "scheme_attention", attention(NONE, randn(2, 7, 32)), public=True, mistakes=CORE_MISTAKES,
          id="nope_forward"),
    Check(ATTN, "a learned relative bias: added to the scaled logits, causal", "scheme_attention",
          attention(BIAS, randn(2, 7, 32, seed=1)), public=True, points=2, mistakes=CORE_MISTAKES + BIAS_MISTAKES,
          id="bias_forward"),
    Check(ATTN, "rotary: queries and keys rotated, values not", "scheme_attention",
          attention(ROTARY, randn(2, 7, 32, seed=2)), public=True, points=2,
          mistakes=CORE_MISTAKES + ROTATE_MISTAKES,
          id="rotary_forward"),
    Check(ATTN, "ALiBi, decoding token by token with the cache equals the full forward pass",
          "scheme_attention_decode", attention(ALIBI, randn(2, 8, 32, seed=3), prefix=3), expect="property",
          property="decode_matches_full", public=True, points=2,
          mistakes=DECODE_MISTAKES + BIAS_MISTAKES + CACHE_BIAS_MISTAKES,
          id="alibi_decode_property"),
    Check(ATTN, "four Linear layers without bias, nothing else trainable", "scheme_attention_info", SIZES,
          expect="fields", fields={"n_trainable": 4 * 32 * 32, "n_params": 4 * 32 * 32}, public=True,
          hint="q_proj, k_proj, v_proj, o_proj = nn.Linear(d_model, d_model, bias=False); the scheme brings its "
               "own parameters", id="four_linear_layers"),
    Check(ATTN, "decoding on the meta device with every hook at once: positions, masks and bias on x.device",
          "scheme_meta", {"model": "attention", "ctor_args": [32, 4], "scheme": ALL, "seq": 2, "cached": 3},
          expect="ok", public=True, hint=DEVICE_HINT, id="meta_decode"),
    Check(ATTN, "ALiBi: the causal mask stays on top of the bias", "scheme_attention",
          attention(ALIBI, randn(2, 9, 32, seed=4)), points=2, mistakes=BIAS_MISTAKES, id="alibi_forward"),
    Check(ATTN, "an absolute table is not the attention block's business (scheme.embed is the decoder's)",
          "scheme_attention", attention(TABLE, randn(2, 7, 32, seed=5)), public=True,
          mistakes=("scheme_embeds_inside",),
          hint="call scheme.rotate and scheme.bias only; the decoder calls scheme.embed once", id="table_ignored"),
    Check(ATTN, "every hook at once: a table, a bias and a rotation", "scheme_attention",
          attention(ALL, randn(2, 7, 32, seed=6)), points=2, mistakes=ALL_ATTN, id="all_hooks_forward"),
    Check(ATTN, "rotary, decoding token by token: outputs and the final cache (keys stored rotated)",
          "scheme_attention_decode", attention(ROTARY, randn(2, 8, 32, seed=7), prefix=3), public=True,
          points=2, mistakes=DECODE_MISTAKES + ROTATE_MISTAKES + CORE_MISTAKES, id="rotary_decode"),
    Check(ATTN, "ALiBi, a 3-token chunk after a cached prefix (queries aligned to the end of the keys)",
          "scheme_attention_decode", attention(ALIBI, randn(2, 10, 32, seed=8), prefix=4, chunk=3), public=True,
          points=2, mistakes=DECODE_MISTAKES + BIAS_MISTAKES + CACHE_BIAS_MISTAKES,
          hint="with a cache, query i sits at k_len - seq + i: allow keys j <= k_len - seq + i", id="alibi_chunk"),
    Check(ATTN, "every hook, decoding in chunks of 2", "scheme_attention_decode",
          attention(ALL, randn(1, 9, 32, seed=9), prefix=3, chunk=2),
          mistakes=DECODE_MISTAKES + ALL_ATTN + CACHE_BIAS_MISTAKES,
          id="all_hooks_decode"),
    Check(ATTN, "non-causal attention with a bias (causal=False)", "scheme_attention",
          attention(BIAS, randn(2, 6, 32, seed=10), causal=False), mistakes=BIAS_MISTAKES,
          hint="with causal=False every query sees every key; the bias alone is the attn_mask",
          id="bias_not_causal"),
    Check(ATTN, "position_ids with gaps reach rotate and bias", "scheme_attention",
          attention(ALL, randn(2, 7, 32, seed=11), position_ids=[0, 1, 2, 5, 6, 10, 11]), mistakes=ALL_ATTN,
          hint="pass position_ids to scheme.rotate, and to scheme.bias as the query positions (the keys: "
               "0 .. past - 1, then position_ids)", id="position_ids_gaps"),
    Check(ATTN, "positions 1000..1006, scaled frequencies with an attention factor", "scheme_attention",
          attention(ROTARY_SCALED, randn(2, 7, 32, seed=12), position_ids=list(range(1000, 1007))),
          tol=pos_tol(1007), mistakes=ROTATE_MISTAKES, id="scaled_rotary_offset"),
    Check(ATTN, "bfloat16 with a float32 bias: the bias is cast to the queries' dtype", "scheme_attention",
          attention(BIAS, randn(2, 7, 32, seed=13), dtype="bfloat16"), mistakes=ALL_ATTN,
          hint="in bfloat16 the whole block computes in bfloat16: the bias too, bias.to(q.dtype)",
          id="bfloat16_bias"),
    Check(ATTN, "bfloat16 with a bias the scheme makes in float32: SDPA gets it in q's dtype",
          "scheme_sdpa_mask_dtype", {**SIZES, "scheme": {**BIAS, "float32": True}, "x": randn(2, 7, 32, seed=15),
                                     "dtype": "bfloat16"},
          expect="property", property="mask_in_q_dtype", public=True, mistakes=("scheme_bias_not_cast",),
          id="bfloat16_mask_dtype"),
    Check(ATTN, "d_model not divisible by num_heads raises ValueError naming num_heads", "raises",
          {"ctor_args": [30, 4, None]}, expect="raises", mentions=("num_heads",), id="indivisible_raises"),
] + [
    Check(ATTN, f"on CUDA in {dtype}: every hook, forward and decoding", "scheme_attention_decode",
          attention(ALL, randn(2, 12, 32, seed=14), prefix=5, chunk=2, device="cuda", dtype=dtype), cuda=True,
          tol=HALF_TOL.get(dtype), hint=DEVICE_HINT, id=f"cuda_{dtype}")
    for dtype in ("float32", "bfloat16")
] + [
    # ---- TinyDecoder ------------------------------------------------------------------------------
    Check(DECODER, "in eval mode, the same tokens twice give the same logits (no dropout left on)",
          "scheme_repeat", {"model": "decoder", "scheme": TABLE, **DEC_SIZES, "tokens": tokens(2, 9, seed=12)},
          expect="property", property="repeatable", public=True, id="eval_repeatable"),
    Check(DECODER, "no positions: logits of (2, 9) tokens, 2 layers, d_model=32, 4 heads", "scheme_decoder",
          decoder(NONE, tokens(2, 9)), public=True, points=2, mistakes=DECODER_MISTAKES, hint=BLOCK_HINT,
          id="nope_logits"),
    Check(DECODER, "an absolute table is added once, to the scaled token embeddings", "scheme_decoder",
          decoder(TABLE, tokens(2, 9, seed=1)), public=True, points=2, mistakes=EMBED_MISTAKES, id="table_logits"),
    Check(DECODER, "decoding with the caches equals the full pass (absolute table: positions offset)",
          "scheme_decoder_decode", decoder(TABLE, tokens(2, 8, seed=2), prefix=3), expect="property",
          property="decode_matches_full", public=True, points=2, mistakes=("decoder_no_decode_offset",),
          id="table_decode_property"),
    Check(DECODER, "it trains: 25 AdamW steps on one batch memorise it, and the scheme's table trains too",
          "decoder_trains", {**DEC_SIZES, "tokens": tokens(4, 13, seed=3), "steps": 25, "lr": 1e-2},
          expect="property", property="trains", property_params={"max_ratio": 0.5}, public=True, points=2,
          id="it_trains"),
    # outside the attention blocks (their parameters are PositionalAttention's check): the token table, the
    # blocks' two norms and MLP, the final norm
    Check(DECODER, "one token table, used as the output head too (weight tying), and nothing else",
          "scheme_decoder_info", DEC_SIZES, expect="fields",
          fields={"n_params_outside_attention": 20 * 32 + 2 * (4 * 32 + 2 * 4 * 32 * 32 + 4 * 32 + 32) + 2 * 32},
          public=True, hint="no separate head: logits = norm(h) @ embed_tokens.weight.T; the blocks hold "
                            "attn_norm, attn, mlp_norm, mlp", id="parameters_outside_attention"),
    Check(DECODER, "decoding on the meta device with every hook at once", "scheme_meta",
          {"model": "decoder", "ctor_args": [20, 32, 2, 4], "scheme": ALL, "seq": 2, "cached": 3}, expect="ok",
          public=True, hint=DEVICE_HINT, id="meta_decode"),
    Check(DECODER, "a learned relative bias shared by the layers", "scheme_decoder",
          decoder(BIAS, tokens(2, 9, seed=4)), mistakes=DECODER_MISTAKES, hint=BLOCK_HINT, id="bias_logits"),
    Check(DECODER, "every hook at once", "scheme_decoder", decoder(ALL, tokens(2, 9, seed=5)), points=2,
          mistakes=EMBED_MISTAKES, hint=BLOCK_HINT, id="all_hooks_logits"),
    Check(DECODER, "rotary, a prefix of 3 then chunks of 2: logits and the last layer's cache",
          "scheme_decoder_decode", decoder(ROTARY, tokens(2, 9, seed=6), prefix=3, chunk=2), points=2,
          mistakes=("decoder_no_decode_offset",) + DECODER_MISTAKES, hint=BLOCK_HINT, id="rotary_decode"),
    Check(DECODER, "ALiBi, token by token: logits and the last layer's cache", "scheme_decoder_decode",
          decoder(ALIBI, tokens(1, 10, seed=7), prefix=2), mistakes=("decoder_no_decode_offset",) + DECODER_MISTAKES,
          hint=BLOCK_HINT, id="alibi_decode"),
    Check(DECODER, "every hook, decoding: the table's positions follow the cache", "scheme_decoder_decode",
          decoder(ALL, tokens(2, 8, seed=8), prefix=4, chunk=1), points=2,
          mistakes=("decoder_no_decode_offset",) + EMBED_MISTAKES, id="all_hooks_decode"),
    Check(DECODER, "causal=False reaches every attention block", "scheme_decoder",
          decoder(BIAS, tokens(2, 7, seed=9), causal=False), public=True, mistakes=("decoder_ignores_causal",),
          hint="store causal and pass it to each block's attention", id="not_causal"),
    Check(DECODER, "bfloat16 weights with rotary and a bias", "scheme_decoder",
          decoder(ALL, tokens(2, 7, seed=10), dtype="bfloat16"), tol=LOGIT_TOL["bfloat16"], hint=BLOCK_HINT,
          id="bfloat16"),
    Check(DECODER, "d_model not divisible by num_heads raises ValueError naming num_heads", "raises",
          {"ctor_args": [20, 30, 1, 4, None]}, expect="raises", mentions=("num_heads",), id="indivisible_raises"),
] + [
    Check(DECODER, f"on CUDA in {dtype}: every hook, decoding", "scheme_decoder_decode",
          decoder(ALL, tokens(2, 10, seed=11), prefix=4, chunk=3, device="cuda", dtype=dtype), cuda=True,
          tol=LOGIT_TOL.get(dtype), hint=DEVICE_HINT, id=f"cuda_{dtype}")
    for dtype in ("float32", "bfloat16")
]

# ---- main checks: inputs drawn for each submission (grader/unseen.py) ---------------------------------
def drawn_x():
    return {"t": "randn", "shape": [2, draw_int(3, 10), 32], "seed": SEED}


def drawn_tokens():
    return {"t": "randint", "low": 0, "high": 20, "shape": [2, draw_int(3, 12)], "seed": SEED}


CHECKS += [
    unseen_like(find(CHECKS, ATTN, "bias_forward"), attention({"kind": "bias", "seed": SEED}, drawn_x(), seed=SEED),
                "a learned relative bias, on inputs and weights drawn for this submission", id="main_bias"),
    unseen_like(find(CHECKS, ATTN, "rotary_forward"), attention(ROTARY, drawn_x(), seed=SEED),
                "rotary, on inputs and weights drawn for this submission", id="main_rotary"),
    unseen_like(find(CHECKS, DECODER, "nope_logits"), decoder(NONE, drawn_tokens(), seed=SEED),
                "no positions: logits of tokens and weights drawn for this submission", id="main_nope"),
    unseen_like(find(CHECKS, DECODER, "table_logits"), decoder({"kind": "table", "seed": SEED}, drawn_tokens(),
                                                               seed=SEED),
                "an absolute table, on tokens and weights drawn for this submission", id="main_table"),
]
