"""Chapter 7 checks: PositionalAttention and TinyDecoder, wired to schemes the probes build from plain tensors
(posenc_selfcheck/probes_ch07.py), with seeded weights loaded by name."""

from grader.exercise import Exercise, declared
from grader.spec import SEED, Check, Mistake, draw_int, find, unseen_like

# schemes, as data: probes_ch07.make_scheme builds them
NONE, TABLE, BIAS = {"kind": "none"}, {"kind": "table", "seed": 3}, {"kind": "bias", "seed": 4}
ALIBI = {"kind": "alibi"}
ROTARY, ALL = {"kind": "rotary"}, {"kind": "all", "seed": 5}

DEVICE_HINT = ("build positions and masks on the input's device (torch.arange(..., device=x.device)), and keep "
               "the scheme as an attribute (self.scheme = scheme) so that .to() moves its tables")


# ---- PositionalAttention -------------------------------------------------------------------------
def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


ROTARY_SCALED = {"kind": "rotary", "base": 500.0, "attention_factor": 1.139}  # YaRN's factor at s = 4

ATTN = "PositionalAttention"

SIZES = {"d_model": 32, "num_heads": 4}  # head_dim 8


def attention(scheme, x, **kw):
    return {**SIZES, "scheme": scheme, "x": x, **kw}


# float32 angles p * theta lose about p * 6e-8 (course contract)
def pos_tol(max_position, per_position=2e-7):
    return {"per_position": per_position, "max_position": max_position}


# half precision rounds every intermediate: an attention output of order one is good to a few 1e-2, and a
# decoder's logits (a few units, after two layers) to about 0.1, whichever correct order the sums take
HALF_TOL = {"bfloat16": {"atol": 0.05, "rtol": 0.02}}

# the mistakes each check names (declared in the records below): the wiring every scheme shares, then by hook
CORE_MISTAKES = ("scheme_causal_flipped", "scheme_scale_by_d", "scheme_merge_no_transpose",
                 "scheme_split_wrong_order")
BIAS_MISTAKES = ("scheme_bias_after_softmax", "scheme_bias_before_scale", "scheme_no_causal_with_bias",
                 "scheme_bias_negated", "scheme_bias_ignored")
ROTATE_MISTAKES = ("scheme_rotates_v", "scheme_k_not_rotated", "scheme_cache_rotated_again")
ALL_ATTN = CORE_MISTAKES + BIAS_MISTAKES + ROTATE_MISTAKES + ("scheme_embeds_inside",)
DECODE_MISTAKES = ("scheme_no_decode_offset", "scheme_cache_unrotated", "scheme_top_left_causal")
# a bias over (keys, queries) differs from one over (queries, keys) only once a cache makes them differ
CACHE_BIAS_MISTAKES = ("scheme_bias_swapped",)


def drawn_x():
    return {"t": "randn", "shape": [2, draw_int(3, 10), 32], "seed": SEED}


POSITIONAL_ATTENTION_CHECKS = [
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
          attention(BIAS, randn(2, 7, 32, seed=13), dtype="bfloat16"), mistakes=ALL_ATTN, tol=HALF_TOL["bfloat16"],
          hint="in bfloat16 the whole block computes in bfloat16: the bias too, bias.to(q.dtype)",
          id="bfloat16_bias"),
    Check(ATTN, "bfloat16 with a bias the scheme makes in float32: SDPA gets it in q's dtype",
          "scheme_sdpa_mask_dtype", {**SIZES, "scheme": {**BIAS, "float32": True}, "x": randn(2, 7, 32, seed=15),
                                     "dtype": "bfloat16"},
          expect="property", property="mask_in_q_dtype", public=True, mistakes=("scheme_bias_not_cast",),
          id="bfloat16_mask_dtype",  # its answer (SDPA's mask dtype) does not depend on the values: its twin is the
          twin=(Check(ATTN, "bfloat16 with a float32 bias, weights and x drawn for this student", "scheme_attention",
                      attention({**BIAS, "seed": SEED, "float32": True}, randn(2, draw_int(2, 12), 32, seed=SEED),
                                dtype="bfloat16", seed=SEED),
                      mistakes=ALL_ATTN + ("scheme_bias_not_cast",), tol=HALF_TOL["bfloat16"]),)),  # forward (no id)
    Check(ATTN, "d_model not divisible by num_heads raises ValueError naming num_heads", "raises",
          {"ctor_args": [30, 4, None]}, expect="raises", mentions=("num_heads",), id="indivisible_raises"),
    *[
        Check(ATTN, f"on CUDA in {dtype}: every hook, forward and decoding", "scheme_attention_decode",
              attention(ALL, randn(2, 12, 32, seed=14), prefix=5, chunk=2, device="cuda", dtype=dtype), cuda=True,
              tol=HALF_TOL.get(dtype), hint=DEVICE_HINT, id=f"cuda_{dtype}")
        for dtype in ("float32", "bfloat16")
    ],
]

