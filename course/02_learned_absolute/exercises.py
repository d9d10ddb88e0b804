"""Chapter 2 checks: LearnablePositionalEncoding and resize_position_table."""

from grader.exercise import Exercise, declared
from grader.spec import MAIN, RESEEDED, SEED, Check, Mistake, draw_int, find, same, unseen_like


def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


def drawn(*shape):
    return {"t": "randn", "shape": list(shape), "seed": SEED}


# ---- LearnablePositionalEncoding -----------------------------------------------------------------
MODULE = "LearnablePositionalEncoding"

IDS_MISTAKES = ("learned_ignores_position_ids",)
BOUNDS_HINT = ("without a check, nn.Embedding raises IndexError ('index out of range in self') past its last row "
               "(on a GPU, a device-side assert): compare seq_len with max_len before the lookup and raise "
               "ValueError naming both values")


def forward(ctor, x, seed=0, **fkw):
    """Build the module with ctor = (args, kwargs), fill its parameters from `seed`, run forward(x, **fkw)."""
    return {"ctor_args": ctor[0], "ctor_kwargs": ctor[1], "forward_args": [x], "forward_kwargs": fkw,
            "seed_params": seed}


LEARNABLE_POSITIONAL_ENCODING_CHECKS = [
    Check(MODULE, "x + E[0 .. seq-1] for a batch (2, 10, 16)", "module_forward",
          forward(([16, 32], {}), randn(2, 10, 16)), points=2, public=True,
          hint="add self.position_embeddings(torch.arange(seq_len, device=x.device)) to x",
          id="x_e_0_seq_1_batch_2_10_16"),
    Check(MODULE, "position_ids of shape (seq,), shared by the batch", "module_forward",
          forward(([16, 32], {}), randn(2, 6, 16, seed=1), seed=1,
                  position_ids={"t": "arange", "start": 20, "end": 26}),
          public=True, mistakes=IDS_MISTAKES, id="position_ids_shape_seq_shared_batch"),
    Check(MODULE, "position_ids of shape (batch, seq), one row per sequence", "module_forward",
          forward(([16, 32], {}), randn(2, 6, 16, seed=2), seed=2,
                  position_ids={"t": "randint", "low": 0, "high": 32, "shape": [2, 6], "seed": 3}),
          points=2, public=True, mistakes=IDS_MISTAKES,
          hint="nn.Embedding maps (batch, seq) ids to (batch, seq, d), which adds to x directly",
          id="position_ids_shape_batch_seq_one_row_per"),
    Check(MODULE, "position_embeddings is a trainable nn.Embedding(max_len, d_model)", "module_info",
          {"ctor_args": [16, 48], "attr": "position_embeddings"}, expect="fields",
          # (attr_shape is left out: `fields` reads a two-number list as a range; the forward checks
          # fail for a transposed table anyway)
          fields={"attr_type": "Embedding", "attr_requires_grad": True, "n_trainable": 48 * 16,
                  "n_params": 48 * 16},
          public=True, hint="self.position_embeddings = nn.Embedding(max_len, d_model), and no other parameters",
          id="position_embeddings_trainable_nn"),
    Check(MODULE, "initialised at scale 0.02 (std of a 2048 x 64 table in [0.017, 0.021], mean near 0)",
          "module_info", {"ctor_args": [64, 2048], "attr": "position_embeddings"}, expect="fields",
          fields={"attr_std": [0.017, 0.021], "attr_mean": [-0.001, 0.001]}, public=True,
          hint="nn.Embedding starts from N(0, 1); re-initialise its weight with "
               "nn.init.trunc_normal_(self.position_embeddings.weight, std=0.02)",
          id="initialised_scale_0_02_std_2048_x_64"),
    Check(MODULE, "seq_len past max_len raises ValueError naming both", "raises",
          {"ctor_args": [16], "ctor_kwargs": {"max_len": 8}, "forward_args": [randn(1, 11, 16)]},
          expect="raises", mentions=("max_len", "11"), public=True, hint=BOUNDS_HINT,
          id="seq_len_past_max_len_raises_valueerror"),
    # values read on meta count as 0, so `if position_ids.max() >= max_len: raise` does not fail this check
    Check(MODULE, "runs on the device of its input (checked on the meta device)", "meta_forward",
          {"ctor_args": [16, 32], "forward_args": [randn(2, 10, 16)]}, expect="ok", public=True,
          hint="build the default positions with torch.arange(seq_len, device=x.device); positions built "
               "on the CPU fail as soon as the model is on a GPU", id="runs_device_input_checked_meta_device"),
    Check(MODULE, "a sequence exactly max_len long", "module_forward",
          forward(([16], {"max_len": 8}), randn(1, 8, 16, seed=4), seed=4),
          hint="positions 0 .. max_len-1 all exist: refuse only seq_len > max_len",
          public=True, id="sequence_exactly_max_len_long"),
    Check(MODULE, "position_ids past the table raise ValueError", "raises",
          {"ctor_args": [16], "ctor_kwargs": {"max_len": 8}, "forward_args": [randn(1, 4, 16)],
           "forward_kwargs": {"position_ids": {"t": "arange", "start": 5, "end": 9}}},
          expect="raises", mentions=("position", "max_len"),
          hint="given position_ids must lie in [0, max_len): check their smallest and largest values and "
               "raise ValueError naming max_len (nn.Embedding alone raises IndexError)",
          public=True, id="position_ids_past_table_raise_valueerror"),
    Check(MODULE, "the table follows .to(torch.float64) and the output keeps float64", "module_forward",
          {**forward(([16, 32], {}), randn(2, 5, 16, seed=5), seed=5), "dtype": "float64"},
          hint="nn.Embedding's weight is cast by .to(dtype); add the looked-up rows in x's dtype",
          public=True, id="table_follows_torch_float64_output"),
    Check(MODULE, "a float16 input gives a float16 output", "module_forward",
          {**forward(([16, 32], {}), randn(2, 5, 16, seed=6), seed=6), "input_dtype": "float16"},
          hint="cast the looked-up rows to x.dtype before adding, so the output keeps the input's dtype",
          public=True, id="float16_input_float16_output"),
    Check(MODULE, "the table follows .to(torch.bfloat16) (the CUDA check's dtype, on the CPU)", "module_forward",
          {**forward(([32, 128], {}), randn(2, 100, 32)), "dtype": "bfloat16"},
          hint="nn.Embedding's weight is cast by .to(dtype); add the looked-up rows in x's dtype",
          public=True, id="bfloat16_module_cpu"),
    Check(MODULE, "an input of the wrong width raises ValueError", "raises",
          {"ctor_args": [16, 32], "forward_args": [randn(1, 4, 12)]}, expect="raises", mentions=("d_model",),
          public=True, id="input_wrong_width_raises_valueerror"),
    Check(MODULE, "max_len=0 raises ValueError naming it", "raises", {"ctor_args": [16, 0]},
          expect="raises", mentions=("max_len",), public=True, id="max_len_0_raises_valueerror_naming"),
    *[
        Check(MODULE, f"on CUDA in {dtype}", "module_forward",
              {**forward(([32, 128], {}), randn(2, 100, 32)), "device": "cuda", "dtype": dtype},
              cuda=True, hint="build the default positions with device=x.device",
              id=f"cuda_{dtype}")
        for dtype in ("float32", "float16", "bfloat16")
    ],
]

