"""Progressive hints, one list per exercise: the self-check reveals them one at a time.

Level 0 is the `# Hint` block of the exercise's stub in the notebook: the idea and the shapes. When
the self-check fails, it shows level 1; each new attempt that still fails (new code, same exercise)
shows the next level; the last level is the key line of the solution. Each level may name a torch
function or write a formula; no level is code that is wrong when copied (tests/test_hints.py checks
that every code span parses, that no mask is built as a float tensor, and that each key line is a
line of the reference solution), and the first levels do not hand over the answer.
"""

HINTS = {
    # ---- chapter 0 ------------------------------------------------------------------------------
    "scaled_dot_product_attention": (
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
    # ---- chapter 1 ------------------------------------------------------------------------------
    "sinusoidal_table": (
        "each pair of columns (2i, 2i+1) holds one wave of frequency w_i = base^(-2i/d): the sine of p·w_i in the "
        "even column, its cosine in the odd one.",
        "the frequencies are w_i = base^(-2i/d) for i = 0 .. d/2 - 1. The exponent uses 2i, the index of the even "
        "column: `torch.arange(0, d_model, 2) / d_model` gives the d/2 values 2i/d.",
        "all angles at once: the outer product of the positions (L,) and the frequencies (d/2,), "
        "`torch.outer(positions, inv_freq)`, in float32.",
        "interleave, do not concatenate: into a (L, d) tensor from `torch.empty`, write the sines to the even "
        "columns, the strided slice `pe[:, 0::2]`, and the cosines to `pe[:, 1::2]`.",
        "key line: `pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)`",
    ),
    "shift_matrix": (
        "only the d/2 angles k·w_i are needed: the table's frequencies times k (a negative k works as it is).",
        "write the four entries of every block at once with an index tensor: with `idx = torch.arange(0, d_model, "
        "2)`, `m[idx, idx]`, `m[idx, idx + 1]`, `m[idx + 1, idx]` and `m[idx + 1, idx + 1]` are the four "
        "diagonals of the blocks.",
        "the signs: with the sine first in each pair, R_i(k) = [[cos, sin], [-sin, cos]]; the textbook rotation "
        "[[cos, -sin], [sin, cos]] moves positions backwards.",
        "key line: `m[idx + 1, idx] = -sin`",
    ),
    "SinusoidalPositionalEncoding": (
        "the table is computed once and belongs to the module: it must move with the module to a device, and it is "
        "not a weight to train.",
        "keep the table in a buffer: `self.register_buffer(name, table, persistent=False)` moves with .to(), is "
        "never trained, and stays out of checkpoints (an nn.Parameter is trained; a plain attribute stays behind "
        "on the CPU).",
        "slicing past the end of a tensor returns fewer rows, without an error. When offset + seq_len is larger "
        "than the buffer, compute the rows with sinusoidal_table(..., device=x.device) instead.",
        "outputs keep the input's dtype: add the rows cast to x.dtype."
        " Call the rows you add `pe`: a slice of the buffer, or freshly computed rows.",
        "key line: `return self.dropout(x + pe.to(x.dtype))`",
    ),
    # ---- chapter 2 ------------------------------------------------------------------------------
    "LearnablePositionalEncoding": (
        "a learned table is one trainable vector per position, looked up by the position index, started small.",
        "the table is `nn.Embedding(max_len, d_model)`, stored as self.position_embeddings. Its default start is "
        "N(0, 1): re-initialise its weight with `nn.init.trunc_normal_` and std=0.02.",
        "default positions are 0 .. seq_len - 1, built where x lives (`device=x.device`). A tensor built without a "
        "device sits on the CPU and fails as soon as the model is on a GPU.",
        "check before the lookup: seq_len > max_len, or given position_ids outside [0, max_len), raise ValueError "
        "naming max_len and the value; nn.Embedding alone raises an IndexError that names nothing.",
        "key line: `pe = self.position_embeddings(position_ids)`",
    ),
    "resize_position_table": (
        "F.interpolate does exactly this on a (batch, channels, length) tensor: put the positions last, (1, d, L), "
        "interpolate with mode=\"linear\" and align_corners=False, and move them back. Or write the formula.",
        "with the formula: i0 = floor(x_j), i1 = min(i0 + 1, L - 1), w = x_j - i0, and new row j is "
        "(1 - w)·table[i0] + w·table[i1].",
        "precision and place: compute x_j in float64 (in float32, near row 200 it is off by 1e-5 of a row), blend "
        "in float32 or wider, return table.dtype, and build every index on table.device."
        " With `old_len = table.shape[0]` and `j = torch.arange(new_len, dtype=torch.float64)`.",
        "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
    ),
    # ---- chapter 3 ------------------------------------------------------------------------------
    "relative_positions": (
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
    "shaw_attention_direct": (
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
    "shaw_attention": (
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
    "RelativePositionBias": (
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
    "t5_bucket": (
        "the direction first. Bidirectional: halve num_buckets, add the halved count where r > 0, and use n = |r|. "
        "Causal: n = max(-r, 0) and no offset.",
        "max_exact = num_buckets // 2, after any halving. Below max_exact the bucket is n itself.",
        "from max_exact on: max_exact + log(n / max_exact) / log(max_distance / max_exact) · (num_buckets - "
        "max_exact), computed in float32, truncated with `.long()`, capped at num_buckets - 1. Clamp n to at "
        "least max_exact before the log, to keep log(0) out."
        " Call the bucket of a large distance `large`, the direction's offset `offset`, and the distance `n`.",
        "key line: `return offset + torch.where(n < max_exact, n, large)`",
    ),
    "alibi_slopes": (
        "for n a power of two: start = 2^(-8/n) and the slopes start^1, start^2, ..., start^n.",
        "otherwise c = 2^floor(log2 n), the largest power of two not above n (an int's `bit_length()` gives its "
        "exponent): the c slopes of c heads, then the n - c odd powers start'^1, start'^3, ... of "
        "start' = 2^(-8/(2c)).",
        "compute in float32, as BLOOM does, on `device`.",
        "key line: `c = 1 << (num_heads.bit_length() - 1)`",
    ),
    "alibi_bias": (
        "ALiBi penalises every key in proportion to its distance from the query, with one slope per head: the bias "
        "is minus the slope times the distance.",
        "reuse your alibi_slopes and relative_positions (queries aligned to the end), both on `device`.",
        "broadcast the slopes as (H, 1, 1) against the (Lq, Lk) distances, then add the leading batch axis.",
        "the sign: ALiBi subtracts m·|j - i|: zero on the query's own key, negative everywhere else.",
        "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
    ),
    # ---- chapter 4 ------------------------------------------------------------------------------
    "rope_inv_freq": (
        "one frequency per plane (pair of coordinates), falling geometrically from 1 for the first plane to nearly "
        "1/base for the last.",
        "theta_i = 1 / base^(2i/d) for i = 0 .. d/2 - 1: the exponents 2i/d are `torch.arange(0, head_dim, 2)` "
        "divided by head_dim, in float32.",
        "check head_dim first: positive and even, or raise ValueError naming head_dim and its value.",
        "key line: `exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim`",
    ),
    "rope_cos_sin": (
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
    "rotate_half": (
        "x1 = x[..., :d/2] and x2 = x[..., d/2:]; the minus sign goes on x2, which moves to the front.",
        "an odd last dimension cannot be split in halves: raise ValueError naming its size.",
        "key line: `return torch.cat((-x2, x1), dim=-1)`",
    ),
    "apply_rope": (
        "the formula on the rotated part x_r = x[..., :R]: x_r·cos + rotate_half(x_r)·sin; then concatenate "
        "x[..., R:] back on the last axis.",
        "broadcasting over the heads: (L, R) tables line up with x's last two axes as they are; (B, L, R) tables "
        "need a head axis between B and L, (B, 1, L, R).",
        "cos and sin arrive in float32: cast them to x.dtype first, or a bfloat16 x comes out as float32 (type "
        "promotion).",
        "key line: `cos, sin = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)`",
    ),
    "apply_rope_interleaved": (
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
    "interleaved_to_half_perm": (
        "position i of x[..., perm] reads x[perm[i]]: the first half reads the even indices 0, 2, 4, ..., the "
        "second half the odd ones.",
        "check head_dim: positive and even.",
        "key line: `return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))`",
    ),
    "check_relative_property": (
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
    "RoPEAttention": (
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
    # ---- chapter 5 ------------------------------------------------------------------------------
    "yarn_ramp": (
        "the ramp says, per frequency pair, how much to interpolate: 0 for the fast pairs that turn many times "
        "within L0, 1 for the slow ones, linear in between.",
        "corr(r) = d·ln(L0 / (2·pi·r)) / (2·ln(base)), with Python floats (`math.log`); low = corr(beta_fast), "
        "high = corr(beta_slow).",
        "with truncate: low = floor(low), high = ceil(high). Then clamp both to [0, head_dim - 1] (head_dim - 1, as "
        "YaRN's code does), and add 0.001 to high when the two are equal.",
        "the ramp over pairs j = 0 .. d/2 - 1, in float32: (j - low) / (high - low), clamped to [0, 1].",
        "key line: `return ((j - low) / (high - low)).clamp(0, 1)`",
    ),
    "scaled_rope_inv_freq": (
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
    # ---- chapter 6 ------------------------------------------------------------------------------
    "RotaryCache": (
        "the tables are computed once, kept as buffers, looked up by position, and grown (on their own device) when "
        "a position falls past their end.",
        "buffers: `self.register_buffer(name, table, persistent=False)` keeps the tables out of the state_dict "
        "and moves them with .to(); registering again under the same name replaces them.",
        "growth: when max(position_ids) + 1 > max_len, rebuild longer tables on the device of the existing buffers, "
        "`self.cos_cached.device`, never on the default CPU; grow geometrically so that repeated growth stays "
        "cheap.",
        "lookup and dtype: `self.cos_cached[position_ids]` works for any shape of position_ids. Cast the rows you "
        "looked up (not the angles) to the requested dtype, float32 by default. Negative positions would read "
        "the table from its end: refuse them."
        " Grow only when `position_ids.numel() > 0` and `needed > self.max_len`, with `needed = "
        "int(position_ids.max()) + 1`.",
        "key line: `self._build(max(needed, 2 * self.max_len), device=self.cos_cached.device)`",
    ),
    # ---- chapter 7 ------------------------------------------------------------------------------
    "PositionalAttention": (
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
    "TinyDecoder": (
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
    "resize_position_table_2d": (
        "the patch rows are an image: set the num_prefix_tokens first rows aside, then reshape the rest to "
        "(old_h, old_w, d) (row r·W + c is pixel (r, c)) and move the channels first, (1, d, H, W).",
        "resize that image with `F.interpolate`, giving `size=(new_h, new_w)` (height first), `mode=mode`, "
        "`align_corners=False` and `antialias=antialias`, in float32; then go back to (H'·W', d), row-major.",
        "put the prefix rows back in front with `torch.cat` and return the table's dtype.",
        "key line: `image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]`",
    ),
    "sincos_2d_table": (
        "chapter 1's sinusoids twice, each over d/4 frequencies ω_i = base^(-i/(d/4)): one (sin, cos) pair of blocks "
        "for the patch's row, one for its column.",
        "patch k of a row-major grid sits at row k // grid_w and column k % grid_w; with `row_angles` = r·ω and "
        "`col_angles` = c·ω, each (H·W, d/4), the table is [sin(rω) | cos(rω) | sin(cω) | cos(cω)], each block d/4 "
        "wide (sines then cosines, not interleaved).",
        "compute the angles in float64 (as transformers does) and return float32; build every tensor on `device`.",
        "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], "
        "dim=-1)`",
    ),
    "axial_rope_cos_sin": (
        "one frequency ladder over half the head: θ_j = base^(-2j/(d/2)) for j = 0 .. d/4 - 1, shared by the rows "
        "and the columns.",
        "each patch has d/2 angles: its row times θ, then its column times θ, [rθ | cθ]; "
        "`position_ids.float()[..., None] * theta` gives (N, 2, d/4), and `angles.flatten(-2)` puts them side by side.",
        "half layout: the tables are the cos and sin of `torch.cat((angles, angles), dim=-1)`, so coordinate j and "
        "coordinate j + d/2 share one angle.",
        "key line: `angles = angles.flatten(-2)`",
    ),
    "check_axial_property": (
        "chapter 4's test on a grid: put the same random q (and k) on every cell of a grid x grid grid (row-major "
        "(row, column) ids, shape (P, 2)) and call rope_fn once on (V, 1, P, d).",
        "norms: |f(q, a)| = |q| for every cell, to a relative tolerance. Movement: f(q, (r, 0)) must differ from "
        "f(q, (0, 0)) for some r, and f(q, (0, c)) for some c, or one axis is never used.",
        "relative scores: compare every S[a, b] with the score of the same displacement `delta` = b - a from the "
        "cell `start` = (max(0, -Δr), max(0, -Δc)) to `start` + `delta`, relative to |q|·|k|.",
        "key line: `start = (-delta).clamp(min=0)`",
    ),
    "mrope_position_ids": (
        "walk each row's real tokens group by group (a run of one kind) with a counter s, the next position.",
        "the counter is `start`, and `kinds[i] == 0` marks a text run: a text run of n tokens takes s .. s + n - 1 "
        "in all three ids; a vision run takes the next row of its "
        "grid_thw, (T, H/m, W/m) merged tokens, and token (t, i, j) gets (s + t, s + i, s + j) "
        "(`torch.meshgrid(..., indexing=\"ij\")`).",
        "after a vision run of `h` x `w` merged tokens (h = H/m, w = W/m), `start` moves on by max(h, w); padded "
        "positions (attention_mask 0) are left out and keep 0.",
        "key line: `start += max(h, w)`",
    ),
    "mrope_cos_sin": (
        "chapter 4's ladder over the whole head, θ_i = base^(-2i/d), multiplied by each of the three ids: angles "
        "(3, B, L, d/2).",
        "cut the d/2 frequencies into mrope_section's three blocks with `angles.split(list(mrope_section), dim=-1)`; "
        "block k takes its angles from id k (time, height, width).",
        "join the chosen blocks back to (B, L, d/2), then the half layout: cos and sin of "
        "`torch.cat((chosen, chosen), dim=-1)`.",
        "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
    ),
}

# Shaw attention's two forms mask the same way, in the same statement: one ladder for both
_SHAW_CAUSAL_FLIPPED = {
    "levels": (
        "causal means a query sees its own key and the keys before it: the keys to hide are those after the "
        "query, where the key's position minus the query's is positive.",
        "the mask on the logits `scores` when `causal`: -inf where the distances `rel` (key minus query) are "
        "greater than 0.",
        "key line: `scores = scores.masked_fill(rel > 0, float(\"-inf\"))`",
    ),
    "wrong": "scores = scores.masked_fill(rel < 0, float(\"-inf\"))",
}

# One short ladder per named mistake: the idea that the mistake misses (no code), where to look in your code,
# and the key line, the solution's line that fixes it. "wrong" is that line as the mistake writes it: the
# tests paste it into the solution in place of the key line and require the self-check to name this mistake
# (tests/test_hints.py), so each key line is proven to run where it stands and to fix its own mistake. Where no
# single statement makes the mistake (a sign on two entries, masking moved past the softmax, the rotation moved
# after the cache), "also" maps the other statements it rewrites to their mistaken forms; neither the key line's
# "wrong" alone nor those others alone may be that mistake. A mistake without a ladder here gets its exercise's
# ladder (HINTS).
MISTAKE_HINTS = {
    # ---- chapter 0 ------------------------------------------------------------------------------
    "sdpa_no_scale": {
        "levels": (
            "the dot product of two random d-dimensional vectors has variance d: unscaled, the scores grow with d "
            "and the softmax saturates onto one key.",
            "the line that computes the scores: divide them by the square root of q's last dimension, d.",
            "key line: `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",
        ),
        "wrong": "scores = q @ k.transpose(-2, -1)",
    },
    "sdpa_scale_by_d": {
        "levels": (
            "dividing by d over-corrects: the scores' standard deviation is sqrt(d), so sqrt(d) brings it to one.",
            "the line that computes the scores: the divisor is the square root of q's last dimension.",
            "key line: `scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])`",
        ),
        "wrong": "scores = q @ k.transpose(-2, -1) / q.shape[-1]",
    },
    "sdpa_softmax_over_queries": {
        "levels": (
            "each query spreads its attention over the keys: its weights must sum to one across the keys.",
            "the softmax's dimension: the scores are (..., Lq, Lk), so the keys are the last axis.",
            "key line: `weights = torch.softmax(scores, dim=-1)`",
        ),
        "wrong": "weights = torch.softmax(scores, dim=-2)",
    },
    "sdpa_mask_inverted": {
        "levels": (
            "in torch's convention a boolean mask is True where a query may attend; the scores to remove are where "
            "it is False.",
            "the masked fill, where `mask is not None` and `mask.dtype == torch.bool`: fill with -inf under the "
            "negated mask.",
            "key line: `scores = scores.masked_fill(~mask, float(\"-inf\"))`",
        ),
        "wrong": "scores = scores.masked_fill(mask, float(\"-inf\"))",
    },
    "sdpa_mask_after_softmax": {
        "levels": (
            "masking removes keys before the weights are made: a masked key's score becomes minus infinity, so the "
            "softmax gives it weight 0 and shares the whole row among the keys that remain. Weights zeroed after "
            "the softmax no longer sum to 1.",
            "move the masking above the softmax, onto the scores `scores`: where `mask is not None` and "
            "`mask.dtype == torch.bool`, fill them with -inf where the mask is False (a float mask is added to them "
            "there too); after the softmax nothing touches the weights.",
            "key line: `scores = scores.masked_fill(~mask, float(\"-inf\"))`",
        ),
        "wrong": "pass",
        "also": {"weights = torch.softmax(scores, dim=-1)": "weights = torch.softmax(scores, dim=-1)\n"
                                                             "if mask is not None and mask.dtype == torch.bool:\n"
                                                             "    weights = weights.masked_fill(~mask, 0.0)"},
    },
    # ---- chapter 1 ------------------------------------------------------------------------------
    "table_swapped": {
        "levels": (
            "in each pair of columns the sine comes first: column 2i holds sin(p·w_i), column 2i+1 cos(p·w_i).",
            "where you write the angles into the table, `pe` (L, d): the even columns (step 2 from 0) take the sines.",
            "key line: `pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)`",
        ),
        "wrong": "pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)",
    },
    "table_concatenated": {
        "levels": (
            "the sine and cosine of one frequency sit side by side, in columns 2i and 2i+1: interleaved, not all "
            "sines followed by all cosines.",
            "where you assemble the table: write into the even and the odd columns of one (L, d) tensor, `pe` "
            "(strided slices), instead of concatenating.",
            "key line: `pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)`",
        ),
        "wrong": "pe = torch.cat((torch.sin(angles), torch.cos(angles)), dim=-1)",
    },
    "table_i_over_d": {
        "levels": (
            "pair i uses the exponent 2i/d, with 2i the index of its even column, so the last pair's frequency is "
            "close to 1/base, not 1/sqrt(base).",
            "the frequencies: the exponents are the even column indices 0, 2, 4, ... divided by d_model.",
            "key line: `inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32, device=device) "
            "/ d_model))`",
        ),
        "wrong": "inv_freq = 1.0 / (base ** (torch.arange(0, d_model // 2, dtype=torch.float32, device=device) "
                 "/ d_model))",
    },
    "shift_backwards": {
        "levels": (
            "with the sine first in each pair, the shift by +k takes (sin, cos) at p to (sin, cos) at p + k: the "
            "block is [[cos, sin], [-sin, cos]], the transpose of the textbook rotation, which shifts by -k.",
            "the two off-diagonal entries of every block of the matrix `m`, at `idx = torch.arange(0, d_model, 2)`: "
            "the sine `sin` goes above the diagonal, `m[idx, idx + 1]`, and minus the sine below it.",
            "key line: `m[idx + 1, idx] = -sin`",
        ),
        "wrong": "m[idx + 1, idx] = sin",
        "also": {"m[idx, idx + 1] = sin": "m[idx, idx + 1] = -sin"},
    },
    "module_swapped": {
        "levels": (
            "the module adds chapter 1's table: in each pair of columns the sine comes first, column 2i holds "
            "sin(p·w_i) and column 2i+1 cos(p·w_i).",
            "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. If "
            "yours is the one called there, its own self-check names the same mistake: fix it there first.",
            "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
        ),
        "wrong": "self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base).view(max_len, -1, 2).flip(-1)"
                 ".flatten(1), persistent=False)",
    },
    "module_i_over_d": {
        "levels": (
            "pair i of the module's table uses the exponent 2i/d, with 2i the index of its even column, so the last "
            "pair's frequency is close to 1/base, not 1/sqrt(base).",
            "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. If "
            "yours is the one called there, its own self-check names the same mistake: fix it there first.",
            "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
        ),
        # base^(-i/d) is sqrt(base)^(-2i/d)
        "wrong": "self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base ** 0.5), persistent=False)",
    },
    "module_concatenated": {
        "levels": (
            "in the module's table the sine and cosine of one frequency sit side by side, in columns 2i and 2i+1: "
            "interleaved, not all sines followed by all cosines.",
            "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. If "
            "yours is the one called there, its own self-check names the same mistake: fix it there first.",
            "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
        ),
        "wrong": "self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base).view(max_len, -1, 2)"
                 ".transpose(1, 2).flatten(1), persistent=False)",
    },
    # ---- chapter 2 ------------------------------------------------------------------------------
    "learned_ignores_position_ids": {
        "levels": (
            "the caller chooses the positions: given position ids (a chunk that continues after a cache, a sequence "
            "padded on the left), each token gets the row of its own position, not rows 0, 1, 2, ...",
            "the lookup: only when `position_ids is None` do you build 0 .. seq_len - 1; otherwise look up exactly "
            "the ids you were given, one row for each.",
            "key line: `pe = self.position_embeddings(position_ids)`",
        ),
        "wrong": "pe = self.position_embeddings(torch.arange(seq_len, device=x.device))",
    },
    "resize_align_corners": {
        "levels": (
            "each new row stands for the centre of its cell: new row j sits at (j + 1/2)·L/L' - 1/2 old rows, the "
            "cell-centre convention of F.interpolate's default. Pinning the first and last rows to the old ones "
            "changes the step to (L - 1)/(L' - 1) old rows and moves every row in between.",
            "the source positions, in old rows: with `old_len = table.shape[0]` and `j = torch.arange(new_len, "
            "dtype=torch.float64)`, shift by half a row before and after the scaling, then clamp to [0, old_len - 1]; "
            "with F.interpolate, pass align_corners=False.",
            "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
        ),
        "wrong": "x = torch.linspace(0, old_len - 1, new_len, dtype=torch.float64, device=table.device)",
    },
    "resize_wrong_axis": {
        "levels": (
            "the positions are the table's rows: resizing stretches the position axis and leaves the d features of "
            "each row as they are. F.interpolate resizes the last axis, so the positions must come last.",
            "the length you resize is the number of rows, axis 0 of the table. With F.interpolate, hand it "
            "(1, d, L), `table.T[None]`, and transpose the result back.",
            "key line: `old_len = table.shape[0]`",
        ),
        "wrong": "old_len = table.shape[1]",
        "also": {"rows = table.to(work)": "rows = table.T.to(work)",
                 "return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)":
                     "return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype).T"},
    },
    "resize_not_transposed_back": {
        "levels": (
            "the result is a table like the input, one row per position: (new_len, d). F.interpolate works on "
            "(batch, channels, length), so its result has the positions last.",
            "the shape of what you return. With F.interpolate on `table.T[None]`, take `[0].T`. With the formula, "
            "the blend of `rows[i0]` and `rows[i1]` (`rows` the table in float32, `w` the weight of row i1) is "
            "already (new_len, d).",
            "key line: `return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)`",
        ),
        "wrong": "return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype).T",
    },
    "resize_nearest": {
        "levels": (
            "a resized table blends the two old rows around each new position, each weighted by how close it is; "
            "copying the nearest row makes steps where the positions should move smoothly.",
            "the source positions x_j = (j + 1/2)·old_len/new_len - 1/2, with `old_len = table.shape[0]` and "
            "`j = torch.arange(new_len, dtype=torch.float64)`: not rounded, not floored, since their fraction is the "
            "weight of the upper row. With F.interpolate, mode=\"linear\".",
            "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
        ),
        "wrong": "x = (j * (old_len / new_len)).floor().clamp(0, old_len - 1)",
    },
    # ---- chapter 3 ------------------------------------------------------------------------------
    "alibi_slopes_power_of_two_formula": {
        "levels": (
            "the geometric formula holds for a power-of-two head count only; other counts take the slopes of the "
            "largest power of two below them, then every other slope of the next power of two.",
            "where you choose the head count the formula is applied to: c is the largest power of two not above "
            "num_heads (an int's `bit_length()` gives its exponent), and the n - c extra heads come after.",
            "key line: `c = 1 << (num_heads.bit_length() - 1)`",
        ),
        "wrong": "c = num_heads",
    },
    "alibi_bias_positive": {
        "levels": (
            "ALiBi lowers the logit of a key the further it is from the query: the bias is negative away from the "
            "diagonal.",
            "the sign of what you return: minus the slope times the distance.",
            "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
        ),
        "wrong": "return (slopes[:, None, None] * distance).unsqueeze(0)",
    },
    "alibi_bias_key_position": {
        "levels": (
            "the bias depends on the distance between query and key, |j - i|, not on the key's position alone.",
            "the distances: your relative_positions (queries aligned to the end), their absolute value, times "
            "minus the slope.",
            "key line: `return -(slopes[:, None, None] * distance).unsqueeze(0)`",
        ),
        "wrong": "return (slopes[:, None, None] * torch.arange(k_len, device=device).expand(q_len, "
        "k_len)).unsqueeze(0)",
    },
    "bias_sign_flipped": {
        "levels": (
            "the table's rows are ordered by the key's position minus the query's, j - i: row K + 1 is the key one "
            "step after the query. Indexing with i - j reads every row's mirror image.",
            "the index of the lookup: the distances `rel`, relative_positions(q_len, k_len) (key minus query), "
            "clipped to [-K, K] with K = self.max_distance, plus K; do not negate them.",
            "key line: `values = self.bias(rel.clamp(-K, K) + K)`",
        ),
        "wrong": "values = self.bias((-rel).clamp(-K, K) + K)",
    },
    "bias_clip_off_by_one": {
        "levels": (
            "the table has 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so the first "
            "and last rows serve every key K or more steps away.",
            "the clip of the distances `rel` before the lookup: the bounds are -K and K (K = self.max_distance), "
            "then add K.",
            "key line: `values = self.bias(rel.clamp(-K, K) + K)`",
        ),
        "wrong": "values = self.bias(rel.clamp(-(K - 1), K - 1) + K)",
    },
    "t5_causal_as_bidirectional": {
        "levels": (
            "a causal model only looks back: with bidirectional=False all num_buckets serve the keys before the "
            "query, by their distance i - j, and every key after it falls into bucket 0. No upper half, no halving.",
            "the branch where `bidirectional` is false: no offset (zeros), the full num_buckets, and the distance "
            "n = max(-r, 0), which is 0 for every key after the query.",
            "key line: `n = (-r).clamp(min=0)`",
        ),
        "wrong": "n = r.abs()",
        "also": {"offset = torch.zeros_like(r, dtype=torch.long)": "num_buckets //= 2\n"
                                                                   "offset = (r > 0).long() * num_buckets"},
    },
    "t5_sign_flipped": {
        "levels": (
            "the input is r = j - i, key minus query: a key after the query has r > 0. Bidirectional, those keys take "
            "the upper half of the buckets; causal, the keys before the query have r < 0 and the distance -r.",
            "every place where the sign of r enters: the offset when `bidirectional`, for the keys with r > 0, and "
            "the causal distance max(-r, 0).",
            "key line: `offset = (r > 0).long() * num_buckets`",
        ),
        "wrong": "offset = (r < 0).long() * num_buckets",
    },
    "alibi_bias_power_of_two_formula": {
        "levels": (
            "the bias uses the slopes of alibi_slopes: the geometric formula holds for a power-of-two head count "
            "only; other counts take the slopes of the largest power of two below them, then every other slope of "
            "the next one.",
            "where the bias gets its slopes: reuse your alibi_slopes, once it passes its own self-check, instead of "
            "a formula written again here.",
            "key line: `slopes = alibi_slopes(num_heads, device=device)`",
        ),
        "wrong": "slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float32, device=device) "
                 "/ num_heads)",
    },
    "shaw_sign_flipped": {
        "levels": (
            "the tables are indexed by the key's position minus the query's, j - i: a key one step before the query "
            "reads row K - 1, one step after it row K + 1.",
            "the index of the table rows: the distances `rel`, relative_positions(Lq, Lk) (key minus query), clipped "
            "to [-K, K] with K = max_distance, plus K, the whole expanded (a view) to (batch, heads, q_len, k_len); "
            "do not negate them.",
            "key line: `idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
            "k_len)`",
        ),
        "wrong": "idx = ((-rel).clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
                 "k_len)",
    },
    "shaw_direct_sign_flipped": {
        "levels": (
            "the tables are indexed by the key's position minus the query's, j - i: a key one step before the query "
            "reads row K - 1, one step after it row K + 1.",
            "the index of the table rows: the distances `rel`, relative_positions(Lq, Lk) (key minus query), clipped "
            "to [-K, K] with K = max_distance, plus K; do not negate them.",
            "key line: `idx = rel.clamp(-max_distance, max_distance) + max_distance`",
        ),
        "wrong": "idx = (-rel).clamp(-max_distance, max_distance) + max_distance",
    },
    "shaw_clip_off_by_one": {
        "levels": (
            "the tables have 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so rows 0 and "
            "2K serve every key K or more steps away.",
            "the clip of the distances `rel` before indexing: the bounds are -K and K (K = max_distance), then add "
            "K, the whole expanded (a view) to (batch, heads, q_len, k_len).",
            "key line: `idx = (rel.clamp(-max_distance, max_distance) + max_distance).expand(batch, heads, q_len, "
            "k_len)`",
        ),
        "wrong": "idx = (rel.clamp(-(max_distance - 1), max_distance - 1) + max_distance).expand(batch, heads, "
                 "q_len, k_len)",
    },
    "shaw_direct_clip_off_by_one": {
        "levels": (
            "the tables have 2K + 1 rows, for the distances -K .. K: the clip keeps distance K itself, so rows 0 and "
            "2K serve every key K or more steps away.",
            "the clip of the distances `rel` before indexing: the bounds are -K and K (K = max_distance), then add "
            "K.",
            "key line: `idx = rel.clamp(-max_distance, max_distance) + max_distance`",
        ),
        "wrong": "idx = rel.clamp(-(max_distance - 1), max_distance - 1) + max_distance",
    },
    "shaw_unscaled": {
        "levels": (
            "Shaw et al. add the relative key to the key before the dot product, e_ij = q_i·(k_j + a^K_ij) / "
            "sqrt(d): both logit terms are divided by sqrt(d), not q·k alone.",
            "the logits: the relative logits `rel_logits` (q against the key table, gathered by distance) join q·k "
            "first, and the sum is divided by sqrt(head_dim), with `head_dim = q.shape[-1]`.",
            "key line: `scores = (q @ k.transpose(-2, -1) + rel_logits) / math.sqrt(head_dim)`",
        ),
        "wrong": "scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim) + rel_logits",
    },
    "shaw_direct_unscaled": {
        "levels": (
            "Shaw et al. add the relative key to the key before the dot product, e_ij = q_i·(k_j + a^K_ij) / "
            "sqrt(d): both logit terms are divided by sqrt(d), not q·k alone.",
            "the logits: add q·a^K (q against the key rows of the pairs, `a_k`) to q·k first, then divide the sum by "
            "the square root of q's last dimension.",
            "key line: `scores = q @ k.transpose(-2, -1) + (q.unsqueeze(-2) * a_k).sum(-1)`",
        ),
        "wrong": "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + (q.unsqueeze(-2) * a_k).sum(-1)",
        "also": {"scores = scores / math.sqrt(q.shape[-1])": "pass"},
    },
    "shaw_value_ignored": {
        "levels": (
            "the value table carries position into the output too: z_i = sum_j alpha_ij (v_j + a^V_ij), so each "
            "key's weight also takes the value row of its distance.",
            "what you return: besides `attn @ v`, the weights `attn` summed per table row with `scatter_add_` into "
            "`per_row` (B, H, Lq, 2K + 1), times the value table rel_v.",
            "key line: `return attn @ v + per_row @ rel_v`",
        ),
        "wrong": "return attn @ v",
    },
    "shaw_direct_value_ignored": {
        "levels": (
            "the value table carries position into the output too: z_i = sum_j alpha_ij (v_j + a^V_ij), so each "
            "key's weight also takes the value row of its distance.",
            "what you return: besides `attn @ v`, the weights `attn` times the value rows of the pairs, `a_v = "
            "rel_v[idx]` (Lq, Lk, d), summed over the keys.",
            "key line: `return attn @ v + (attn.unsqueeze(-1) * a_v).sum(-2)`",
        ),
        "wrong": "return attn @ v",
    },
    "shaw_causal_flipped": _SHAW_CAUSAL_FLIPPED,  # the same line in both forms
    "shaw_direct_causal_flipped": _SHAW_CAUSAL_FLIPPED,
    # ---- chapter 4 ------------------------------------------------------------------------------
    "apply_no_cast": {
        "levels": (
            "outputs keep the input's dtype: float32 tables times a bfloat16 x promote the product to float32.",
            "before the tables meet x: cast cos and sin to x's dtype.",
            "key line: `cos, sin = cos.to(x.dtype), sin.to(x.dtype)`",
        ),
        "wrong": "cos, sin = cos, sin",
    },
    "cos_sin_interleaved": {
        "levels": (
            "rotate_half pairs coordinate i with coordinate i + d/2, so both must carry the same angle: the table "
            "holds the d/2 angles once for each half, end to end, not each angle twice side by side.",
            "where the angles `freqs` (..., L, d/2) become the (..., L, d) table: join two copies of `freqs` on the "
            "last axis; `repeat_interleave` builds the interleaved layout instead.",
            "key line: `emb = torch.cat((freqs, freqs), dim=-1)`",
        ),
        "wrong": "emb = freqs.repeat_interleave(2, dim=-1)",
    },
    "cos_sin_i_over_d": {
        "levels": (
            "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so the "
            "slowest plane reaches nearly 1/base, not 1/sqrt(base).",
            "where the frequencies `inv_freq` come from: your rope_inv_freq already builds them from the even "
            "indices; call it with position_ids' device instead of writing the exponents again.",
            "key line: `inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)`",
        ),
        "wrong": "inv_freq = 1.0 / base ** (torch.arange(head_dim // 2, dtype=torch.float32, "
                 "device=position_ids.device) / head_dim)",
    },
    "rotate_half_neighbours": {
        "levels": (
            "the half layout pairs coordinate i with coordinate i + d/2: rotate_half works on the two halves of the "
            "last axis, not on neighbouring coordinates (that is GPT-J's interleaved layout).",
            "the return: concatenate the halves x1 and x2 on the last axis, the second half negated and first; no "
            "strided slices, no `torch.stack`.",
            "key line: `return torch.cat((-x2, x1), dim=-1)`",
        ),
        "wrong": "return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)",
    },
    "apply_sign": {
        "levels": (
            "the rotation by +m·theta is x·cos + rotate_half(x)·sin, with a plus: with a minus every plane turns by "
            "-m·theta, which is still relative but not the convention the checkpoints were trained with.",
            "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
            "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the first half of `out` gains -x2·sin, "
            "the second half +x1·sin.",
            "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1); out[..., half:rot].addcmul_(x1, "
            "sin[..., half:])`",
        ),
        "wrong": "out[..., :half].addcmul_(x2, sin[..., :half])\n"
                 "out[..., half:rot].addcmul_(x1, sin[..., half:], value=-1)",
    },
    "apply_rotate_half_no_minus": {
        "levels": (
            "rotate_half(x) is (-x2, x1): the half that moves to the front is negated. Without that minus the map "
            "swaps the halves, a reflection, and the result is no rotation.",
            "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
            "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the first half of `out` gains minus "
            "x2·sin. If you call your own rotate_half, its self-check shows the same fix.",
            "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1)`",
        ),
        "wrong": "out[..., :half].addcmul_(x2, sin[..., :half])",
    },
    "apply_rotate_half_neighbours": {
        "levels": (
            "the tables are in the half layout, so the rotation must pair coordinate i with i + d/2, the two halves, "
            "not neighbouring coordinates 2i and 2i + 1.",
            "where rotate_half(x)·sin joins x·cos (with `rot = cos.shape[-1]`, `half = rot // 2`, `x1, x2 = "
            "x[..., :half], x[..., half:rot]` and `out` holding x·cos): the halves x1 and x2 feed the halves of "
            "`out`, with no strided slices. If you call your own rotate_half, fix it first.",
            "key line: `out[..., :half].addcmul_(x2, sin[..., :half], value=-1); out[..., half:rot].addcmul_(x1, "
            "sin[..., half:])`",
        ),
        "wrong": "out[..., 0:rot:2].addcmul_(x[..., 1:rot:2], sin[..., 0::2], value=-1)\n"
                 "out[..., 1:rot:2].addcmul_(x[..., 0:rot:2], sin[..., 1::2])",
    },
    "interleaved_half_layout": {
        "levels": (
            "the interleaved layout rotates neighbours: coordinates 2i and 2i + 1 form plane i, one complex number "
            "x_2i + i·x_2i+1, and the output keeps them side by side.",
            "how you read the pairs and write them back (with `head_dim = x.shape[-1]` and `rotation` = "
            "e^(i·angles)): reshape the last axis to (head_dim // 2, 2), real and imaginary part adjacent, and "
            "flatten the same way back; no halves, no rotate_half.",
            "key line: `pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2)); return "
            "torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)`",
        ),
        "wrong": "pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], 2, head_dim // 2).transpose(-1, -2)"
                 ".contiguous())\n"
                 "return torch.view_as_real(pairs * rotation).transpose(-1, -2).flatten(-2).to(x.dtype)",
    },
    "interleaved_layout_mix": {
        "levels": (
            "a layout is a pairing and its tables together: neighbour-paired tables with rotate_half's halves rotate "
            "no plane. Here each neighbouring pair is one complex number, turned by one angle.",
            "how you read the pairs and write them back (with `head_dim = x.shape[-1]` and `rotation` = "
            "e^(i·angles)): the neighbours as complex numbers, `torch.view_as_complex` on a last axis of size 2, "
            "instead of rotate_half with repeated tables.",
            "key line: `pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], head_dim // 2, 2)); return "
            "torch.view_as_real(pairs * rotation).flatten(-2).to(x.dtype)`",
        ),
        "wrong": "emb = angles.repeat_interleave(2, dim=-1)\n"
                 "return x * emb.cos().to(x.dtype) + rotate_half(x) * emb.sin().to(x.dtype)",
    },
    "interleaved_conjugate": {
        "levels": (
            "multiplying by e^(+i·p·theta) turns a pair forwards; its conjugate e^(-i·p·theta) turns it backwards, by "
            "-p·theta.",
            "the complex rotation built from the `angles`: modulus one, and the angles as they are, no minus.",
            "key line: `rotation = torch.polar(torch.ones_like(angles), angles)`",
        ),
        "wrong": "rotation = torch.polar(torch.ones_like(angles), -angles)",
    },
    "interleaved_i_over_d": {
        "levels": (
            "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so the "
            "slowest plane reaches nearly 1/base, not 1/sqrt(base).",
            "where the frequencies `inv_freq` come from, for `head_dim = x.shape[-1]`: your rope_inv_freq already "
            "builds them right; call it on x's device instead of writing the exponents again.",
            "key line: `inv_freq = rope_inv_freq(head_dim, base, device=x.device)`",
        ),
        "wrong": "inv_freq = 1.0 / base ** (torch.arange(head_dim // 2, dtype=torch.float32, device=x.device) "
                 "/ head_dim)",
    },
    "perm_inverse": {
        "levels": (
            "x[..., perm] reads: position i of the result takes x[perm[i]]. So perm lists where each new position "
            "reads from: first every even index, then every odd one. The other direction is the inverse permutation.",
            "the return: the even indices 0, 2, 4, ... followed by the odd ones 1, 3, 5, ..., each from "
            "`torch.arange` with step 2.",
            "key line: `return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))`",
        ),
        "wrong": "return torch.arange(head_dim).view(2, head_dim // 2).T.flatten()",
    },
    "attn_layout_mix": {
        "levels": (
            "apply_rope's rotate_half pairs coordinate i with i + d/2, so the tables it gets must be in the same "
            "half layout: each angle once per half, end to end.",
            "where the block builds `cos, sin` for its positions: take them from your rope_cos_sin (half layout), "
            "not from repeated (interleaved) angles.",
            "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
        ),
        "wrong": "cos, sin = (t[..., : self.head_dim // 2].repeat_interleave(2, dim=-1) "
                 "for t in rope_cos_sin(position_ids, self.head_dim, self.base))",
    },
    "attn_sign": {
        "levels": (
            "RoPE turns every plane forwards, by +m·theta: x·cos + rotate_half(x)·sin with rotate_half(x) = "
            "(-x2, x1). A minus in the wrong place turns it backwards.",
            "where q and k are rotated with the tables `cos, sin`: use your apply_rope (whose formula has the plus) "
            "and the sine as the tables give it.",
            "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
        ),
        "wrong": "q, k = apply_rope(q, cos, -sin), apply_rope(k, cos, -sin)",
    },
    "attn_i_over_d": {
        "levels": (
            "plane i turns at base^(-2i/d): the exponent counts the index 2i of the plane's first coordinate, so the "
            "slowest plane reaches nearly 1/base, not 1/sqrt(base).",
            "where the block builds `cos, sin` for its positions: your rope_cos_sin already uses the right "
            "frequencies, with the block's own base and head_dim.",
            "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
        ),
        "wrong": "cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base ** 0.5)",
    },
    "attn_rotates_v": {
        "levels": (
            "the position belongs in the scores q·k: only queries and keys are rotated; the values carry content and "
            "are averaged as they are.",
            "the line that rotates with the tables `cos, sin`, right after the heads are split: q and k go through "
            "apply_rope, v does not.",
            "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
        ),
        "wrong": "q, k, v = apply_rope(q, cos, sin), apply_rope(k, cos, sin), apply_rope(v, cos, sin)",
    },
    "attn_k_not_rotated": {
        "levels": (
            "a score depends only on the distance m - n when both sides turn: rotate the keys as well as the "
            "queries, at their own positions.",
            "the line that rotates q with the tables `cos, sin`: k goes through apply_rope too, before it joins "
            "the cache.",
            "key line: `q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)`",
        ),
        "wrong": "q = apply_rope(q, cos, sin)",
    },
    "attn_no_decode_offset": {
        "levels": (
            "with a cache the new tokens come after the cached ones: their positions continue from there instead "
            "of restarting at zero.",
            "the default positions, when `position_ids is None`: they start at past, the cached length (`past = "
            "kv_cache[0].shape[2]`), and run for the seq new tokens (`batch, seq, _ = x.shape`).",
            "key line: `position_ids = torch.arange(past, past + seq, device=x.device)`",
        ),
        "wrong": "position_ids = torch.arange(seq, device=x.device)",
    },
    "attn_top_left_causal": {
        "levels": (
            "after a cache, the queries of a chunk are the last seq of the k_len positions: the causal rule is "
            "aligned to the end of the keys, while is_causal=True aligns it to their start.",
            "the explicit boolean mask, used when neither `not causal or seq == 1` nor `seq == k_len` holds: query i "
            "may see keys j <= k_len - seq + i, a lower triangle shifted by k_len - seq.",
            "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)`",
        ),
        "wrong": "allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril()",
    },
    "attn_causal_flipped": {
        "levels": (
            "causal means a query sees its own key and the keys before it, never those after it: allowed pairs lie "
            "on and below the diagonal, a lower triangle.",
            "both causal paths of the block (the first branch, `not causal or seq == 1`, needs no mask): when "
            "`seq == k_len`, SDPA's own `is_causal=True` draws the right triangle; after a cache, the boolean mask "
            "is a lower triangle shifted by k_len - seq, never an upper one.",
            "key line: `out = F.scaled_dot_product_attention(q, k, v, is_causal=True)`",
        ),
        "wrong": "out = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(seq, k_len, dtype=torch.bool, "
                 "device=x.device).triu())",
    },
    "attn_float_mask": {
        "levels": (
            "SDPA reads a boolean mask as may-attend (True) or not, and adds a float mask to the scores: ones and "
            "zeros added to the scores hide nothing.",
            "the mask built when neither `not causal or seq == 1` nor `seq == k_len` holds: give the ones "
            "`dtype=torch.bool` before taking the triangle.",
            "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq)`",
        ),
        "wrong": "allowed = torch.ones(seq, k_len, dtype=q.dtype, device=x.device).tril(k_len - seq)",
    },
    "attn_inv_freq_cast_by_to": {
        "levels": (
            "a floating buffer follows module.to(dtype): in bfloat16 each frequency is rounded by up to 0.4%, so by "
            "position 1000 some angles are off by tenths of a radian, and casting back up does not restore them.",
            "where the block gets `cos, sin`: compute them in forward from the positions, with your rope_cos_sin "
            "(float32, on the positions' device), not from a stored frequency buffer.",
            "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
        ),
        "wrong": "freqs = position_ids[..., None].float() * rope_inv_freq(self.head_dim, self.base, "
                 "device=x.device).to(x.dtype).float()\n"
                 "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
    },
    "attn_angles_in_input_dtype": {
        "levels": (
            "angles p·theta need float32: bfloat16 counts integers exactly only up to 256, and its angles at large "
            "positions are off by whole radians. Compute in float32, cast only the finished tables.",
            "where the block gets `cos, sin`: from your rope_cos_sin, which works in float32; apply_rope casts them "
            "to x's dtype afterwards.",
            "key line: `cos, sin = rope_cos_sin(position_ids, self.head_dim, self.base)`",
        ),
        "wrong": "freqs = position_ids[..., None].to(x.dtype) * rope_inv_freq(self.head_dim, self.base, "
                 "device=x.device).to(x.dtype)\n"
                 "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
    },
    # ---- chapter 5 ------------------------------------------------------------------------------
    "linear_multiplies": {
        "levels": (
            "position interpolation squeezes positions m into m / s, so that a longer text fits the trained range: "
            "every pair turns s times slower, never faster.",
            "what you return when `rope_type == \"linear\"`: the default frequencies `inv_freq` divided by the "
            "factor, and the attention factor 1.0.",
            "key line: `return inv_freq / factor, 1.0`",
        ),
        "wrong": "return inv_freq * factor, 1.0",
    },
    "dynamic_no_exponent": {
        "levels": (
            "dynamic NTK stretches the base so that the slowest pair turns exactly alpha times slower; that pair's "
            "frequency is base^(-(d-2)/d), so the base itself must grow by alpha^(d/(d-2)).",
            "where the new base is computed when `rope_type == \"dynamic\"`: alpha = factor·length/train_len - "
            "(factor - 1) with `length` = max(seq_len, L0), raised to d / (d - 2) before it multiplies the base "
            "(`d = head_dim`).",
            "key line: `base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))`",
        ),
        "wrong": "base = base * ((factor * length / train_len) - (factor - 1))",
    },
    "dynamic_static": {
        "levels": (
            "dynamic scaling follows the input: up to L0 tokens the model runs as trained (alpha = 1), and alpha "
            "grows with the length beyond that. A fixed factor is the static NTK-aware base.",
            "where the new base is computed when `rope_type == \"dynamic\"`: alpha uses the current `length` "
            "(max(seq_len, L0)) and the training length `train_len`, not the factor alone (`d = head_dim`).",
            "key line: `base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))`",
        ),
        "wrong": "base = base * factor ** (d / (d - 2))",
    },
    "dynamic_no_clamp": {
        "levels": (
            "below the training length nothing needs stretching: a short input runs with the trained frequencies, "
            "so the length that sets alpha is never below L0.",
            "where `length` is chosen when `rope_type == \"dynamic\"`: L0 (`train_len`) without seq_len, and the "
            "larger of seq_len and L0 otherwise.",
            "key line: `length = train_len if seq_len is None else max(int(seq_len), train_len)`",
        ),
        "wrong": "length = train_len if seq_len is None else int(seq_len)",
    },
    "yarn_reversed": {
        "levels": (
            "the fast pairs turn many times within L0 and met every angle in training: they keep their frequency. "
            "The slow pairs, which turn less than once in L0, are interpolated, and the pairs between are blended.",
            "the blend when `rope_type == \"yarn\"`: `ramp` is 1 where a pair is interpolated, so it weights the "
            "divided frequencies `inv_freq / factor`, and 1 - ramp the kept ones.",
            "key line: `inv_freq = inv_freq / factor * ramp + inv_freq * (1 - ramp)`",
        ),
        "wrong": "inv_freq = inv_freq / factor * (1 - ramp) + inv_freq * ramp",
    },
    "yarn_no_attention_factor": {
        "levels": (
            "YaRN also scales the logits by a temperature, 1/t > 1 for a factor above 1; it does so by multiplying "
            "cos and sin, and so q and k, by its attention factor. Returning 1.0 drops that correction.",
            "what you return when `rope_type == \"yarn\"`: the blended frequencies and the computed "
            "`attention_factor` (0.1·ln(factor) + 1 unless params give one), as a float.",
            "key line: `return inv_freq, float(attention_factor)`",
        ),
        "wrong": "return inv_freq, 1.0",
    },
    "yarn_attention_squared": {
        "levels": (
            "the factor multiplies cos and sin, so it reaches both q and k: their product, the logit, is scaled by "
            "its square. The logit's scale 1/t is therefore the square of what you return.",
            "what you return when `rope_type == \"yarn\"`: `attention_factor` as computed, 0.1·ln(factor) + 1 (or "
            "what params give), not squared.",
            "key line: `return inv_freq, float(attention_factor)`",
        ),
        "wrong": "return inv_freq, float(attention_factor) ** 2",
    },
    "llama3_swapped": {
        "levels": (
            "Llama 3 keeps the short wavelengths (below L0 / high_freq_factor), divides the long ones (above L0 / "
            "low_freq_factor) by the factor, and blends in between: the low factor bounds the long wavelengths.",
            "the final choice between the three cases, from `wavelength`, `train_len` and `low`, `high` (the "
            "low_freq_factor and high_freq_factor): divided when wavelength > train_len / low, kept when wavelength "
            "< train_len / high, `blended` between.",
            "key line: `inv_freq = torch.where(wavelength > train_len / low, inv_freq / factor, torch.where(wavelength "
            "< train_len / high, inv_freq, blended))`",
        ),
        "wrong": "inv_freq = torch.where(wavelength > train_len / high, inv_freq / factor, torch.where(wavelength "
                 "< train_len / low, inv_freq, blended))",
    },
    "ramp_not_truncated": {
        "levels": (
            "YaRN's code rounds the ramp's ends outwards to whole pair indices by default: the ramp then starts and "
            "ends on a pair.",
            "right after `low, high = corr(beta_fast), corr(beta_slow)`, when `truncate` is set: round low down "
            "and high up with the math module.",
            "key line: `low, high = math.floor(low), math.ceil(high)`",
        ),
        "wrong": "low, high = low, high",
    },
    "ramp_clamp_half": {
        "levels": (
            "the ramp's ends are clamped as YaRN's code and transformers clamp them, to [0, head_dim - 1]; the upper "
            "end may lie past the last pair, which flattens the slope of the ramp.",
            "where `low` and `high` are clamped (`d = head_dim`): the upper bound is d - 1, not d // 2 - 1.",
            "key line: `low, high = max(low, 0), min(high, d - 1)`",
        ),
        "wrong": "low, high = max(low, 0), min(high, d // 2 - 1)",
    },
    # ---- chapter 6 ------------------------------------------------------------------------------
    "cache_interleaved": {
        "levels": (
            "apply_rope pairs coordinate i with coordinate i + d/2, so both must carry the same angle: the tables "
            "hold the d/2 angles once for each half, end to end, not each angle twice side by side.",
            "in _build, where the angles `freqs` (length, d/2) become the (length, d) tables: join two copies of "
            "`freqs` on the last axis; `repeat_interleave` builds the interleaved layout instead.",
            "key line: `emb = torch.cat((freqs, freqs), dim=-1)`",
        ),
        "wrong": "emb = freqs.repeat_interleave(2, dim=-1)",
    },
    "cache_not_grown": {
        "levels": (
            "a position past the table has no row: clamped to the last row, it gets that row's angles, wrong and "
            "without an error. The table must grow to cover it first.",
            "in forward, when `position_ids.numel() > 0` and the largest position needs `needed = "
            "int(position_ids.max()) + 1` rows: if `needed > self.max_len`, rebuild with _build on the buffers' "
            "device, at least doubling.",
            "key line: `self._build(max(needed, 2 * self.max_len), device=self.cos_cached.device)`",
        ),
        "wrong": "position_ids = position_ids.clamp(max=self.max_len - 1)",
    },
    "cache_low_precision_angles": {
        "levels": (
            "angles p·theta need float32: bfloat16 cannot hold every position above 256, and by position 1000 its "
            "angles are off by radians (float16's by tenths of a radian). Compute the angles in float32, cast only "
            "the finished rows.",
            "in forward, after any growth: look the rows up in the float32 tables `self.cos_cached` and "
            "`self.sin_cached` by position, then cast them to `dtype` (float32 by default), instead of computing "
            "angles in that dtype.",
            "key line: `cos = self.cos_cached[position_ids].to(dtype); sin = self.sin_cached[position_ids].to(dtype)`",
        ),
        "wrong": "freqs = position_ids[..., None].to(dtype) * (1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, "
                 "dtype=torch.float32, device=position_ids.device) / self.head_dim))).to(dtype)\n"
                 "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
    },
    # ---- chapter 7 ------------------------------------------------------------------------------
    "scheme_rotates_v": {
        "levels": (
            "the position belongs in the scores, q·k: only queries and keys are rotated; the values carry content "
            "and are averaged as they are.",
            "the line that hands q and k to `self.scheme.rotate`, right after the heads are split: v is not among "
            "them.",
            "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
        ),
        "wrong": "q, k, v = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids), "
                 "self.scheme.rotate(v, position_ids)",
    },
    "scheme_k_not_rotated": {
        "levels": (
            "a rotation encodes position in q·k only when both sides turn: rotate the keys as well as the queries.",
            "the line that hands q to `self.scheme.rotate`: k goes through it too, at the same positions.",
            "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
        ),
        "wrong": "q = self.scheme.rotate(q, position_ids)",
    },
    "scheme_no_decode_offset": {
        "levels": (
            "with a cache the new tokens come after the cached ones: their positions continue from there.",
            "the default positions, when `position_ids is None`: they start at past, the cached length (`past = "
            "kv_cache[0].shape[2]`), and run for seq tokens.",
            "key line: `position_ids = torch.arange(past, past + seq, device=x.device)`",
        ),
        "wrong": "position_ids = torch.arange(seq, device=x.device)",
    },
    "scheme_causal_flipped": {
        "levels": (
            "causal means a query sees its own key and the keys before it, never the keys after it.",
            "the boolean mask where the block builds a mask (not when `bias is None and (not causal or seq == "
            "k_len)`, SDPA's own causal path): True on and below the diagonal, a lower triangle shifted by k_len - "
            "seq.",
            "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq) if "
            "causal else None`",
        ),
        "wrong": "allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).triu(k_len - seq) if causal "
                 "else None",
    },
    "scheme_top_left_causal": {
        "levels": (
            "with a cache, the queries of a chunk are the last seq of k_len positions: the causal rule is aligned to "
            "the end of the keys.",
            "the boolean mask where the block builds a mask (not when `bias is None and (not causal or seq == "
            "k_len)`, SDPA's own causal path): query i may see keys j <= k_len - seq + i, so the triangle is shifted "
            "by k_len - seq.",
            "key line: `allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(k_len - seq) if "
            "causal else None`",
        ),
        "wrong": "allowed = torch.ones(seq, k_len, dtype=torch.bool, device=x.device).tril(0) if causal else None",
    },
    "scheme_no_causal_with_bias": {
        "levels": (
            "a bias only prefers some keys; it hides none: the causal rule must still remove the future keys.",
            "the mask where the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, "
            "SDPA's own causal path): when `bias is None` the boolean `allowed` is the mask; otherwise fold "
            "`allowed` into the bias as -inf.",
            "key line: `mask = bias if allowed is None else bias.masked_fill(~allowed, float(\"-inf\"))`",
        ),
        "wrong": "mask = bias",
    },
    "scheme_bias_ignored": {
        "levels": (
            "a relative scheme speaks only through its bias: it must reach the scores as SDPA's float mask.",
            "the mask where the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, "
            "SDPA's own causal path): when `bias is None` the boolean `allowed` is enough; otherwise the mask is the "
            "bias with `allowed` folded in as -inf.",
            "key line: `mask = bias if allowed is None else bias.masked_fill(~allowed, float(\"-inf\"))`",
        ),
        "wrong": "mask = allowed",
    },
    "scheme_bias_negated": {
        "levels": (
            "the bias is added to the logits as the scheme returns it: its sign is the scheme's business (ALiBi's is "
            "already negative).",
            "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
            "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it, do not change "
            "its sign.",
            "key line: `bias = bias.to(q.dtype)`",
        ),
        "wrong": "bias = -bias.to(q.dtype)",
    },
    "scheme_bias_before_scale": {
        "levels": (
            "logits = q·k / sqrt(d) + bias: the scaling applies to q·k only; SDPA scales the scores, then adds the "
            "float mask.",
            "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
            "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it, nothing more.",
            "key line: `bias = bias.to(q.dtype)`",
        ),
        "wrong": "bias = bias.to(q.dtype) / math.sqrt(self.head_dim)",
    },
    "scheme_bias_not_cast": {
        "levels": (
            "a model in bfloat16 computes in bfloat16: the bias, made in float32 by the scheme, joins the scores in "
            "q's dtype.",
            "where the bias is prepared for SDPA, where the block builds a mask (not when `bias is None and (not "
            "causal or seq == k_len)`, SDPA's own causal path) and `bias is None` is false: cast it to q's dtype.",
            "key line: `bias = bias.to(q.dtype)`",
        ),
        "wrong": "bias = bias",
    },
    "scheme_scale_by_d": {
        "levels": (
            "q·k has variance d_head: dividing by its square root brings it to one, and SDPA does exactly that by "
            "default.",
            "the SDPA calls: leave its scale alone (the default is 1/sqrt(d_head)); the call with the mask, where "
            "the block builds a mask (not when `bias is None and (not causal or seq == k_len)`, SDPA's own causal "
            "path), too.",
            "key line: `out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)`",
        ),
        "wrong": "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1 / self.head_dim)",
    },
    "scheme_merge_no_transpose": {
        "levels": (
            "the heads were split as (B, L, H, d_head) then moved forward: merging reverses both steps, in the "
            "opposite order.",
            "the merge after SDPA: out (B, H, L, d_head) goes back to (B, L, H, d_head) before the reshape to "
            "(batch, seq, d_model).",
            "key line: `out = out.transpose(1, 2).reshape(batch, seq, self.d_model)`",
        ),
        "wrong": "out = out.reshape(batch, seq, self.d_model)",
    },
    "scheme_split_wrong_order": {
        "levels": (
            "the features of one token are contiguous: a token's d_model values split into H heads of d_head, and "
            "only then do the heads move forward.",
            "the helper that splits the heads: view (batch, seq, H, d_head), then swap the seq and head axes.",
            "key line: `return t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)`",
        ),
        "wrong": "return t.view(batch, self.num_heads, seq, self.head_dim)",
    },
    "decoder_no_final_norm": {
        "levels": (
            "pre-norm blocks leave the residual stream unnormalised: one last LayerNorm comes before the head.",
            "the logits: the final norm, then the tied head; return them with the list of new caches, `caches`.",
            "key line: `return self.norm(h) @ self.embed_tokens.weight.T, caches`",
        ),
        "wrong": "return h @ self.embed_tokens.weight.T, caches",
    },
    "decoder_no_embed_scale": {
        "levels": (
            "the token table starts at N(0, 1/d): scaled by sqrt(d) its vectors have entries of order one, like the "
            "position tables added to them.",
            "where the token vectors are looked up: multiply them by the square root of the embedding size before "
            "scheme.embed.",
            "key line: `h = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)`",
        ),
        "wrong": "h = self.embed_tokens(tokens)",
    },
    "decoder_one_based_positions": {
        "levels": (
            "positions count from zero: the first token of a sequence sits at position 0, the new tokens after a "
            "cache at past, past + 1, ...",
            "the positions: from past, the cached length, for seq tokens.",
            "key line: `position_ids = torch.arange(past, past + seq, device=tokens.device)`",
        ),
        "wrong": "position_ids = torch.arange(past + 1, past + seq + 1, device=tokens.device)",
    },
    "decoder_no_decode_offset": {
        "levels": (
            "with caches the new tokens come after the cached ones: the cached length is where their positions "
            "start.",
            "the cached length, past: the keys in the first layer's cache, `kv_caches[0][0].shape[2]`, or 0 without "
            "caches.",
            "key line: `past = 0 if kv_caches is None else kv_caches[0][0].shape[2]`",
        ),
        "wrong": "past = 0",
    },
    "decoder_ignores_causal": {
        "levels": (
            "causal is the model's choice, made once at construction: every attention block must receive it.",
            "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
            "`cache`): pass the stored flag on.",
            "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])`",
        ),
        "wrong": "h, cache = layer(h, position_ids, True, None if kv_caches is None else kv_caches[n])",
    },
    "scheme_bias_swapped": {
        "levels": (
            "a bias has one row per query and one column per key: asked about the keys first, it answers the "
            "transposed question, which looks right only while there are as many keys as queries.",
            "the call to `self.scheme.bias`: the query positions, `position_ids`, come first, then the key "
            "positions, `k_positions` (cached keys, then the new ones).",
            "key line: `bias = self.scheme.bias(position_ids, k_positions)`",
        ),
        "wrong": "bias = self.scheme.bias(k_positions, position_ids)",
    },
    "scheme_bias_after_softmax": {
        "levels": (
            "a bias shifts the logits, before the softmax turns them into weights; added to the weights, it breaks "
            "their sum of one and no longer acts as a preference between keys.",
            "the SDPA call where the block builds a mask (not when `bias is None and (not causal or seq == "
            "k_len)`, SDPA's own causal path): the bias travels inside the float `mask`, which SDPA adds to the "
            "scaled scores before its softmax; nothing is added to the output afterwards.",
            "key line: `out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)`",
        ),
        "wrong": "out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed) + (0 if bias is None else (bias "
                 "if allowed is None else bias.masked_fill(~allowed, 0.0)) @ v)",
    },
    "scheme_embeds_inside": {
        "levels": (
            "an absolute table is added once, to the token vectors at the bottom of the model; the attention block "
            "only projects what it receives, or the table would be added again in every layer.",
            "the projections, right after the helper `heads` is defined: they read x as it arrives, and the block "
            "calls `self.scheme.rotate` and `self.scheme.bias` only, never the scheme's embed.",
            "key line: `q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))`",
        ),
        "wrong": "x = self.scheme.embed(x, position_ids); q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), "
                 "heads(self.v_proj(x))",
    },
    "scheme_cache_rotated_again": {
        "levels": (
            "a key is rotated once, by its own position, when it is new; the cached keys were rotated in an "
            "earlier call, and rotating them again adds their angle a second time.",
            "after the new keys join the cache: the key positions, `k_positions` (the `past` cached ones, then the "
            "new ones), are only computed there for the bias; the keys themselves are not rotated again.",
            "key line: `k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))`",
        ),
        "wrong": "k_positions = torch.cat((torch.arange(past, device=x.device), position_ids)); "
                 "k = self.scheme.rotate(k, k_positions)",
    },
    "scheme_cache_unrotated": {
        "levels": (
            "a key's rotation depends only on its own position, so it is done once, when the key is new: the cache "
            "stores keys already rotated and never redoes the work.",
            "the line that hands q to `self.scheme.rotate`, right after the heads are split: k goes through it there "
            "too, before it is appended to the cache, and the cache returned is those rotated keys.",
            "key line: `q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)`",
        ),
        "wrong": "q = self.scheme.rotate(q, position_ids)",
        "also": {
            "k_positions = torch.cat((torch.arange(past, device=x.device), position_ids))":
                "k_positions = torch.cat((torch.arange(past, device=x.device), position_ids)); "
                "cached, k = k, self.scheme.rotate(k, k_positions)",
            "return self.o_proj(out), (k, v)": "return self.o_proj(out), (cached, v)",
        },
    },
    "decoder_embed_every_layer": {
        "levels": (
            "an absolute table enters the model once, at the input; the residual stream then carries it through "
            "every layer, so adding it again counts it twice.",
            "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
            "`cache`): h goes to each layer as the previous one left it, with nothing added.",
            "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])`",
        ),
        "wrong": "h, cache = layer(h if n == 0 else self.scheme.embed(h, position_ids), position_ids, self.causal, "
                 "None if kv_caches is None else kv_caches[n])",
    },
    "decoder_embed_after_first_layer": {
        "levels": (
            "the positions must reach the first layer's attention: the table is added to the token vectors before "
            "any block runs, not after one.",
            "between the scaled token vectors h and the loop over the blocks: hand h and `position_ids` to the "
            "scheme's embed there, once.",
            "key line: `h = self.scheme.embed(h, position_ids)`",
        ),
        "wrong": "h = h",
        "also": {
            "h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])":
                "h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n]); "
                "h = self.scheme.embed(h, position_ids) if n == 0 else h",
        },
    },
    "decoder_embed_scale_after_table": {
        "levels": (
            "sqrt(d_model) rescales the token table, which starts small; the position table has its own scale, so "
            "it is added after the scaling, untouched.",
            "where the token vectors are looked up: multiply them by the square root of the embedding size there, "
            "before they meet scheme.embed, and nothing after it.",
            "key line: `h = self.embed_tokens(tokens) * math.sqrt(self.embed_tokens.embedding_dim)`",
        ),
        "wrong": "h = self.embed_tokens(tokens)",
        "also": {
            "h = self.scheme.embed(h, position_ids)":
                "h = self.scheme.embed(h, position_ids) * math.sqrt(self.embed_tokens.embedding_dim)",
        },
    },
    "decoder_post_norm": {
        "levels": (
            "the given DecoderBlock is pre-norm: each sublayer reads a normalised copy of h and adds its result to "
            "h itself. The decoder uses the block as it is and does not rebuild it.",
            "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
            "`cache`): call the block itself, not its attention, norms and MLP one by one.",
            "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])`",
        ),
        "wrong": "attended, cache = layer.attn(h, position_ids, self.causal, None if kv_caches is None else "
                 "kv_caches[n]); h = layer.attn_norm(h + attended); h = layer.mlp_norm(h + layer.mlp(h))",
    },
    "decoder_no_attention_residual": {
        "levels": (
            "every sublayer adds to the residual stream: the attention's output is added to h, it does not replace "
            "it. The given DecoderBlock does exactly that.",
            "the loop over the blocks (each `layer`, number `n`, called with h and `position_ids`, returning its "
            "`cache`): call the block itself, not its attention and MLP one by one.",
            "key line: `h, cache = layer(h, position_ids, self.causal, None if kv_caches is None else kv_caches[n])`",
        ),
        "wrong": "attended, cache = layer.attn(layer.attn_norm(h), position_ids, self.causal, None if kv_caches is "
                 "None else kv_caches[n]); h = attended + layer.mlp(layer.mlp_norm(attended))",
    },
    # ---- chapter 8 ------------------------------------------------------------------------------
    "resize2d_class_token_with_grid": {
        "levels": (
            "the class token is not a place on the image: it has no neighbours to blend with. Only the patch rows "
            "form a grid to resize; the prefix rows come back unchanged.",
            "the end of the function: the prefix rows, `prefix`, set aside at the start, go back in front of the "
            "resized patch rows, `resized`, as they were.",
            "key line: `return torch.cat([prefix, resized.to(table.dtype)], dim=0)`",
        ),
        "wrong": "return F.interpolate(table.T[None].float(), size=num_prefix_tokens + new_h * new_w, mode=\"linear\", "
                 "align_corners=False)[0].T.to(table.dtype)",
    },
    "resize2d_column_major": {
        "levels": (
            "the table is row-major: patch (r, c) is row r·W + c, so after resizing, the grid is read back row by "
            "row, the channels last.",
            "where the resized `image` (1, d, H', W') becomes rows again: move the channels last, keeping the "
            "height before the width, (H', W', d), then reshape to (H'·W', d), with `new_h, new_w` the new grid.",
            "key line: `resized = image[0].permute(1, 2, 0).reshape(new_h * new_w, d)`",
        ),
        "wrong": "resized = image[0].permute(2, 1, 0).reshape(new_h * new_w, d)",
    },
    "resize2d_align_corners": {
        "levels": (
            "timm and Hugging Face treat each patch as a cell whose centre is sampled: the corners of the old and "
            "new grids are not pinned to each other.",
            "the `F.interpolate` call on the (1, d, H, W) `image`, resized to the new grid `new_h, new_w`: its "
            "align_corners argument.",
            "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
            "antialias=antialias)`",
        ),
        "wrong": "image = F.interpolate(image, size=(new_h, new_w), mode=mode,"
                 " align_corners=True, antialias=antialias)",
    },
    "resize2d_size_w_h": {
        "levels": (
            "an image tensor is (batch, channels, height, width): every size given to it is height first, then "
            "width.",
            "the `F.interpolate` call on the (1, d, H, W) `image`: the order of the two numbers of the new grid, "
            "`new_h, new_w`, in its size.",
            "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
            "antialias=antialias)`",
        ),
        "wrong": "image = F.interpolate(image, size=(new_w, new_h), mode=mode,"
                 " align_corners=False, antialias=antialias)",
    },
    "resize2d_no_antialias": {
        "levels": (
            "the caller chooses the filter: with antialias on, as timm resizes, the bicubic kernel changes and widens "
            "when the grid shrinks; the function passes the caller's choice on.",
            "the `F.interpolate` call that resizes the (1, d, H, W) `image` to the new grid, `new_h, new_w`: it "
            "receives the `antialias` argument as given.",
            "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
            "antialias=antialias)`",
        ),
        "wrong": "image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, antialias=False)",
    },
    "sincos2d_columns_first": {
        "levels": (
            "two layouts exist: MAE's code puts the column blocks first, transformers' builder the row blocks; this "
            "exercise follows transformers, rows first.",
            "where the four blocks are concatenated: the sine and cosine of `row_angles` come before those of "
            "`col_angles`.",
            "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], "
            "dim=-1)`",
        ),
        "wrong": "table = torch.cat([col_angles.sin(), col_angles.cos(), row_angles.sin(), row_angles.cos()], dim=-1)",
    },
    "sincos2d_interleaved": {
        "levels": (
            "this table is not chapter 1's interleaved layout: each quarter of the vector is one block, all its "
            "sines, or all its cosines.",
            "where the blocks are concatenated: four whole blocks, the sines of `row_angles`, their cosines, then "
            "the same for `col_angles`, with no stacking of sine and cosine pairs.",
            "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], "
            "dim=-1)`",
        ),
        "wrong": "table = torch.cat([torch.stack((a.sin(), a.cos()), dim=-1).flatten(-2) for a in (row_angles, "
                 "col_angles)], dim=-1)",
    },
    "sincos2d_column_major": {
        "levels": (
            "the patches are numbered row by row: a whole row of W patches, then the next row, so the row of a "
            "patch changes every W patches.",
            "the row and column of each patch number, `patch`: the row is the quotient by grid_w, the column the "
            "remainder.",
            "key line: `rows, cols = (patch // grid_w).double(), (patch % grid_w).double()`",
        ),
        "wrong": "rows, cols = (patch % grid_h).double(), (patch // grid_h).double()",
    },
    "axial_ladder_over_full_head": {
        "levels": (
            "each axis gets half the head, so the ladder of frequencies is built over d/2 dimensions: d/4 "
            "frequencies that fall from 1 to about 1/base, shared by rows and columns.",
            "the frequencies `theta`: exponents 0, 2, 4, ... below `half = head_dim // 2`, divided by half, not by "
            "head_dim.",
            "key line: `theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, "
            "device=position_ids.device) / half)`",
        ),
        "wrong": "theta = (1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                 "device=position_ids.device) / head_dim))[: head_dim // 4]",
    },
    "axial_rows_then_columns": {
        "levels": (
            "in the half layout coordinate j turns together with coordinate j + d/2: both halves of the table must "
            "hold the same d/2 angles, rows then columns in each.",
            "the tables: the d/2 `angles` ([rθ | cθ]) repeated end to end, once per half.",
            "key line: `emb = torch.cat((angles, angles), dim=-1)`",
        ),
        "wrong": "emb = torch.cat((angles[:, : head_dim // 4], angles[:, : head_dim // 4], angles[:, head_dim // 4:], "
                 "angles[:, head_dim // 4:]), dim=-1)",
    },
    "axial_columns_first": {
        "levels": (
            "either order would be a valid 2-D rotation, but Qwen2-VL's weights were trained with the row angles "
            "first, then the column angles.",
            "where the (N, 2, d/4) `angles` (rows, then columns, as position_ids holds them) become (N, d/2): keep "
            "that order when you flatten.",
            "key line: `angles = angles.flatten(-2)`",
        ),
        "wrong": "angles = angles.flip(-2).flatten(-2)",
    },
    "axial_interleaved_tables": {
        "levels": (
            "Qwen2-VL rotates in the half layout, as chapter 4's rotate_half: coordinate j pairs with j + d/2, not "
            "with its neighbour.",
            "the tables: the d/2 `angles` repeated end to end, not each angle twice in a row.",
            "key line: `emb = torch.cat((angles, angles), dim=-1)`",
        ),
        "wrong": "emb = angles.repeat_interleave(2, dim=-1)",
    },
    "mrope_text_counts_tokens": {
        "levels": (
            "an image occupies as much of the position axis as its widest side, not as many places as it has "
            "tokens: the text after it moves on by the extent of the image in its own ids.",
            "in the vision branch (not when `kinds[i] == 0`, a text run): after a run of `h` x `w` merged tokens, "
            "where the counter `start` moves on.",
            "key line: `start += max(h, w)`",
        ),
        "wrong": "start += j - i",
    },
    "mrope_text_after_largest_id": {
        "levels": (
            "transformers moves the text on by the image's spatial extent, for videos too: the number of frames "
            "does not count.",
            "in the vision branch (not when `kinds[i] == 0`, a text run): after a run of `h` x `w` merged tokens "
            "over `t` frames, where the counter `start` moves on: only h and w decide.",
            "key line: `start += max(h, w)`",
        ),
        "wrong": "start += max(t, h, w)",
    },
    "mrope_padding_counted": {
        "levels": (
            "padding is not part of the sequence: the ids count the real tokens only, and the padded places keep 0.",
            "for each row `b`, when `attention_mask is not None`: the tokens to walk, `keep`, are those where that "
            "row's mask is 1.",
            "key line: `keep = attention_mask[b].bool()`",
        ),
        "wrong": "keep = torch.ones(length, dtype=torch.bool, device=token_types.device)",
    },
    "mrope_height_width_swapped": {
        "levels": (
            "the three ids are time, height, width, in that order: a token's height id follows its row in the grid, "
            "its width id its column.",
            "in the vision branch (not when `kinds[i] == 0`, a text run), where the run's ids are stacked from the "
            "meshgrid `tt`, `hh`, `ww`, offset by `start` and appended to the row's `pieces`: keep the order time, "
            "height, width.",
            "key line: `pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + start)`",
        ),
        "wrong": "pieces.append(torch.stack([tt, ww, hh]).reshape(3, -1) + start)",
    },
    "mrope_sections_reversed": {
        "levels": (
            "the first block of frequencies turns by the time id, the second by the height id, the third by the "
            "width id: block k takes id k.",
            "where the chosen angles are gathered from the `blocks` of the split: block k reads the angles of id k.",
            "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
        ),
        "wrong": "chosen = torch.cat([block[2 - k] for k, block in enumerate(blocks)], dim=-1)",
    },
    "mrope_sections_over_full_head": {
        "levels": (
            "mrope_section cuts the d/2 frequencies, not the d coordinates: choose the ids first, on the d/2 "
            "angles, and only then repeat them for the half layout.",
            "the tables: the d/2 `chosen` angles, already cut by section, repeated end to end.",
            "key line: `emb = torch.cat((chosen, chosen), dim=-1)`",
        ),
        "wrong": "emb = torch.cat([blk[k] for k, blk in enumerate(torch.cat((angles, angles), dim=-1).split([2 * s "
                 "for s in mrope_section], dim=-1))], dim=-1)",
    },
    "mrope_time_id_only": {
        "levels": (
            "M-RoPE gives each block of frequencies its own id: with the time id everywhere it is 1-D RoPE, and "
            "the image loses its rows and columns.",
            "where the chosen angles are gathered from the `blocks` of the split: block k reads the angles of id k "
            "(time, height, width).",
            "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
        ),
        "wrong": "chosen = angles[0]",
    },
    # ---- chapters 3 to 5 -------------------------------------------------------------------------
    "inv_freq_i_over_d": {
        "levels": (
            "plane i uses the exponent 2i/d, with 2i the index of its first coordinate, so the slowest plane turns "
            "at nearly 1/base, not 1/sqrt(base).",
            "the exponents: the even indices 0, 2, 4, ... up to head_dim, divided by head_dim.",
            "key line: `exponents = torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim`",
        ),
        "wrong": "exponents = torch.arange(0, head_dim // 2, dtype=torch.float32, device=device) / head_dim",
    },
    "inv_freq_not_inverted": {
        "levels": (
            "the frequencies fall from 1 to about 1/base: theta_i is the inverse of base^(2i/d).",
            "what you return from the `exponents`: one over base to that power.",
            "key line: `return 1.0 / (base ** exponents)`",
        ),
        "wrong": "return base ** exponents",
    },
    "rotate_half_sign": {
        "levels": (
            "rotate_half turns each plane (x1, x2) by +90 degrees: the pair becomes (-x2, x1), the minus on the half "
            "that moves to the front.",
            "the concatenation of the two halves x1 and x2: which half comes first, and which carries the minus.",
            "key line: `return torch.cat((-x2, x1), dim=-1)`",
        ),
        "wrong": "return torch.cat((x2, -x1), dim=-1)",
    },
    "rotate_half_no_minus": {
        "levels": (
            "a quarter turn of the plane (x1, x2) is (-x2, x1): without the minus the map swaps the halves, which is "
            "a reflection, not a rotation.",
            "the concatenation of the two halves x1 and x2: the second half, moved to the front, is negated.",
            "key line: `return torch.cat((-x2, x1), dim=-1)`",
        ),
        "wrong": "return torch.cat((x2, x1), dim=-1)",
    },
    "rel_sign_flipped": {
        "levels": (
            "the relative position is the key's position minus the query's: positive for keys after the query.",
            "the subtraction at the end: the key positions, `key_pos`, as a row vector, minus the query "
            "positions, `query_pos`, as a column vector.",
            "key line: `return key_pos[None, :] - query_pos[:, None]`",
        ),
        "wrong": "return query_pos[:, None] - key_pos[None, :]",
    },
    "rel_start_aligned": {
        "levels": (
            "with fewer queries than keys the queries are the newest tokens: they sit at the end of the keys, not at "
            "their start.",
            "the query positions, `query_pos`: the last q_len of the k_len positions.",
            "key line: `query_pos = torch.arange(k_len - q_len, k_len, device=device)`",
        ),
        "wrong": "query_pos = torch.arange(q_len, device=device)",
    },
    "ramp_reversed": {
        "levels": (
            "the fast pairs, many turns within L0, keep their frequency (ramp 0); the slow pairs are interpolated "
            "(ramp 1).",
            "the ramp over the pairs j: it rises from low to high, 0 below low and 1 above high.",
            "key line: `return ((j - low) / (high - low)).clamp(0, 1)`",
        ),
        "wrong": "return 1 - ((j - low) / (high - low)).clamp(0, 1)",
    },
}