POSITIONAL_ATTENTION = Exercise(
    "PositionalAttention",
    convention="multi-head attention whose positions come from `scheme`: `q_proj`, `k_proj`, "
               "`v_proj`, `o_proj` without bias, q and k rotated before the cache, the bias added to "
               "q·k/sqrt(d) with the causal mask (queries aligned to the end) folded in, SDPA inside; "
               "returns `(out, (k, v))`",
    checks=POSITIONAL_ATTENTION_CHECKS,
    main=[
        unseen_like(find(POSITIONAL_ATTENTION_CHECKS, ATTN, "bias_forward"),
                    attention({"kind": "bias", "seed": SEED}, drawn_x(), seed=SEED),
                    "a learned relative bias, on inputs and weights drawn for this submission", id="main_bias"),
        unseen_like(find(POSITIONAL_ATTENTION_CHECKS, ATTN, "rotary_forward"), attention(ROTARY, drawn_x(), seed=SEED),
                    "rotary, on inputs and weights drawn for this submission", id="main_rotary"),
    ],
    hints=(
        "the block never asks which scheme it has: it asks the scheme to rotate queries and keys, and for a bias "
        "over the query and key positions, and attends as usual.",
        "the block never asks which scheme it has: after splitting the heads it calls "
        "`self.scheme.rotate(q, position_ids)` and `self.scheme.rotate(k, position_ids)` (never on v), before "
        "the new keys join the cache, and `self.scheme.bias(position_ids, k_positions)` once all keys are known.",
        "positions: with `past = kv_cache[0].shape[2]` cached keys, the new tokens sit at "
        "`torch.arange(past, past + seq, device=x.device)` and the keys at "
        "`torch.cat((torch.arange(past, device=x.device), position_ids))`.",
        "the bias joins the scaled scores before the softmax: SDPA adds a float `attn_mask` to q·kᵀ/sqrt(d), so "
        "pass the bias there, cast with `bias.to(q.dtype)`, and fold the causal rule in as -inf, with the "
        "queries aligned to the end of the keys: "
        "`allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)`.",
        "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
    ),
    mistakes={
        "scheme_bias_after_softmax": Mistake(
            "PositionalAttention",
            "the bias is added after the softmax: add it to the logits, before the softmax (SDPA's float attn_mask is "
            "added to q·k/sqrt(d)); after it, the weights no longer sum to one",
            hints=(
                "a bias shifts the logits, before the softmax turns them into weights; added to the weights, it breaks "
                "their sum of one and no longer acts as a preference between keys.",
                "the SDPA call where the block builds a mask (not when `bias is None and (not causal or seq == "
                "k_len)`, SDPA's own causal path): the bias travels inside the float `mask`, which SDPA adds to the "
                "scaled scores before its softmax; nothing is added to the output afterwards.",
                "key line: `out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)`",
            ),
            wrong="out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed) + (0 if bias is None else (bias "
                  "if allowed is None else bias.masked_fill(~allowed, 0.0)) @ v)",
        ),
        "scheme_bias_before_scale": Mistake(
            "PositionalAttention",
            "the bias is divided by sqrt(d_head) with the scores: add it after the scaling, logits = q·k/sqrt(d) + "
            "bias (what SDPA does with a float attn_mask)",
            hints=(
                "logits = q·k / sqrt(d) + bias: the scaling applies to q·k only; SDPA scales the scores, then adds the "
                "float mask.",
                "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
                "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it, nothing more.",
                "key line: `bias = bias.to(q.dtype)`",
            ),
            wrong="bias = bias.to(q.dtype) / math.sqrt(self.head_dim)",
        ),
        "scheme_no_causal_with_bias": Mistake(
            "PositionalAttention",
            "with a bias the causal mask is gone: ALiBi's -m|j - i| penalises future keys but does not hide them; fold "
            "the mask into the bias as -inf (bias.masked_fill(~allowed, -inf))",
            hints=(
                "a bias only prefers some keys; it hides none: the causal rule must still remove the future keys.",
                "the mask where the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, "
                "SDPA's own causal path): when `bias is None` the boolean `allowed` is the mask; otherwise fold "
                "`allowed` into the bias as -inf.",
                "key line: `mask = bias if allowed is None else bias.masked_fill(~allowed, float(\"-inf\"))`",
            ),
            wrong="mask = bias",
        ),
        "scheme_no_decode_offset": Mistake(
            "PositionalAttention",
            "positions are not offset when decoding: with a cache of `past` keys the new tokens sit at past, past + 1, "
            "..., not at 0, 1, ...",
            hints=(
                "with a cache the new tokens come after the cached ones: their positions continue from there.",
                "the default positions, when `position_ids is None`: they start at past, the cached length (`past = "
                "kv_cache[0].shape[2]`), and run for seq tokens.",
                "key line: `position_ids = torch.arange(past, past + seq, device=x.device)`",
            ),
            wrong="position_ids = torch.arange(seq, device=x.device)",
        ),
        "scheme_rotates_v": Mistake(
            "PositionalAttention",
            "the values are rotated too: scheme.rotate acts on queries and keys only",
            hints=(
                "the position belongs in the scores, q·k: only queries and keys are rotated; the values carry content "
                "and are averaged as they are.",
                "the line that hands q and k to `self.scheme.rotate`, right after the heads are split: v is not among "
                "them.",
                "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
            ),
            wrong="q, k, v = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids), "
                  "self.scheme.rotate(v, position_ids)",
        ),
        "scheme_k_not_rotated": Mistake(
            "PositionalAttention",
            "the keys are not rotated: rotate both q and k with scheme.rotate",
            hints=(
                "a rotation encodes position in q·k only when both sides turn: rotate the keys as well as the queries.",
                "the line that hands q to `self.scheme.rotate`: k goes through it too, at the same positions.",
                "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
            ),
            wrong="q = self.scheme.rotate(q, position_ids)",
        ),
        "scheme_cache_unrotated": Mistake(
            "PositionalAttention",
            "the cache holds keys before their rotation: rotate the new keys, then append them to the cache (a key's "
            "rotation depends only on its own position, so it is never redone)",
            hints=(
                "a key's rotation depends only on its own position, so it is done once, when the key is new: the cache "
                "stores keys already rotated and never redoes the work.",
                "the line that hands q to `self.scheme.rotate`, right after the heads are split: k goes through it "
                "there too, before it is appended to the cache, and the cache returned is those rotated keys.",
                "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
            ),
            wrong="q = self.scheme.rotate(q, position_ids)",
            also={
                "k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))":
                    "k_positions = torch.cat((torch.arange(past, device=x.device), position_ids)); "
                    "cached, k = k, self.scheme.rotate(k, k_positions)",
                "return self.o_proj(out), (k, v)": "return self.o_proj(out), (cached, v)",
            },
        ),
        "scheme_top_left_causal": Mistake(
            "PositionalAttention",
            "with a cache the causal mask is aligned to the start of the keys: query i of a chunk sits at k_len - seq "
            "+ i, so allow keys j <= k_len - seq + i (tril(k_len - seq), not is_causal=True)",
            hints=(
                "with a cache, the queries of a chunk are the last seq of k_len positions: the causal rule is aligned "
                "to the end of the keys.",
                "the boolean mask where the block builds a mask (not when `bias is None and (not causal or seq == "
                "k_len)`, SDPA's own causal path): query i may see keys j <= k_len - seq + i, so the triangle is "
                "shifted by k_len - seq.",
                "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq) if "
                "causal else None`",
            ),
            wrong="allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(0) if causal else None",
        ),
        "scheme_embeds_inside": Mistake(
            "PositionalAttention",
            "the attention block calls scheme.embed: an absolute table is added once, by the decoder, to the token "
            "embeddings; inside attention it would be added in every layer",
            hints=(
                "an absolute table is added once, to the token vectors at the bottom of the model; the attention block "
                "only projects what it receives, or the table would be added again in every layer.",
                "the projections, right after the helper `heads` is defined: they read x as it arrives, and the block "
                "calls `self.scheme.rotate` and `self.scheme.bias` only, never the scheme's embed.",
                "key line: `q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))`",
            ),
            wrong="x = self.scheme.embed(x, position_ids); q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), "
                  "heads(self.v_proj(x))",
        ),
        "scheme_causal_flipped": Mistake(
            "PositionalAttention",
            "the causal mask points the wrong way: each query sees the keys after it instead of those before it. The "
            "allowed keys are j <= k_len - seq + i, a lower triangle: tril(k_len - seq)",
            hints=(
                "causal means a query sees its own key and the keys before it, never the keys after it.",
                "the boolean mask where the block builds a mask (not when `bias is None and (not causal or seq == "
                "k_len)`, SDPA's own causal path): True on and below the diagonal, a lower triangle shifted by k_len - "
                "seq.",
                "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq) if "
                "causal else None`",
            ),
            wrong="allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).triu(k_len - seq) if causal "
                  "else None",
        ),
        "scheme_scale_by_d": Mistake(
            "PositionalAttention",
            "the scores are divided by d_head; divide them by sqrt(d_head) (SDPA's default scale): q·k has variance "
            "d_head, so its square root brings it to one",
            hints=(
                "q·k has variance d_head: dividing by its square root brings it to one, and SDPA does exactly that by "
                "default.",
                "the SDPA calls: leave its scale alone (the default is 1/sqrt(d_head)); the call with the mask, where "
                "the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, SDPA's own causal "
                "path), too.",
                "key line: `out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)`",
            ),
            wrong="out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1 / self.head_dim)",
        ),
        "scheme_merge_no_transpose": Mistake(
            "PositionalAttention",
            "the heads are merged without moving them back: (B, H, L, d_head) must be transposed to (B, L, H, d_head) "
            "before the reshape to (B, L, d_model)",
            hints=(
                "the heads were split as (B, L, H, d_head) then moved forward: merging reverses both steps, in the "
                "opposite order.",
                "the merge after SDPA: out (B, H, L, d_head) goes back to (B, L, H, d_head) before the reshape to "
                "(batch, seq, d_model).",
                "key line: `out = out.transpose(1, 2).reshape(batch, seq, self.d_model)`",
            ),
            wrong="out = out.reshape(batch, seq, self.d_model)",
        ),
        "scheme_split_wrong_order": Mistake(
            "PositionalAttention",
            "the heads are split in the wrong order: (B, L, d_model) is viewed as (B, L, H, d_head), then transposed "
            "to (B, H, L, d_head); viewed directly as (B, H, L, d_head) it mixes positions and heads",
            hints=(
                "the features of one token are contiguous: a token's d_model values split into H heads of d_head, and "
                "only then do the heads move forward.",
                "the helper that splits the heads: view (batch, seq, H, d_head), then swap the seq and head axes.",
                "key line: `return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)`",
            ),
            wrong="return t.view(batch, self.num_heads, seq, self.head_dim)",
        ),
        "scheme_bias_negated": Mistake(
            "PositionalAttention",
            "the bias is subtracted: it is added to the scaled logits, q·k/sqrt(d) + bias (ALiBi's bias is already "
            "negative)",
            hints=(
                "the bias is added to the logits as the scheme returns it: its sign is the scheme's business (ALiBi's "
                "is already negative).",
                "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
                "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it, do not change "
                "its sign.",
                "key line: `bias = bias.to(q.dtype)`",
            ),
            wrong="bias = -bias.to(q.dtype)",
        ),
        "scheme_bias_swapped": Mistake(
            "PositionalAttention",
            "scheme.bias gets its arguments swapped: it takes the query positions first, then the keys', "
            "scheme.bias(position_ids, k_positions), and returns (H, L, K); swapped, it is (H, K, L) and measures i - "
            "j, which shows as soon as a cache makes K differ from L",
            hints=(
                "a bias has one row per query and one column per key: asked about the keys first, it answers the "
                "transposed question, which looks right only while there are as many keys as queries.",
                "the call to `self.scheme.bias`: the query positions, `position_ids`, come first, then the key "
                "positions, `k_positions` (cached keys, then the new ones).",
                "key line: `bias = self.scheme.bias(position_ids, k_positions)`",
            ),
            wrong="bias = self.scheme.bias(k_positions, position_ids)",
        ),
        "scheme_bias_ignored": Mistake(
            "PositionalAttention",
            "the bias never reaches the logits: pass scheme.bias(...) to SDPA as the float attn_mask (with the causal "
            "mask folded in as -inf)",
            hints=(
                "a relative scheme speaks only through its bias: it must reach the scores as SDPA's float mask.",
                "the mask where the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, "
                "SDPA's own causal path): when `bias is None` the boolean `allowed` is enough; otherwise the mask is "
                "the bias with `allowed` folded in as -inf.",
                "key line: `mask = bias if allowed is None else bias.masked_fill(~allowed, float(\"-inf\"))`",
            ),
            wrong="mask = allowed",
        ),
        "scheme_cache_rotated_again": Mistake(
            "PositionalAttention",
            "the keys are rotated again after joining the cache: the cached keys were rotated when they were new; "
            "rotate only the new keys, before appending them",
            hints=(
                "a key is rotated once, by its own position, when it is new; the cached keys were rotated in an "
                "earlier call, and rotating them again adds their angle a second time.",
                "after the new keys join the cache: the key positions, `k_positions` (the `past` cached ones, then the "
                "new ones), are only computed there for the bias; the keys themselves are not rotated again.",
                "key line: `k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))`",
            ),
            wrong="k_positions = torch.cat((torch.arange(past, device=x.device), position_ids)); "
                  "k = self.scheme.rotate(k, k_positions)",
        ),
        "scheme_bias_not_cast": Mistake(
            "PositionalAttention",
            "the bias keeps its float32 dtype with bfloat16 queries: cast it to q's dtype first, bias.to(q.dtype), as "
            "the model would compute it in that dtype",
            hints=(
                "a model in bfloat16 computes in bfloat16: the bias, made in float32 by the scheme, joins the scores "
                "in q's dtype.",
                "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
                "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it to q's dtype.",
                "key line: `bias = bias.to(q.dtype)`",
            ),
            wrong="bias = bias",
        ),
    },
)