LEARNABLE_POSITIONAL_ENCODING = Exercise(
    "LearnablePositionalEncoding",
    convention="x + a learned row per position, in the attribute `position_embeddings: "
               "nn.Embedding`, initialised from a truncated normal with std 0.02; "
               "`ValueError` past `max_len`",
    checks=LEARNABLE_POSITIONAL_ENCODING_CHECKS,
    main=[
        unseen_like(find(LEARNABLE_POSITIONAL_ENCODING_CHECKS, MODULE, "x_e_0_seq_1_batch_2_10_16"),
                    forward(([draw_int(4, 32, step=2, name="d"), 48], {}), drawn(2, draw_int(3, 48), same("d")),
                            seed=SEED),
                    "x + E[0 .. seq-1] for a batch and parameters drawn for this submission", id="main_forward"),
        unseen_like(find(LEARNABLE_POSITIONAL_ENCODING_CHECKS, MODULE, "position_ids_shape_batch_seq_one_row_per"),
                    forward(([draw_int(4, 32, step=2, name="d"), 48], {}),
                            drawn(2, draw_int(3, 12, name="l"), same("d")), seed=SEED,
                            position_ids={"t": "randint", "low": 0, "high": 48, "shape": [2, same("l")],
                                          "seed": SEED}),
                    "position_ids of shape (batch, seq) drawn for this submission", id="main_position_ids"),
    ],
    hints=(
        "a learned table is one trainable vector per position, looked up by the position index, started small.",
        "the table is `nn.Embedding(max_len, d_model)`, stored as self.position_embeddings. Its default start is "
        "N(0, 1): re-initialise its weight with `nn.init.trunc_normal_` and std=0.02.",
        "default positions are 0 .. seq_len - 1, built where x lives (`device=x.device`). A tensor built without a "
        "device sits on the CPU and fails as soon as the model is on a GPU.",
        "check before the lookup: seq_len > max_len, or given position_ids outside [0, max_len), raise ValueError "
        "naming max_len and the value; nn.Embedding alone raises an IndexError that names nothing.",
        "key line: `pe = self.position_embeddings(position_ids)`",
    ),
    mistakes={
        "learned_ignores_position_ids": Mistake(
            "LearnablePositionalEncoding",
            "the given position_ids were ignored (the output used rows 0 .. seq-1): look up "
            "self.position_embeddings(position_ids) when position_ids is given",
            hints=(
                "the caller chooses the positions: given position ids (a chunk that continues after a cache, a "
                "sequence padded on the left), each token gets the row of its own position, not rows 0, 1, 2, ...",
                "the lookup: only when `position_ids is None` do you build 0 .. seq_len - 1; otherwise look up exactly "
                "the ids you were given, one row for each.",
                "key line: `pe = self.position_embeddings(position_ids)`",
            ),
            wrong="pe = self.position_embeddings(torch.arange(seq_len, device=x.device))",
        ),
    },
)


# ---- resize_position_table -----------------------------------------------------------------------
RESIZE = "resize_position_table"
RESIZE_MISTAKES = ("resize_align_corners", "resize_wrong_axis", "resize_not_transposed_back", "resize_nearest")


def resize(table, new_len, **kw):
    return {"args": [table, new_len], **kw}


# F.interpolate computes the source coordinate x_j in float32: near row L it is off by up to ~1e-7 * L rows,
# which moves a blend of N(0, 1) rows by up to ~6e-7 * L. The contract's one-liner must pass.
def resize_tol(old_len):
    return {"per_position": 6e-7, "max_position": old_len}


RESIZE_POSITION_TABLE_CHECKS = [
    Check(RESIZE, "grow 6 -> 10 rows, as F.interpolate(linear, align_corners=False)", "call",
          resize(randn(6, 4), 10), points=2, public=True, mistakes=RESIZE_MISTAKES, tol=resize_tol(6),
          id="grow_6_10_rows_f_interpolate_linear"),
    Check(RESIZE, "shrink 12 -> 5 rows", "call", resize(randn(12, 3, seed=1), 5), public=True,
          mistakes=RESIZE_MISTAKES, tol=resize_tol(12), id="shrink_12_5_rows"),
    Check(RESIZE, "new_len=0 raises ValueError naming it", "raises", resize(randn(6, 4), 0), expect="raises",
          mentions=("new_len",), public=True, id="new_len_0_raises_valueerror_naming"),
    # the answer is the input itself: returning the input would pass its own twin, so the main check asks for work
    Check(RESIZE, "the same length gives the table back", "call", resize(randn(7, 5, seed=2), 7),
          mistakes=RESIZE_MISTAKES, public=True, id="same_length_table_back", twin=(RESEEDED, MAIN)),
    # no mistakes named here: align_corners=True and nearest both return row 0 for new_len=1
    Check(RESIZE, "new_len=1: the value at the middle of the table", "call", resize(randn(6, 4, seed=3), 1),
          hint="with align_corners=False the single new row sits at the centre, x = L/2 - 1/2 (align_corners=True "
               "and nearest neighbour both return the first row)", public=True, id="new_len_1_value_middle_table"),
    Check(RESIZE, "a longer table (64 -> 200 rows, d=32)", "call", resize(randn(64, 32, seed=4), 200),
          points=2, mistakes=RESIZE_MISTAKES, tol=resize_tol(64), public=True, id="longer_table_64_200_rows_d_32"),
    Check(RESIZE, "a float64 table stays float64", "call", {**resize(randn(9, 6, seed=5), 14), "dtype": "float64"},
          mistakes=RESIZE_MISTAKES, hint="return the table's dtype: blend in float32 or wider, then cast back",
          public=True, id="float64_table_float64"),
    Check(RESIZE, "a bfloat16 table stays bfloat16 (the CUDA check's dtype, on the CPU)", "call",
          {**resize(randn(196, 64), 576), "dtype": "bfloat16"}, mistakes=RESIZE_MISTAKES,
          hint="return the table's dtype: blend in float32 or wider, then cast back", public=True,
          id="bfloat16_table_cpu"),
    Check(RESIZE, "runs on the table's device (checked on the meta device)", "meta_call",
          resize(randn(8, 4), 13), expect="ok",
          hint="build positions and weights with device=table.device",
          public=True, id="runs_table_s_device_checked_meta_device"),
    *[
        Check(RESIZE, f"on CUDA in {dtype}", "call", {**resize(randn(196, 64), 576), "device": "cuda", "dtype": dtype},
              cuda=True, tol=resize_tol(196) if dtype == "float32" else None,
              hint="build positions and weights on table.device", id=f"cuda_{dtype}")
        for dtype in ("float32", "bfloat16")
    ],
]