# ---- TinyDecoder ---------------------------------------------------------------------------------
def tokens(*shape, seed=0, vocab=20):
    return {"t": "randint", "low": 0, "high": vocab, "shape": list(shape), "seed": seed}


DECODER = "TinyDecoder"

DEC_SIZES = {"vocab_size": 20, "d_model": 32, "num_layers": 2, "num_heads": 4}


def decoder(scheme, toks, **kw):
    return {**DEC_SIZES, "scheme": scheme, "tokens": toks, **kw}


LOGIT_TOL = {"bfloat16": {"atol": 0.1, "rtol": 0.02}}

BLOCK_MISTAKES = ("decoder_post_norm", "decoder_no_attention_residual")
DECODER_MISTAKES = ("decoder_no_final_norm", "decoder_no_embed_scale") + BLOCK_MISTAKES
EMBED_MISTAKES = ("decoder_embed_every_layer", "decoder_embed_after_first_layer", "decoder_one_based_positions",
                  "decoder_embed_scale_after_table") + DECODER_MISTAKES

# the decoder's own wiring; when PositionalAttention fails its checks, the self-check says so itself
BLOCK_HINT = ("the token vectors scaled by sqrt(d_model) meet scheme.embed once, then the given pre-norm blocks "
              "in order, then the final norm and the tied head")


def drawn_tokens():
    return {"t": "randint", "low": 0, "high": 20, "shape": [2, draw_int(3, 12)], "seed": SEED}


TINY_DECODER_CHECKS = [
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
    *[
        Check(DECODER, f"on CUDA in {dtype}: every hook, decoding", "scheme_decoder_decode",
              decoder(ALL, tokens(2, 10, seed=11), prefix=4, chunk=3, device="cuda", dtype=dtype), cuda=True,
              tol=LOGIT_TOL.get(dtype), hint=DEVICE_HINT, id=f"cuda_{dtype}")
        for dtype in ("float32", "bfloat16")
    ],
]

TINY_DECODER = Exercise(
    "TinyDecoder",
    convention="a pre-norm decoder: `embed_tokens` (scaled by sqrt(d_model), then `scheme.embed` once), "
               "`layers` of the given `DecoderBlock`, `norm`, the head tied to `embed_tokens.weight`; "
               "positions `past .. past + seq - 1`; returns `(logits, kv_caches)`",
    checks=TINY_DECODER_CHECKS,
    main=[
        unseen_like(find(TINY_DECODER_CHECKS, DECODER, "nope_logits"), decoder(NONE, drawn_tokens(), seed=SEED),
                    "no positions: logits of tokens and weights drawn for this submission", id="main_nope"),
        unseen_like(find(TINY_DECODER_CHECKS, DECODER, "table_logits"),
                    decoder({"kind": "table", "seed": SEED}, drawn_tokens(),
                                                                   seed=SEED),
                    "an absolute table, on tokens and weights drawn for this submission", id="main_table"),
    ],
    hints=(
        "the position enters the model once, at the input, through the scheme; every block then only passes "
        "positions on, and the output head reuses the token table.",
        "the position enters the model once: scale the token vectors by sqrt(d_model), "
        "`math.sqrt(self.embed_tokens.embedding_dim)`, and hand them with the positions to the scheme's embed; "
        "the blocks only pass positions on to the attention.",
        "decoding: the first layer's cached keys say how many tokens came before, "
        "`past = kv_caches[0][0].shape[2]`, so the positions are "
        "`torch.arange(past, past + seq, device=tokens.device)`; layer n gets `kv_caches[n]` and returns its "
        "new cache.",
        "the head is the token table: `self.norm(h) @ self.embed_tokens.weight.T`; keep `self.scheme = scheme` "
        "so that a scheme with parameters trains with the model."
        " The positions, `position_ids`, are past .. past + seq - 1; h is the scaled token vectors.",
        "key line: `h = self.scheme.embed(h, position_ids)`",
    ),
    mistakes={
        "decoder_embed_every_layer": Mistake(
            "TinyDecoder",
            "the absolute table is added before every layer: add it once, to the token embeddings",
            hints=(
                "an absolute table enters the model once, at the input; the residual stream then carries it through "
                "every layer, so adding it again counts it twice.",
                "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
                "`cache`): h goes to each layer as the previous one left it, with nothing added.",
                "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else "
                "kv_caches[n])`",
            ),
            wrong="h, cache = layer(h if n == 0 else self.scheme.embed(h, position_ids), position_ids, self.causal, "
                  "None if kv_caches is None else kv_caches[n])",
        ),
        "decoder_embed_after_first_layer": Mistake(
            "TinyDecoder",
            "the absolute table is added after the first layer: add it to the token embeddings, before layer 0",
            hints=(
                "the positions must reach the first layer's attention: the table is added to the token vectors before "
                "any block runs, not after one.",
                "between the scaled token vectors h and the loop over the blocks: hand h and `position_ids` to the "
                "scheme's embed there, once.",
                "key line: `h = self.scheme.embed(h, position_ids)`",
            ),
            wrong="h = h",
            also={
                "h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])":
                    "h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n]); "
                    "h = self.scheme.embed(h, position_ids) if n == 0 else h",
            },
        ),
        "decoder_no_decode_offset": Mistake(
            "TinyDecoder",
            "positions are not offset when decoding: with caches holding `past` tokens the new tokens sit at past, "
            "past + 1, ...",
            hints=(
                "with caches the new tokens come after the cached ones: the cached length is where their positions "
                "start.",
                "the cached length, past: the keys in the first layer's cache, `kv_caches[0][0].shape[2]`, or 0 "
                "without caches.",
                "key line: `past = 0 if kv_caches is None else kv_caches[0][0].shape[2]`",
            ),
            wrong="past = 0",
        ),
        "decoder_no_final_norm": Mistake(
            "TinyDecoder",
            "the final LayerNorm is missing: logits = norm(h) @ embed_tokens.weight.T",
            hints=(
                "pre-norm blocks leave the residual stream unnormalised: one last LayerNorm comes before the head.",
                "the logits: the final norm, then the tied head; return them with the list of new caches, `caches`.",
                "key line: `return self.norm(h) @ self.embed_tokens.weight.T, caches`",
            ),
            wrong="return h @ self.embed_tokens.weight.T, caches",
        ),
        "decoder_no_embed_scale": Mistake(
            "TinyDecoder",
            "the token embeddings are not scaled: multiply them by sqrt(d_model) before the scheme's embed",
            hints=(
                "the token table starts at N(0, 1/d): scaled by sqrt(d) its vectors have entries of order one, like "
                "the position tables added to them.",
                "where the token vectors are looked up: multiply them by the square root of the embedding size before "
                "scheme.embed.",
                "key line: `h = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)`",
            ),
            wrong="h = self.embed_tokens(tokens)",
        ),
        "decoder_one_based_positions": Mistake(
            "TinyDecoder",
            "positions start at 1: the first token sits at position 0, the new tokens at past, past + 1, ...",
            hints=(
                "positions count from zero: the first token of a sequence sits at position 0, the new tokens after a "
                "cache at past, past + 1, ...",
                "the positions: from past, the cached length, for seq tokens.",
                "key line: `position_ids = torch.arange(past, past + seq, device=tokens.device)`",
            ),
            wrong="position_ids = torch.arange(past + 1, past + seq + 1, device=tokens.device)",
        ),
        "decoder_embed_scale_after_table": Mistake(
            "TinyDecoder",
            "sqrt(d_model) is applied after the scheme's embed, so it scales the position table too: scale the token "
            "vectors first, then hand them to scheme.embed",
            hints=(
                "sqrt(d_model) rescales the token table, which starts small; the position table has its own scale, so "
                "it is added after the scaling, untouched.",
                "where the token vectors are looked up: multiply them by the square root of the embedding size there, "
                "before they meet scheme.embed, and nothing after it.",
                "key line: `h = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)`",
            ),
            wrong="h = self.embed_tokens(tokens)",
            also={
                "h = self.scheme.embed(h, position_ids)":
                    "h = self.scheme.embed(h, position_ids) * math.sqrt(self.embed_tokens.embedding_dim)",
            },
        ),
        "decoder_post_norm": Mistake(
            "TinyDecoder",
            "the blocks are post-norm, LN(h + Attn(h)): the given DecoderBlock is pre-norm, h + Attn(LN(h)) then h + "
            "MLP(LN(h)); use it as it is",
            hints=(
                "the given DecoderBlock is pre-norm: each sublayer reads a normalised copy of h and adds its result to "
                "h itself. The decoder uses the block as it is and does not rebuild it.",
                "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
                "`cache`): call the block itself, not its attention, norms and MLP one by one.",
                "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else "
                "kv_caches[n])`",
            ),
            wrong="attended, cache = layer.attn(h, position_ids, self.causal, None if kv_caches is None else "
                  "kv_caches[n]); h = layer.attn_norm(h + attended); h = layer.mlp_norm(h + layer.mlp(h))",
        ),
        "decoder_no_attention_residual": Mistake(
            "TinyDecoder",
            "the attention's residual is missing: h = h + Attn(LN(h)), not h = Attn(LN(h)); the given DecoderBlock "
            "keeps it",
            hints=(
                "every sublayer adds to the residual stream: the attention's output is added to h, it does not replace "
                "it. The given DecoderBlock does exactly that.",
                "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
                "`cache`): call the block itself, not its attention and MLP one by one.",
                "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else "
                "kv_caches[n])`",
            ),
            wrong="attended, cache = layer.attn(layer.attn_norm(h), position_ids, self.causal, None if kv_caches is "
                  "None else kv_caches[n]); h = attended + layer.mlp(layer.mlp_norm(attended))",
        ),
        "decoder_ignores_causal": Mistake(
            "TinyDecoder",
            "the decoder ignores causal=False: pass self.causal on to every attention block",
            hints=(
                "causal is the model's choice, made once at construction: every attention block must receive it.",
                "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
                "`cache`): pass the stored flag on.",
                "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else "
                "kv_caches[n])`",
            ),
            wrong="h, cache = layer(h, position_ids, True, None if kv_caches is None else kv_caches[n])",
        ),
    },
)


EXERCISES = (POSITIONAL_ATTENTION, TINY_DECODER)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