RESIZE_POSITION_TABLE = Exercise(
    "resize_position_table",
    convention="`(L, d)` → `(new_len, d)` by linear interpolation along positions, as "
               "`F.interpolate(mode=\"linear\", align_corners=False)`",
    checks=RESIZE_POSITION_TABLE_CHECKS,
    main=[
        unseen_like(find(RESIZE_POSITION_TABLE_CHECKS, RESIZE, "grow_6_10_rows_f_interpolate_linear"),
                    resize(drawn(draw_int(3, 12, name="old"), draw_int(2, 6)), same("old", times=2, plus=1)),
                    "grow a table drawn for this submission to 2L + 1 rows", id="main_resize", tol=resize_tol(12)),
    ],
    hints=(
        "F.interpolate does exactly this on a (batch, channels, length) tensor: put the positions last, (1, d, L), "
        "interpolate with mode=\"linear\" and align_corners=False, and move them back. Or write the formula.",
        "with the formula: i0 = floor(x_j), i1 = min(i0 + 1, L - 1), w = x_j - i0, and new row j is "
        "(1 - w)·table[i0] + w·table[i1].",
        "precision and place: compute x_j in float64 (in float32, near row 200 it is off by 1e-5 of a row), blend "
        "in float32 or wider, return table.dtype, and build every index on table.device."
        " With `old_len = table.shape[0]` and `j = torch.arange(new_len, dtype=torch.float64)`.",
        "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
    ),
    mistakes={
        "resize_align_corners": Mistake(
            "resize_position_table",
            "the first and last rows are pinned to the old first and last rows (align_corners=True, or "
            "torch.linspace(0, L-1, new_len) as source positions); use align_corners=False: new row j comes from x_j = "
            "(j + 1/2) L / new_len - 1/2",
            hints=(
                "each new row stands for the centre of its cell: new row j sits at (j + 1/2)·L/L' - 1/2 old rows, the "
                "cell-centre convention of F.interpolate's default. Pinning the first and last rows to the old ones "
                "changes the step to (L - 1)/(L' - 1) old rows and moves every row in between.",
                "the source positions, in old rows: with `old_len = table.shape[0]` and `j = torch.arange(new_len, "
                "dtype=torch.float64)`, shift by half a row before and after the scaling, then clamp to [0, old_len - "
                "1]; with F.interpolate, pass align_corners=False.",
                "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
            ),
            wrong="x = torch.linspace(0, old_len - 1, new_len, dtype=torch.float64, device=table.device)",
        ),
        "resize_wrong_axis": Mistake(
            "resize_position_table",
            "you interpolated along the features, not the positions: F.interpolate resizes the last axis, so pass "
            "table.T[None] (1, d, L) and transpose the result back",
            hints=(
                "the positions are the table's rows: resizing stretches the position axis and leaves the d features of "
                "each row as they are. F.interpolate resizes the last axis, so the positions must come last.",
                "the length you resize is the number of rows, axis 0 of the table. With F.interpolate, hand it "
                "(1, d, L), `table.T[None]`, and transpose the result back.",
                "key line: `old_len = table.shape[0]`",
            ),
            wrong="old_len = table.shape[1]",
            also={"rows = table.to(work)": "rows = table.T.to(work)",
                     "return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)":
                         "return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype).T"},
        ),
        "resize_not_transposed_back": Mistake(
            "resize_position_table",
            "the result is the (d, new_len) tensor: transpose it back to (new_len, d)",
            hints=(
                "the result is a table like the input, one row per position: (new_len, d). F.interpolate works on "
                "(batch, channels, length), so its result has the positions last.",
                "the shape of what you return. With F.interpolate on `table.T[None]`, take `[0].T`. With the formula, "
                "the blend of `rows[i0]` and `rows[i1]` (`rows` the table in float32, `w` the weight of row i1) is "
                "already (new_len, d).",
                "key line: `return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)`",
            ),
            wrong="return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype).T",
        ),
        "resize_nearest": Mistake(
            "resize_position_table",
            "rows are copied (nearest neighbour) instead of blended: use linear interpolation, T'[j] = (1 - w) T[i0] + "
            "w T[i1]",
            hints=(
                "a resized table blends the two old rows around each new position, each weighted by how close it is; "
                "copying the nearest row makes steps where the positions should move smoothly.",
                "the source positions x_j = (j + 1/2)·old_len/new_len - 1/2, with `old_len = table.shape[0]` and "
                "`j = torch.arange(new_len, dtype=torch.float64)`: not rounded, not floored, since their fraction is "
                "the weight of the upper row. With F.interpolate, mode=\"linear\".",
                "key line: `x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)`",
            ),
            wrong="x = (j * (old_len / new_len)).floor().clamp(0, old_len - 1)",
        ),
    },
)


EXERCISES = (LEARNABLE_POSITIONAL_ENCODING, RESIZE_POSITION_TABLE)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
