"""Chapter 8 checks: resize_position_table_2d, sincos_2d_table, axial_rope_cos_sin, check_axial_property,
mrope_position_ids, mrope_cos_sin."""


from grader.checks.mutation import Catalogue
from grader.exercise import Exercise, declared
from grader.spec import (
    MAIN,
    RESEEDED,
    SEED,
    Check,
    Mistake,
    draw_among,
    draw_choice,
    draw_float,
    draw_int,
    find,
    same,
    unseen_like,
)

RESIZE, SINCOS, AXIAL, PROPERTY, IDS, MROPE = ("resize_position_table_2d", "sincos_2d_table", "axial_rope_cos_sin",
                                               "check_axial_property", "mrope_position_ids", "mrope_cos_sin")


def randint(high, *shape, seed=0):
    return {"t": "randint", "low": 0, "high": high, "shape": list(shape), "seed": seed}


def long(values):
    return {"long": values}


def but(mistakes, *left_out):
    """An exercise's known mistakes without `left_out`: those whose answer on a check's input is the reference's, or
    another mistake's (a check names only the mistakes its input tells apart)."""
    return tuple(m for m in mistakes if m not in left_out)


def drawn_base(lo=1000.0, hi=100000.0):
    """A base drawn log-uniformly for each student (a twin's or a main check's)."""
    return draw_float(lo, hi, log=True)


# videos with more time than space: (t, h, w) merged tokens, t > max(h, w)
LONG_VIDEOS = [(t, h, w) for t in (2, 3, 4) for h in (1, 2, 3) for w in (1, 2, 3) if t > max(h, w)]


def several_groups():
    """SEVERAL's layout with other sizes: text, an image, text, a video, text, an image, text (groups for
    vision_ids: an int is that many text tokens, (t, h, w) a grid of merged tokens)."""
    return [[a, (1, h1, w1), 2, video, 2, (1, h2, w2), 1]
            for a in (1, 2, 3, 4) for h1, w1 in ((1, 2), (2, 1), (2, 2), (1, 3), (2, 3), (3, 2))
            for video in LONG_VIDEOS for h2, w2 in ((1, 1), (1, 2), (2, 1), (2, 2))]


# float32 angles: tables at positions p agree with float64 ones to about p * 1e-7
def angle_tol(max_position):
    return {"per_position": 2e-7, "max_position": max_position}


def drawn_ids(high, *shape):
    return {"t": "randint", "low": 0, "high": high, "shape": list(shape), "seed": SEED}


# ---- resize_position_table_2d --------------------------------------------------------------------
def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


RESIZE_MISTAKES = ("resize2d_class_token_with_grid", "resize2d_column_major", "resize2d_align_corners",
                   "resize2d_size_w_h", "resize2d_no_antialias", "resize2d_reshaped_to_channels",
                   "resize2d_reshaped_both_ways", "resize2d_prefix_dropped", "resize2d_read_column_major",
                   "resize2d_prefix_after_grid")
# mode and antialias fixed to timm's values: told apart only where the caller asks for others (the bilinear check)
RESIZE_BILINEAR_MISTAKES = but(RESIZE_MISTAKES, "resize2d_no_antialias") + ("resize2d_mode_antialias_fixed",
                                                                           "resize2d_mode_fixed")


def resize(rows, d, old, new, seed=0, **kwargs):
    return {"args": [randn(rows, d, seed=seed), list(old), list(new)], "kwargs": kwargs}


def drawn(*shape):
    return {"t": "randn", "shape": list(shape), "seed": SEED}


RESIZE_POSITION_TABLE_2D_CHECKS = [
    Check(RESIZE, "grow a 4x6 grid with a class token to 7x9 (timm: bicubic, align_corners=False)", "call",
          resize(1 + 24, 8, (4, 6), (7, 9)), points=2, public=True, mistakes=RESIZE_MISTAKES,
          hint="set the class token's row aside; reshape the other rows to (1, d, H, W) (row r·W + c is pixel (r, c)), "
               "F.interpolate(..., size=(H', W'), mode='bicubic', align_corners=False, antialias=True), flatten back",
          id="grow_4x6_class_token_7x9"),
    Check(RESIZE, "shrink 7x7 to 3x5 (antialiased, as timm)", "call", resize(1 + 49, 6, (7, 7), (3, 5), seed=1),
          points=2, public=True, mistakes=RESIZE_MISTAKES,
          hint="timm resizes with antialias=True: when the grid shrinks, the kernel widens and every old row "
               "contributes",
          id="shrink_7x7_3x5_antialiased"),
    Check(RESIZE, "no prefix rows (num_prefix_tokens=0), 5x3 to 8x4", "call",
          resize(15, 4, (5, 3), (8, 4), seed=2, num_prefix_tokens=0), public=True,
          mistakes=but(RESIZE_MISTAKES, "resize2d_prefix_dropped", "resize2d_prefix_after_grid"),  # no prefix rows
          hint="the prefix is the first num_prefix_tokens rows, here none: split the table at num_prefix_tokens, "
               "whatever it is (0, 1, or 2 for DeiT)",
          id="no_prefix_5x3_8x4"),
    Check(RESIZE, "two prefix rows (DeiT: class and distillation tokens), 6x6 to 9x9", "call",
          resize(2 + 36, 8, (6, 6), (9, 9), seed=3, num_prefix_tokens=2), public=True,
          # square grids: (H', W') = (W', H'), and reading the old grid transposed is writing the new one so
          mistakes=but(RESIZE_MISTAKES, "resize2d_size_w_h", "resize2d_column_major", "resize2d_read_column_major"),
          hint="the first num_prefix_tokens rows are kept as they are, in front of the resized grid",
          id="two_prefix_rows_6x6_9x9"),
    Check(RESIZE, "bilinear without antialiasing, 6x4 to 3x7", "call",
          resize(1 + 24, 4, (6, 4), (3, 7), seed=4, mode="bilinear", antialias=False), public=True,
          mistakes=RESIZE_BILINEAR_MISTAKES,
          hint="pass mode and antialias on to F.interpolate", id="bilinear_no_antialias_6x4_3x7"),
    # the answer is the input itself: returning the input would pass its own twin, so the main check asks for work
    Check(RESIZE, "the same grid gives the table back", "call", resize(1 + 20, 4, (4, 5), (4, 5), seed=5),
          public=True, id="same_grid_table_back", twin=(RESEEDED, MAIN),
          # the same grid: only where the patches go can be wrong, not how they are blended
          mistakes=but(RESIZE_MISTAKES, "resize2d_class_token_with_grid", "resize2d_align_corners",
                       "resize2d_no_antialias", "resize2d_reshaped_both_ways")),
    Check(RESIZE, "a float64 table stays float64", "call", {**resize(1 + 16, 6, (4, 4), (6, 5), seed=6),
                                                          "dtype": "float64"},
          public=True, mistakes=RESIZE_MISTAKES, hint="interpolate in float32 (or wider), return table.dtype",
          id="float64_table_float64"),
    Check(RESIZE, "a bfloat16 table stays bfloat16 (the CUDA check's dtype, on the CPU)", "call",
          {**resize(1 + 196, 32, (14, 14), (24, 24)), "dtype": "bfloat16"}, public=True,
          hint="interpolate in float32 (or wider), return table.dtype", id="bfloat16_table_cpu"),
    Check(RESIZE, "a table with the wrong number of rows raises ValueError naming old_grid", "raises",
          resize(1 + 20, 4, (4, 4), (6, 6)), expect="raises", mentions=("old_grid",), public=True,
          id="wrong_rows_raises_valueerror"),
    Check(RESIZE, "a new grid side of 0 raises ValueError naming new_grid", "raises",
          resize(1 + 16, 4, (4, 4), (0, 6)), expect="raises", mentions=("new_grid",), public=True,
          id="new_grid_0_raises_valueerror"),
    Check(RESIZE, "runs on the table's device (checked on the meta device)", "meta_call",
          resize(1 + 16, 4, (4, 4), (6, 6)), expect="ok", public=True,
          hint="keep everything on table.device", id="runs_table_device_checked_meta"),
    Check(RESIZE, "a 14x14 ViT-B/16 grid to 24x24 (224 to 384 pixels), d=64", "call",
          resize(1 + 196, 64, (14, 14), (24, 24), seed=7),
          mistakes=but(RESIZE_MISTAKES, "resize2d_size_w_h", "resize2d_column_major", "resize2d_read_column_major"),
          id="vit_14x14_24x24_hidden"),
    *[
        Check(RESIZE, f"on CUDA in {dtype}", "call", {**resize(1 + 196, 64, (14, 14), (24, 24)), "device": "cuda",
                                                      "dtype": dtype},
              cuda=True, hint="keep everything on table.device", id=f"cuda_{dtype}")
        for dtype in ("float32", "bfloat16")
    ],
]

RESIZE_POSITION_TABLE_2D = Exercise(
    "resize_position_table_2d",
    convention="`(P + H·W, d)` → `(P + H'·W', d)`: prefix rows kept, the grid resized as a `(1, "
               "d, H, W)` image with `F.interpolate(align_corners=False)` in float32; equals "
               "timm's `resample_abs_pos_embed`",
    checks=RESIZE_POSITION_TABLE_2D_CHECKS,
    main=[
        unseen_like(find(RESIZE_POSITION_TABLE_2D_CHECKS, RESIZE, "grow_4x6_class_token_7x9"),
                    {"args": [drawn(same("w", times=4, plus=1), draw_choice(4, 6, 8)), [4, draw_int(5, 7, name="w")],
                              [draw_int(5, 8), draw_int(5, 9)]], "kwargs": {}},
                    # never square (4 x W, W > 4): a square grid is its own transpose, and two mistakes agree there
                    "grow a 4 x W grid with a class token, sizes drawn for this submission", id="main_grow_v2"),
    ],
    hints=(
        "the patch rows are an image: set the num_prefix_tokens first rows aside, then reshape the rest to "
        "(old_h, old_w, d) (row r·W + c is pixel (r, c)) and move the channels first, (1, d, H, W).",
        "resize that image with `F.interpolate`, giving `size=(new_h, new_w)` (height first), `mode=mode`, "
        "`align_corners=False` and `antialias=antialias`, in float32; then go back to (H'·W', d), row-major.",
        "put the prefix rows back in front with `torch.cat` and return the table's dtype.",
        "key line: `image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]`",
    ),
    mistakes={
        "resize2d_class_token_with_grid": Mistake(
            "resize_position_table_2d",
            "the class token was resized with the grid (a 1-D interpolation of every row): set the num_prefix_tokens "
            "first rows aside, resize the rest as an H x W image, put them back in front",
            hints=(
                "the class token is not a place on the image: it has no neighbours to blend with. Only the patch rows "
                "form a grid to resize; the prefix rows come back unchanged.",
                "the end of the function: the prefix rows, `prefix`, set aside at the start, go back in front of the "
                "resized patch rows, `resized`, as they were.",
                "key line: `return torch.cat([prefix, resized.to(table.dtype)], dim=0)`",
            ),
            wrong="return F.interpolate(table.T[None].float(), size=num_prefix_tokens + new_h * new_w, "
                  "mode=\"linear\", align_corners=False)[0].T.to(table.dtype)",
        ),
        "resize2d_column_major": Mistake(
            "resize_position_table_2d",
            "the resized grid was flattened column by column: patch (r, c) is row r·W' + c, so go back from (1, d, H', "
            "W') with .permute(0, 2, 3, 1) (or [0].permute(1, 2, 0)) before the reshape",
            hints=(
                "the table is row-major: patch (r, c) is row r·W + c, so after resizing, the grid is read back row by "
                "row, the channels last.",
                "where the resized `image` (1, d, H', W') becomes rows again: move the channels last, keeping the "
                "height before the width, (H', W', d), then reshape to (H'·W', d), with `new_h, new_w` the new grid.",
                "key line: `resized = image[0].permute(1, 2, 0).reshape(new_h * new_w, d)`",
            ),
            wrong="resized = image[0].permute(2, 1, 0).reshape(new_h * new_w, d)",
        ),
        "resize2d_align_corners": Mistake(
            "resize_position_table_2d",
            "align_corners=True pins the corner patches; timm and Hugging Face use align_corners=False (None means "
            "False for bicubic): new row j samples (j + 1/2)·H/H' - 1/2",
            hints=(
                "timm and Hugging Face treat each patch as a cell whose centre is sampled: the corners of the old and "
                "new grids are not pinned to each other.",
                "the `F.interpolate` call on the (1, d, H, W) `image`, resized to the new grid `new_h, new_w`: its "
                "align_corners argument.",
                "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
                "antialias=antialias)`",
            ),
            wrong="image = F.interpolate(image, size=(new_h, new_w), mode=mode,"
                  " align_corners=True, antialias=antialias)",
        ),
        "resize2d_size_w_h": Mistake(
            "resize_position_table_2d",
            "the grid was resized to (W', H'): F.interpolate takes size=(H', W') for a (1, d, H, W) image",
            hints=(
                "an image tensor is (batch, channels, height, width): every size given to it is height first, then "
                "width.",
                "the `F.interpolate` call on the (1, d, H, W) `image`: the order of the two numbers of the new grid, "
                "`new_h, new_w`, in its size.",
                "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
                "antialias=antialias)`",
            ),
            wrong="image = F.interpolate(image, size=(new_w, new_h), mode=mode,"
                  " align_corners=False, antialias=antialias)",
        ),
        "resize2d_no_antialias": Mistake(
            "resize_position_table_2d",
            "without antialias=True (Hugging Face's settings): timm resizes with antialias=True, where PyTorch's "
            "bicubic kernel uses a = -0.5 instead of -0.75, and is widened when the grid shrinks",
            hints=(
                "the caller chooses the filter: with antialias on, as timm resizes, the bicubic kernel changes and "
                "widens when the grid shrinks; the function passes the caller's choice on.",
                "the `F.interpolate` call that resizes the (1, d, H, W) `image` to the new grid, `new_h, new_w`: it "
                "receives the `antialias` argument as given.",
                "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
                "antialias=antialias)`",
            ),
            wrong="image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, antialias=False)",
        ),
        "resize2d_reshaped_to_channels": Mistake(
            "resize_position_table_2d",
            "the patch rows were reshaped straight to (1, d, H, W), which cuts the table's memory into d planes and "
            "mixes patches with channels: reshape to (H, W, d) first (row r·W + c is pixel (r, c)), then move the "
            "channels first with .permute(2, 0, 1)",
            hints=(
                "a row of the table is one patch with its d channels side by side: lay the rows out as the grid they "
                "are, height, width, channels, and only then move the channels to the front.",
                "where the patch rows, `grid`, become the image: reshape them to (old_h, old_w, d), permute the "
                "channels first, add the batch axis, in float32.",
                "key line: `image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]`",
            ),
            wrong="image = grid.float().reshape(1, d, old_h, old_w)",
        ),
        "resize2d_reshaped_both_ways": Mistake(
            "resize_position_table_2d",
            "the table was reshaped straight to (1, d, H, W) and read back with .reshape(H'·W', d): a reshape never "
            "moves the channels, so patches and channels mix; reshape to (H, W, d) and permute the channels first, "
            "then permute them last again before flattening back",
            hints=(
                "a reshape only cuts the memory into another shape; to turn rows of d channels into d channel planes, "
                "and back, the channels must move, with a permute, both ways.",
                "where the patch rows, `grid`, become the image: reshape them to (old_h, old_w, d), permute the "
                "channels first, add the batch axis, in float32 (and, coming back, the channels go last before the "
                "reshape to (H'·W', d)).",
                "key line: `image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]`",
            ),
            wrong="image = grid.float().reshape(1, d, old_h, old_w)",
            also={"resized = image[0].permute(1, 2, 0).reshape(new_h * new_w, d)":
                  "resized = image.reshape(new_h * new_w, d)"},
        ),
        "resize2d_prefix_dropped": Mistake(
            "resize_position_table_2d",
            "the prefix rows are missing: the output holds the num_prefix_tokens first rows of the table, unchanged, "
            "in front of the H'·W' resized rows",
            hints=(
                "the table keeps its shape of rows: the class token (and any other prefix row) comes back as it was, "
                "and the resized grid follows it.",
                "the end of the function: the prefix rows, `prefix`, set aside at the start, go back in front of the "
                "resized patch rows, `resized`.",
                "key line: `return torch.cat([prefix, resized.to(table.dtype)], dim=0)`",
            ),
            wrong="return resized.to(table.dtype)",
        ),
        "resize2d_read_column_major": Mistake(
            "resize_position_table_2d",
            "the old grid was read as W rows of H (column by column): row P + r·W + c of the table is pixel (r, c), "
            "so reshape the patch rows to (H, W, d) before moving the channels first",
            hints=(
                "the table is row-major: its patch rows run along the first row of the grid, then the second, so W "
                "consecutive rows make one row of the image.",
                "where the patch rows, `grid`, become the image: reshape them to (old_h, old_w, d), the height first, "
                "then permute the channels first, (d, H, W).",
                "key line: `image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]`",
            ),
            wrong="image = grid.float().reshape(old_w, old_h, d).permute(2, 1, 0)[None]",
        ),
        "resize2d_prefix_after_grid": Mistake(
            "resize_position_table_2d",
            "the prefix rows come after the grid: the class token (and any other prefix row) stays in front, rows 0 .. "
            "P - 1, as the table had it, and the resized grid follows",
            hints=(
                "the table's layout does not change with its size: its first num_prefix_tokens rows are the prefix, "
                "the patches come after them.",
                "the end of the function: the prefix rows, `prefix`, go first in the concatenation, then the resized "
                "patch rows, `resized`.",
                "key line: `return torch.cat([prefix, resized.to(table.dtype)], dim=0)`",
            ),
            wrong="return torch.cat([resized.to(table.dtype), prefix], dim=0)",
        ),
        "resize2d_mode_fixed": Mistake(
            "resize_position_table_2d",
            "the mode was fixed to bicubic: the caller chooses it, so pass mode=mode on to F.interpolate, as you pass "
            "antialias",
            hints=(
                "bicubic is timm's default, not the only choice: a caller may ask for bilinear, and gets what it asked "
                "for.",
                "the `F.interpolate` call that resizes the (1, d, H, W) `image` to the new grid, `new_h, new_w`: its "
                "mode comes from the argument `mode`.",
                "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
                "antialias=antialias)`",
            ),
            wrong=("image = F.interpolate(image, size=(new_h, new_w), mode=\"bicubic\", align_corners=False, "
                   "antialias=antialias)"),
        ),
        "resize2d_mode_antialias_fixed": Mistake(
            "resize_position_table_2d",
            "mode and antialias were fixed to timm's values (bicubic, antialias=True): the caller chooses them, so "
            "pass mode=mode and antialias=antialias on to F.interpolate",
            hints=(
                "timm's settings are the defaults, not the only choice: a caller may ask for bilinear, or for Hugging "
                "Face's resize without antialiasing, and gets what it asked for.",
                "the `F.interpolate` call that resizes the (1, d, H, W) `image` to the new grid, `new_h, new_w`: its "
                "mode and antialias come from the arguments.",
                "key line: `image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, "
                "antialias=antialias)`",
            ),
            wrong=("image = F.interpolate(image, size=(new_h, new_w), mode=\"bicubic\", align_corners=False, "
                   "antialias=True)"),
        ),
    },
)


# ---- sincos_2d_table -----------------------------------------------------------------------------
SINCOS_MISTAKES = ("sincos2d_columns_first", "sincos2d_interleaved", "sincos2d_column_major",
                   "sincos2d_sin_cos_swapped", "sincos2d_sines_first", "sincos2d_height_for_width",
                   "sincos2d_flattened_1d", "sincos2d_ladder_over_half", "sincos2d_row_for_both_halves",
                   "sincos2d_ladder_over_d", "sincos2d_ladder_to_one_over_base")

SINCOS_2D_TABLE_CHECKS = [
    Check(SINCOS, "a 4x6 grid, d_model=16", "call", {"args": [4, 6, 16]}, points=2, public=True,
          mistakes=SINCOS_MISTAKES, id="grid_4x6_d_16",
          twin={"args": [draw_int(2, 12), draw_int(2, 12), draw_int(8, 64, step=4)], "kwargs": {"base": drawn_base()}}),
    Check(SINCOS, "a 14x14 grid, d_model=64 (MAE's grid)", "call", {"args": [14, 14, 64]}, public=True,
          # a square grid: the patches column by column are the halves swapped, and H for W is right
          id="grid_14x14_d_64",
          mistakes=but(SINCOS_MISTAKES, "sincos2d_columns_first", "sincos2d_column_major", "sincos2d_height_for_width"),
          twin={"args": [draw_int(10, 20, name="n"), same("n"), draw_int(32, 128, step=4)],
                "kwargs": {"base": drawn_base()}}),
    Check(SINCOS, "a single row (1x7), d_model=8", "call", {"args": [1, 7, 8]}, public=True,
          # one row: column by column is right, and dividing by H puts the columns in the row blocks, which is the
          # answer of the column blocks first
          mistakes=but(SINCOS_MISTAKES, "sincos2d_column_major", "sincos2d_height_for_width", "sincos2d_columns_first"),
          hint="with one row, every row angle is 0: the row blocks hold sin 0 = 0 and cos 0 = 1",
          id="single_row_1x7_d_8",
          twin={"args": [1, draw_int(2, 30), draw_int(4, 64, step=4)], "kwargs": {"base": drawn_base()}}),
    Check(SINCOS, "another base (3x5, d_model=32, base=100)", "call", {"args": [3, 5, 32], "kwargs": {"base": 100.0}},
          public=True, mistakes=SINCOS_MISTAKES, id="base_100_3x5_d_32",
          twin={"args": [draw_int(2, 8), draw_int(2, 8), draw_int(8, 64, step=4)],
                "kwargs": {"base": drawn_base(10.0, 1000.0)}}),
    Check(SINCOS, "d_model=6 raises ValueError naming it", "raises", {"args": [4, 4, 6]}, expect="raises",
          mentions=("d_model",), public=True, id="d_model_6_raises_valueerror",
          twin={"args": [draw_int(1, 20), draw_int(1, 20), draw_int(2, 202, step=4)]}),
    Check(SINCOS, "grid_h=0 raises ValueError naming it", "raises", {"args": [0, 4, 8]}, expect="raises",
          mentions=("grid_h",), public=True, id="grid_h_0_raises_valueerror",
          twin={"args": [0, draw_int(1, 50), draw_int(4, 128, step=4)]}),
    Check(SINCOS, "builds on the device it is given (checked on the meta device)", "meta_call",
          {"args": [4, 4, 16], "kwargs": {"device": "meta"}}, expect="ok", public=True,
          hint="create every tensor with device=device", id="builds_device_checked_meta",
          twin={"args": [draw_int(1, 20), draw_int(1, 20), draw_int(4, 64, step=4)], "kwargs": {"device": "meta"}}),
    Check(SINCOS, "a 24x16 grid, d_model=128", "call", {"args": [24, 16, 128]}, mistakes=SINCOS_MISTAKES,
          id="grid_24x16_d_128_hidden",
          twin={"args": [draw_int(16, 32), draw_int(12, 24), draw_int(96, 192, step=4)],
                "kwargs": {"base": drawn_base()}}),
]

SINCOS_2D_TABLE = Exercise(
    "sincos_2d_table",
    convention="`(H·W, d)` float32: [sin(rω) | cos(rω) | sin(cω) | cos(cω)], ω_i = base^(−i/(d/4)); "
               "equals transformers' `build_2d_sinusoidal_position_embedding` (MAE, He et al., 2022)",
    checks=SINCOS_2D_TABLE_CHECKS,
    main=[
        unseen_like(find(SINCOS_2D_TABLE_CHECKS, SINCOS, "grid_4x6_d_16"),
                    {"args": [draw_int(2, 9), draw_int(2, 9), draw_int(8, 64, step=4)],
                     "kwargs": {"base": drawn_base()}},
                    "a grid and d_model drawn for this submission", id="main_grid_v2"),
    ],
    hints=(
        "chapter 1's sinusoids twice, each over d/4 frequencies ω_i = base^(-i/(d/4)): one (sin, cos) pair of blocks "
        "for the patch's row, one for its column.",
        "patch k of a row-major grid sits at row k // grid_w and column k % grid_w; with `row_angles` = r·ω and "
        "`col_angles` = c·ω, each (H·W, d/4), the table is [sin(rω) | cos(rω) | sin(cω) | cos(cω)], each block d/4 "
        "wide (sines then cosines, not interleaved).",
        "compute the angles in float64 (as transformers does) and return float32; build every tensor on `device`.",
        "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], "
        "dim=-1)`",
    ),
    mistakes={
        "sincos2d_columns_first": Mistake(
            "sincos_2d_table",
            "the column blocks come first: that is the layout of MAE's original code and checkpoints; this exercise "
            "follows transformers' build_2d_sinusoidal_position_embedding, rows first: [sin(rω) | cos(rω) | sin(cω) | "
            "cos(cω)]",
            hints=(
                "two layouts exist: MAE's code puts the column blocks first, transformers' builder the row blocks; "
                "this exercise follows transformers, rows first.",
                "where the four blocks are concatenated: the sine and cosine of `row_angles` come before those of "
                "`col_angles`.",
                "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), "
                "col_angles.cos()], dim=-1)`",
            ),
            wrong="table = torch.cat([col_angles.sin(), col_angles.cos(), row_angles.sin(), row_angles.cos()], dim=-1)",
        ),
        "sincos2d_interleaved": Mistake(
            "sincos_2d_table",
            "sin and cos are interleaved inside each half (chapter 1's layout): here each quarter is one block, the "
            "d/4 sines then the d/4 cosines",
            hints=(
                "this table is not chapter 1's interleaved layout: each quarter of the vector is one block, all its "
                "sines, or all its cosines.",
                "where the blocks are concatenated: four whole blocks, the sines of `row_angles`, their cosines, then "
                "the same for `col_angles`, with no stacking of sine and cosine pairs.",
                "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), "
                "col_angles.cos()], dim=-1)`",
            ),
            wrong="table = torch.cat([torch.stack((a.sin(), a.cos()), dim=-1).flatten(-2) for a in (row_angles, "
                  "col_angles)], dim=-1)",
        ),
        "sincos2d_column_major": Mistake(
            "sincos_2d_table",
            "the patches are numbered column by column: patch k of a row-major grid is (k // W, k % W)",
            hints=(
                "the patches are numbered row by row: a whole row of W patches, then the next row, so the row of a "
                "patch changes every W patches.",
                "the row and column of each patch number, `patch`: the row is the quotient by grid_w, the column the "
                "remainder.",
                "key line: `rows, cols = (patch // grid_w).double(), (patch % grid_w).double()`",
            ),
            wrong="rows, cols = (patch % grid_h).double(), (patch // grid_h).double()",
        ),
        "sincos2d_row_for_both_halves": Mistake(
            "sincos_2d_table",
            "the column blocks hold the row's angles too, so every patch of a row gets the same vector: the column of "
            "patch k is k % W",
            hints=(
                "a patch has two coordinates: the row, which changes every W patches, and the column, which runs 0 .. "
                "W - 1 along each row; each fills its own half of the vector.",
                "the row and column of each patch number, `patch`: the row is the quotient by grid_w, the column the "
                "remainder.",
                "key line: `rows, cols = (patch // grid_w).double(), (patch % grid_w).double()`",
            ),
            wrong="rows, cols = (patch // grid_w).double(), (patch // grid_w).double()",
        ),
        "sincos2d_sin_cos_swapped": Mistake(
            "sincos_2d_table",
            "sin and cos are swapped: in each half the sines come first, [sin(rω) | cos(rω) | sin(cω) | cos(cω)]",
            hints=(
                "as in chapter 1, the sine comes before the cosine: each half of the vector holds its d/4 sines, then "
                "its d/4 cosines.",
                "where the four blocks are concatenated: the sines of `row_angles` before their cosines, then the same "
                "for `col_angles`.",
                "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), "
                "col_angles.cos()], dim=-1)`",
            ),
            wrong="table = torch.cat([row_angles.cos(), row_angles.sin(), col_angles.cos(), col_angles.sin()], dim=-1)",
        ),
        "sincos2d_sines_first": Mistake(
            "sincos_2d_table",
            "the blocks are sin(rω), sin(cω), cos(rω), cos(cω): each axis keeps its sine and its cosine side by side, "
            "[sin(rω) | cos(rω) | sin(cω) | cos(cω)], the row's half first",
            hints=(
                "the vector has two halves, one per axis: the first half is the row's, its sines then its cosines; "
                "the second half is the column's, the same way.",
                "where the four blocks are concatenated: both blocks of `row_angles` (sine, cosine) before both blocks "
                "of `col_angles`.",
                "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), "
                "col_angles.cos()], dim=-1)`",
            ),
            wrong="table = torch.cat([row_angles.sin(), col_angles.sin(), row_angles.cos(), col_angles.cos()], dim=-1)",
        ),
        "sincos2d_height_for_width": Mistake(
            "sincos_2d_table",
            "the patch number is divided by the grid's height: in a row-major grid a row holds W patches, so patch k "
            "is at row k // W and column k % W (the two agree only on a square grid)",
            hints=(
                "the patches are numbered along a row first: a row holds grid_w patches, one per column, so the row "
                "number grows every grid_w patches.",
                "the row and column of each patch number, `patch`: the quotient and the remainder by grid_w, the "
                "row's length, not by grid_h.",
                "key line: `rows, cols = (patch // grid_w).double(), (patch % grid_w).double()`",
            ),
            wrong="rows, cols = (patch // grid_h).double(), (patch % grid_h).double()",
        ),
        "sincos2d_flattened_1d": Mistake(
            "sincos_2d_table",
            "this is chapter 1's table over the H·W flattened positions: position r·W + c puts the patch below W "
            "positions away and the ends of two rows side by side; give the row and the column their own halves, "
            "[sin(rω) | cos(rω) | sin(cω) | cos(cω)]",
            hints=(
                "a flattened grid is not a line: a patch's vector must depend on its row and its column, each with its "
                "own half of the channels, not on its number r·W + c.",
                "the patch number `patch` gives a row and a column; their angles, `row_angles` (r·ω) and `col_angles` "
                "(c·ω), d/4 each, fill the four blocks of the table, sines then cosines.",
                "key line: `table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), "
                "col_angles.cos()], dim=-1)`",
            ),
            wrong="angles = torch.outer(patch.float(), 1.0 / base ** (torch.arange(0, d_model, 2, dtype=torch.float32, "
                  "device=device) / d_model))\n"
                  "table = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)",
        ),
        "sincos2d_ladder_over_d": Mistake(
            "sincos_2d_table",
            "the frequencies stop at base^(-1/4): the exponent i/d spreads one ladder over the whole vector, but each "
            "quarter holds a whole ladder of its own, ω_i = base^(-i/(d/4)), from 1 down to nearly 1/base",
            hints=(
                "each quarter of the vector is a complete sinusoidal block of d/4 frequencies, so its ladder runs from "
                "1 to nearly 1/base within those d/4 channels.",
                "the frequencies `omega`: exponents i / quarter for i = 0 .. quarter - 1, where `quarter` is d_model "
                "// 4, not i / d_model.",
                "key line: `omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / "
                "quarter)`",
            ),
            wrong="omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / d_model)",
        ),
        "sincos2d_ladder_to_one_over_base": Mistake(
            "sincos_2d_table",
            "the ladder reaches 1/base: exponents from 0 to 1 in D = d/4 points (linspace) give base^(-i/(D-1)); the "
            "table's frequencies are base^(-i/D), i = 0 .. D - 1, whose last stops one step short of 1/base",
            hints=(
                "as in chapter 1, the exponents step by 1/D and never reach 1: the last frequency is base^(-(D-1)/D), "
                "just above 1/base.",
                "the frequencies `omega`: exponents i / quarter for i = 0 .. quarter - 1 (`torch.arange(quarter)` "
                "divided by quarter), not quarter points from 0 to 1.",
                "key line: `omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / "
                "quarter)`",
            ),
            wrong="omega = 1.0 / base ** torch.linspace(0, 1, quarter, dtype=torch.float64, device=device)",
        ),
        "sincos2d_ladder_over_half": Mistake(
            "sincos_2d_table",
            "the frequencies stop at base^(-1/2): chapter 1's exponent 2i/d spreads one ladder over the whole vector, "
            "but here each quarter holds a whole ladder of its own, ω_i = base^(-i/(d/4)), from 1 down to nearly "
            "1/base",
            hints=(
                "each quarter of the vector is a complete sinusoidal block of d/4 frequencies, so its ladder runs from "
                "1 to nearly 1/base within those d/4 channels.",
                "the frequencies `omega`: exponents i / quarter for i = 0 .. quarter - 1, where `quarter` is d_model "
                "// 4, not i / (d_model / 2).",
                "key line: `omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / "
                "quarter)`",
            ),
            wrong="omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / (2 * quarter))",
        ),
    },
)


# ---- axial_rope_cos_sin --------------------------------------------------------------------------
AXIAL_MISTAKES = ("axial_ladder_over_full_head", "axial_rows_then_columns", "axial_columns_first",
                  "axial_interleaved_tables", "axial_row_for_both_axes", "axial_one_ladder_split",
                  "axial_sin_cos_returned", "axial_rows_columns_interleaved")
# Qwen2-VL's order of the patches of a 4 x 6 grid (spatial_merge_size 2: block by block), then a 2 x 2 image
QWEN_IDS = [[0, 0], [0, 1], [1, 0], [1, 1], [0, 2], [0, 3], [1, 2], [1, 3], [0, 4], [0, 5], [1, 4], [1, 5],
            [2, 0], [2, 1], [3, 0], [3, 1], [2, 2], [2, 3], [3, 2], [3, 3], [2, 4], [2, 5], [3, 4], [3, 5],
            [0, 0], [0, 1], [1, 0], [1, 1]]


def axial(ids, head_dim, **kwargs):
    return {"args": [ids, head_dim], "kwargs": kwargs}


def qwen_order(h, w, merge=2):
    """(row, column) ids of an h x w grid in Qwen2-VL's order: merge x merge blocks, row-major, each row-major."""
    return [[r + i, c + j] for r in range(0, h, merge) for c in range(0, w, merge)
            for i in range(merge) for j in range(merge)]


AXIAL_ROPE_COS_SIN_CHECKS = [
    Check(AXIAL, "(row, column) ids in [0, 16), head_dim=16", "call", axial(randint(16, 10, 2), 16), points=2,
          public=True, mistakes=AXIAL_MISTAKES,
          hint="θ_j = base^(-2j/(d/2)) over half the head; angles [r·θ | c·θ] (d/2), tables cat(angles, angles)",
          id="ids_0_16_head_dim_16"),
    Check(AXIAL, "Qwen2-VL's patch order (2x2 blocks) for a 4x6 and a 2x2 grid, head_dim=32", "call_ints",
          axial(long(QWEN_IDS), 32), public=True, mistakes=AXIAL_MISTAKES, id="qwen_order_head_dim_32",
          twin=draw_among(lambda: [axial(long(qwen_order(h, w) + qwen_order(*second)), head_dim, base=drawn_base())
                                   for h in (2, 4, 6) for w in (2, 4, 6, 8) for second in ((2, 2), (2, 4), (4, 2))
                                   for head_dim in (8, 16, 32, 64, 80)])),
    Check(AXIAL, "ids up to 100, head_dim=64, base=100", "call", axial(randint(100, 12, 2, seed=1), 64, base=100.0),
          public=True, mistakes=AXIAL_MISTAKES, tol=angle_tol(100), id="ids_100_head_dim_64_base_100"),
    Check(AXIAL, "head_dim=6 raises ValueError naming it", "raises", axial(randint(4, 3, 2), 6), expect="raises",
          mentions=("head_dim",), public=True, id="head_dim_6_raises_valueerror"),
    Check(AXIAL, "position_ids of shape (5, 3) raise ValueError naming them", "raises", axial(randint(4, 5, 3), 8),
          expect="raises", mentions=("position_ids",), public=True, id="ids_5_3_raises_valueerror"),
    Check(AXIAL, "runs on the device of the ids (checked on the meta device)", "meta_call", axial(randint(8, 6, 2), 16),
          expect="ok", public=True, hint="build the frequencies with device=position_ids.device",
          id="runs_ids_device_checked_meta"),
    Check(AXIAL, "ids up to 40 on a 40x40 grid, head_dim=80 (Qwen2-VL's head)", "call",
          axial(randint(40, 50, 2, seed=2), 80), mistakes=AXIAL_MISTAKES, tol=angle_tol(40), id="head_dim_80_hidden"),
    Check(AXIAL, "on CUDA", "call", {**axial(randint(40, 50, 2), 80), "device": "cuda"}, cuda=True,
          tol=angle_tol(40), hint="build the frequencies with device=position_ids.device", id="cuda_float32"),
]

AXIAL_ROPE_COS_SIN = Exercise(
    "axial_rope_cos_sin",
    convention="`(cos, sin)`, each `(N, head_dim)` float32, for (row, column) ids: angles [rθ | cθ], "
               "θ_j = base^(−2j/(d/2)), tables cat(angles, angles); equals Qwen2-VL's vision rotary "
               "embedding",
    checks=AXIAL_ROPE_COS_SIN_CHECKS,
    main=[
        unseen_like(find(AXIAL_ROPE_COS_SIN_CHECKS, AXIAL, "ids_0_16_head_dim_16"),
                    axial(drawn_ids(16, draw_int(4, 12), 2),
                                                                       draw_choice(8, 16, 32)),
                    "(row, column) ids and head_dim drawn for this submission", id="main_tables"),
    ],
    hints=(
        "one frequency ladder over half the head: θ_j = base^(-2j/(d/2)) for j = 0 .. d/4 - 1, shared by the rows "
        "and the columns.",
        "each patch has d/2 angles: its row times θ, then its column times θ, [rθ | cθ]; "
        "`position_ids.float()[..., None] * theta` gives (N, 2, d/4), and `angles.flatten(-2)` puts them side by side.",
        "half layout: the tables are the cos and sin of `torch.cat((angles, angles), dim=-1)`, so coordinate j and "
        "coordinate j + d/2 share one angle.",
        "key line: `angles = angles.flatten(-2)`",
    ),
    mistakes={
        "axial_ladder_over_full_head": Mistake(
            "axial_rope_cos_sin",
            "the frequencies were taken over the whole head, base^(-2j/d): Qwen2-VL builds its ladder over half the "
            "head, θ_j = base^(-2j/(d/2)) for j < d/4, shared by rows and columns",
            hints=(
                "each axis gets half the head, so the ladder of frequencies is built over d/2 dimensions: d/4 "
                "frequencies that fall from 1 to about 1/base, shared by rows and columns.",
                "the frequencies `theta`: exponents 0, 2, 4, ... below `half = head_dim // 2`, divided by half, not by "
                "head_dim.",
                "key line: `theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, "
                "device=position_ids.device) / half)`",
            ),
            wrong="theta = (1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                  "device=position_ids.device) / head_dim))[: head_dim // 4]",
        ),
        "axial_rows_then_columns": Mistake(
            "axial_rope_cos_sin",
            "the tables are cat(rθ, rθ, cθ, cθ): in the half layout coordinate j pairs with j + d/2, so both must "
            "carry the same angle; build angles = cat(rθ, cθ) (d/2) and then cat(angles, angles)",
            hints=(
                "in the half layout coordinate j turns together with coordinate j + d/2: both halves of the table must "
                "hold the same d/2 angles, rows then columns in each.",
                "the tables: the d/2 `angles` ([rθ | cθ]) repeated end to end, once per half.",
                "key line: `emb = torch.cat((angles, angles), dim=-1)`",
            ),
            wrong="emb = torch.cat((angles[:, : head_dim // 4], angles[:, : head_dim // 4], angles[:, head_dim // 4:], "
                  "angles[:, head_dim // 4:]), dim=-1)",
        ),
        "axial_columns_first": Mistake(
            "axial_rope_cos_sin",
            "the columns come first: Qwen2-VL's angles are [rθ | cθ], rows first (a valid 2-D RoPE, but not the layout "
            "its weights use)",
            hints=(
                "either order would be a valid 2-D rotation, but Qwen2-VL's weights were trained with the row angles "
                "first, then the column angles.",
                "where the (N, 2, d/4) `angles` (rows, then columns, as position_ids holds them) become (N, d/2): keep "
                "that order when you flatten.",
                "key line: `angles = angles.flatten(-2)`",
            ),
            wrong="angles = angles.flip(-2).flatten(-2)",
        ),
        "axial_interleaved_tables": Mistake(
            "axial_rope_cos_sin",
            "the tables repeat each angle twice in a row (the interleaved layout); Qwen2-VL uses the half layout, "
            "cat(angles, angles)",
            hints=(
                "Qwen2-VL rotates in the half layout, as chapter 4's rotate_half: coordinate j pairs with j + d/2, not "
                "with its neighbour.",
                "the tables: the d/2 `angles` repeated end to end, not each angle twice in a row.",
                "key line: `emb = torch.cat((angles, angles), dim=-1)`",
            ),
            wrong="emb = angles.repeat_interleave(2, dim=-1)",
        ),
        "axial_row_for_both_axes": Mistake(
            "axial_rope_cos_sin",
            "every plane turns with the row: the column id is never used, so two patches of one row get the same "
            "rotation (a 1-D RoPE over the rows); the second d/4 angles are c·θ, from position_ids[:, 1]",
            hints=(
                "half the planes turn with the row and half with the column: with the row on both halves, the patches "
                "of one row cannot be told apart.",
                "where the angles are computed from `position_ids` (N, 2) and the ladder `theta`: both of its columns, "
                "the row (column 0) and the column (column 1), each times θ.",
                "key line: `angles = position_ids.float()[..., None] * theta`",
            ),
            wrong="angles = position_ids[:, [0, 0]].float()[..., None] * theta",
        ),
        "axial_rows_columns_interleaved": Mistake(
            "axial_rope_cos_sin",
            "the row and column angles alternate, [rθ_0, cθ_0, rθ_1, cθ_1, …]: Qwen2-VL puts the d/4 row angles "
            "first, then the d/4 column angles, [rθ | cθ]",
            hints=(
                "the planes are grouped by axis: the first d/4 planes turn with the row, the next d/4 with the column, "
                "each group running through all d/4 frequencies of the ladder θ.",
                "where the (N, 2, d/4) `angles` (rows, then columns) become (N, d/2): flatten them as they are, the "
                "axis before the frequency, without a transpose.",
                "key line: `angles = angles.flatten(-2)`",
            ),
            wrong="angles = angles.transpose(-1, -2).flatten(-2)",
        ),
        "axial_sin_cos_returned": Mistake(
            "axial_rope_cos_sin",
            "the tables came back as (sin, cos): the function returns (cos, sin), the cosine first, as chapter 4's "
            "rope_cos_sin",
            hints=(
                "the order of the pair is part of the contract: apply_rope takes the cosine table first, then the sine "
                "table.",
                "the last line: the cosine and the sine of the (N, d) angles `emb`, in that order.",
                "key line: `return emb.cos(), emb.sin()`",
            ),
            wrong="return emb.sin(), emb.cos()",
        ),
        "axial_one_ladder_split": Mistake(
            "axial_rope_cos_sin",
            "the rows and the columns turned at different frequencies: one ladder of d/2 frequencies over the whole "
            "head, its fast half for the rows and its slow half for the columns; Qwen2-VL builds one ladder of d/4 "
            "frequencies over half the head, θ_j = base^(-2j/(d/2)), and gives it to the rows and to the columns alike",
            hints=(
                "the two axes are alike: each gets the same d/4 frequencies, a ladder from 1 to about 1/base built "
                "over half the head, not a share of one ladder built over the whole head.",
                "the frequencies `theta`: exponents 0, 2, 4, ... below `half = head_dim // 2`, divided by half, d/4 of "
                "them, multiplied by the row and by the column alike.",
                "key line: `theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, "
                "device=position_ids.device) / half)`",
            ),
            wrong="theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                  "device=position_ids.device) / head_dim)",
            also={"angles = position_ids.float()[..., None] * theta":
                  "angles = position_ids.float()[..., None] * theta.view(2, -1)"},
        ),
    },
)


# ---- check_axial_property ------------------------------------------------------------------------
GOOD, BAD = "axial_alternating_planes", "axial_rows_only"  # public anchors, asked about in every public check
PUBLIC_ACCEPT = {
    "axial_mixed_reversed_partial": "a correct 2-D RoPE with 'mixed' angles -(θx·r + θy·c), ids shifted by (2, 5), "
                                    "the last quarter of the head unrotated",
}
PUBLIC_REJECT = {
    "axial_angle_product": "an absolute-position leak that keeps every length: an extra angle (r·c)/8 · θ",
    "axial_rows_then_columns_halves": "the layout mix of section 8.5: rotate_half with tables cat(rθ, rθ, cθ, cθ)",
    "axial_grows_by_1_05": "a length change: every vector grows by 5% (scores stay relative)",
    "axial_fixed_cell": "a no-op in disguise: every patch rotated as if at (3, 4)",
}
ACCEPT = {
    "axial_qwen2_vl": "Qwen2-VL's vision RoPE (half layout, rows first, base 10000)",
    "axial_columns_on_first_planes": "a correct axial RoPE with the columns on the first planes",
    "axial_interleaved_pairs": "a correct axial RoPE in the interleaved layout",
    "axial_reversed": "a correct axial RoPE that turns the other way (rotate_half with its sign flipped)",
    "axial_partial_half": "a correct axial RoPE on the first half of the head only",
    "axial_shifted_ids": "a correct axial RoPE whose ids are all shifted by (7, 3)",
    "axial_mixed_frequencies": "RoPE-Mixed: every plane turns by θx·r + θy·c (Heo et al., 2024)",
    "axial_float64_base_1000": "a correct axial RoPE computed in float64, base 1000",
}
REJECT = {
    "axial_columns_only": "a rotation by the column alone (rows never told apart)",
    "axial_first_id_only": "the column ids dropped: every patch rotated as if in column 0",
    "axial_identity": "a no-op: x returned unchanged",
    "axial_last_cell_for_all": "a no-op in disguise: the tables of the last patch rotate every patch",
    "axial_rotate_half_no_minus": "a sign error: rotate_half without its minus, cat(x2, x1)",
    "axial_interleaved_tables_half_rotation": "the other layout mix: repeat_interleave tables with rotate_half",
    "axial_rows_clipped_at_8": "an absolute-position leak: rows clipped at 8",
    "axial_quadratic_row": "an absolute-position leak: row angles grow like r + r²/40 (norms kept)",
    "axial_shrinks_by_0_9": "a length change: every vector shrinks by 10%",
    "axial_sin_angle_off": "sin taken at 1.1 times the angle of cos (not a rotation)",
}
ABOUT = {GOOD: "a correct 2-D RoPE with rows on even planes and columns on odd ones (frequencies 2^-i)",
         BAD: "a RoPE that turns every plane with the row only", **PUBLIC_ACCEPT, **PUBLIC_REJECT, **ACCEPT, **REJECT}


CATALOGUE = Catalogue(PROPERTY, "axial_property", "verdicts_2d", GOOD, BAD, ACCEPT, REJECT, ABOUT, "2-D RoPE")
verdict_check = CATALOGUE.verdict_check

CHECK_AXIAL_PROPERTY_CHECKS = [
    verdict_check(GOOD, True, public=True),
    verdict_check(BAD, False, public=True, points=2),
    *[verdict_check(name, True, public=True) for name in PUBLIC_ACCEPT],
    *[verdict_check(name, False, public=True) for name in PUBLIC_REJECT],
    verdict_check("axial_mixed_reversed_partial", True, head_dim=16, public=True),
    verdict_check("axial_fixed_cell", False, head_dim=16, public=True),
    *[verdict_check(name, True, points=2 if name == "axial_qwen2_vl" else 1) for name in ACCEPT],
    *[verdict_check(name, False) for name in REJECT],
    verdict_check("axial_qwen2_vl", True, head_dim=16),
    verdict_check("axial_columns_only", False, head_dim=16),
]

CHECK_AXIAL_PROPERTY = Exercise(
    "check_axial_property",
    convention="a test the learner writes: True when rope_fn(x, position_ids) keeps norms, makes q·k "
               "depend on the displacement (Δrow, Δcolumn) only, and changes along rows and along "
               "columns",
    checks=CHECK_AXIAL_PROPERTY_CHECKS,
    hidden=(*ACCEPT, *REJECT),  # hidden_probes.py: the candidates its hidden checks run the learner's test on
    main=[
        CATALOGUE.main_check(),
    ],
    hints=(
        "chapter 4's test on a grid: put the same random q (and k) on every cell of a grid x grid grid (row-major "
        "(row, column) ids, shape (P, 2)) and call rope_fn once on (V, 1, P, d).",
        "norms: |f(q, a)| = |q| for every cell, to a relative tolerance. Movement: f(q, (r, 0)) must differ from "
        "f(q, (0, 0)) for some r, and f(q, (0, c)) for some c, or one axis is never used.",
        "relative scores: compare every S[a, b] with the score of the same displacement `delta` = b - a from the "
        "cell `start` = (max(0, -Δr), max(0, -Δc)) to `start` + `delta`, relative to |q|·|k|.",
        "key line: `start = (-delta).clamp(min=0)`",
    ),
)


# ---- mrope_position_ids --------------------------------------------------------------------------
IDS_MISTAKES = ("mrope_text_counts_tokens", "mrope_text_after_largest_id", "mrope_padding_counted",
                "mrope_height_width_swapped", "mrope_no_advance_after_image", "mrope_advance_in_patches",
                "mrope_padding_one", "mrope_video_time_constant", "mrope_grid_read_t_w_h", "mrope_walked_column_major",
                "mrope_padding_counted_then_zeroed")
# text, one image of 2 x 2 merged tokens, text: no padding, no video, and 4 tokens = max(H, W) = 4 patches
IDS_ONE_IMAGE_MISTAKES = but(IDS_MISTAKES, "mrope_text_after_largest_id", "mrope_padding_counted", "mrope_padding_one",
                             "mrope_text_counts_tokens", "mrope_advance_in_patches", "mrope_video_time_constant",
                             # and a square image: (T, W, H) is (T, H, W), and walking it by columns is swapping the
                             # ids (three mistakes it cannot tell apart)
                             "mrope_grid_read_t_w_h", "mrope_walked_column_major", "mrope_height_width_swapped",
                             "mrope_padding_counted_then_zeroed")


def prompt(kinds, images=None, videos=None, mask=None, **kwargs):
    kw = dict(kwargs)
    if images is not None:
        kw["image_grid_thw"] = long(images)
    if videos is not None:
        kw["video_grid_thw"] = long(videos)
    if mask is not None:
        kw["attention_mask"] = long(mask)
    return {"args": [long(kinds)], "kwargs": kw}


T, I, V = 0, 1, 2
# text, a 1x4x4 image (4 tokens), text
ONE_IMAGE = [[T, T, I, I, I, I, T, T, T]]
# text, a 1x4x8 image (2 x 4 tokens), text, a 4x2x4 video (4 x 1 x 2 tokens: more time than space), text,
# a 1x2x2 image (1 token), text
SEVERAL = [[T, T, T] + [I] * 8 + [T, T] + [V] * 8 + [T, T] + [I] + [T]]
SEVERAL_IMAGES, SEVERAL_VIDEOS = [[1, 4, 8], [1, 2, 2]], [[4, 2, 4]]
# two rows, the second left-padded by 3: images 1x4x6 (6 tokens) and 1x2x4 (2 tokens)
PADDED = [[T, T, I, I, I, I, I, I, T, T, T], [T, T, T, T, I, I, T, T, T, T, T]]
PADDED_MASK = [[1] * 11, [0, 0, 0] + [1] * 8]


def image_prompts(merge=2):
    """Text, one image of h x w merged tokens (merge·h x merge·w patches), text."""
    extra = {} if merge == 2 else {"spatial_merge_size": merge}
    return [prompt([[T] * a + [I] * (h * w) + [T] * b], images=[[1, merge * h, merge * w]], **extra)
            for a in range(1, 11) for h in range(1, 6) for w in range(1, 6) for b in range(1, 7) if h * w > 1]


def groups_prompt(rows, merge=2):
    """A prompt of rows of groups (several_groups' form), shorter rows left-padded (attention_mask 0)."""
    kinds, images, videos = [], [], []
    for groups in rows:
        row = []
        for g in groups:
            if isinstance(g, int):
                row += [T] * g
            else:
                kind = V if g[0] > 1 else I
                row += [kind] * (g[0] * g[1] * g[2])
                (videos if kind == V else images).append([g[0], merge * g[1], merge * g[2]])
        kinds.append(row)
    n = max(len(r) for r in kinds)
    mask = [[0] * (n - len(r)) + [1] * len(r) for r in kinds]
    return prompt([[T] * (n - len(r)) + r for r in kinds], images=images or None, videos=videos or None,
                  mask=mask if len(kinds) > 1 else None)


def padded_rows():
    """Two rows of text, an image, text, of different lengths (the shorter one left-padded)."""
    rows = [[[a, (1, h1, w1), b], [c, (1, h2, w2), d]]
            for a in (1, 2, 3) for h1, w1 in ((1, 2), (2, 2), (2, 3), (3, 2), (1, 3)) for b in (1, 2, 3)
            for c in (1, 2, 3, 4) for h2, w2 in ((1, 2), (2, 1), (1, 1)) for d in (1, 2, 3)]
    return [r for r in rows if _length(r[0]) != _length(r[1])]


def image_video_rows():
    """An image, text, a video, text; and text, an image, text: two rows of different lengths."""
    rows = [[[(1, h1, w1), a, video, b], [c, (1, h3, w3), d]]
            for h1, w1 in ((1, 2), (2, 2), (2, 1)) for a in (1, 2)
            for video in ((2, 1, 2), (2, 2, 2), (2, 2, 1), (3, 1, 1)) for b in (1, 2)
            for c in range(2, 7) for h3, w3 in ((2, 2), (1, 2)) for d in (1, 2, 3, 4)]
    return [r for r in rows if _length(r[0]) != _length(r[1])]


def _length(groups):
    return sum(g if isinstance(g, int) else g[0] * g[1] * g[2] for g in groups)


def mismatched_prompts():
    """Text, a group of n image tokens whose grid holds h·w != n merged tokens, text."""
    return [prompt([[T] * a + [I] * n + [T] * b], images=[[1, 2 * h, 2 * w]])
            for a in (1, 2, 3, 4) for n in range(1, 9) for h in (1, 2, 3) for w in (1, 2, 3) for b in range(1, 6)
            if h * w != n]


# prompts: text, one image of (2h) x (2w) patches (h·w tokens), text (a shipped one is drawn again)
PROMPTS = image_prompts()

MROPE_POSITION_IDS_CHECKS = [
    Check(IDS, "text, a 1x4x4 image, text", "call_ints", prompt(ONE_IMAGE, images=[[1, 4, 4]]), points=2,
          public=True, mistakes=IDS_ONE_IMAGE_MISTAKES,
          hint="text takes s, s + 1, ... in all three ids; the image's token (t, i, j) takes (s + t, s + i, s + j); "
               "the text after it starts at s + max(H, W)/m", id="text_image_text", twin=draw_among(image_prompts)),
    Check(IDS, "two images and a video with 4 temporal patches (more time than space), between text", "call_ints",
          prompt(SEVERAL, images=SEVERAL_IMAGES, videos=SEVERAL_VIDEOS), points=2, public=True,
          mistakes=but(IDS_MISTAKES, "mrope_padding_counted", "mrope_padding_one",  # no padding
                       "mrope_padding_counted_then_zeroed"),
          hint="a 1x4x8 image is a 2x4 grid of merged tokens (height 2, width 4); after a video, transformers 5.23 "
               "moves on by max(H, W)/m as after an image, whatever T is", id="two_images_video",
          twin=draw_among(lambda: [groups_prompt([g]) for g in several_groups()])),
    Check(IDS, "a batch of two, the second left-padded by 3 (attention_mask)", "call_ints",
          prompt(PADDED, images=[[1, 4, 6], [1, 2, 4]], mask=PADDED_MASK), points=2, public=True,
          mistakes=but(IDS_MISTAKES, "mrope_text_after_largest_id", "mrope_video_time_constant"),  # no video
          hint="compute the ids over the real tokens of each row only; padded entries stay 0. image_grid_thw lists the "
               "images of the whole batch in order, so the second row's first image is the next entry, not the first",
          id="left_padding_batch_2", twin=draw_among(lambda: [groups_prompt(rows) for rows in padded_rows()])),
    Check(IDS, "text only: three equal ids 0 .. L-1", "call_ints", prompt([[T] * 6]), public=True,
          id="text_only",  # token kinds all 0 (text), a batch and length drawn; every known mistake is right here
          twin={"args": [{"t": "randint", "low": 0, "high": 1, "shape": [draw_int(1, 8), draw_int(2, 200)],
                          "seed": SEED}], "kwargs": {}}),
    Check(IDS, "spatial_merge_size=1: every patch is a token", "call_ints",
          prompt([[T, I, I, I, I, I, I, T]], images=[[1, 2, 3]], spatial_merge_size=1), public=True,
          id="merge_size_1", twin=draw_among(lambda: image_prompts(merge=1)),  # an image, no padding; patches: tokens
          mistakes=but(IDS_MISTAKES, "mrope_text_after_largest_id", "mrope_padding_counted", "mrope_padding_one",
                       "mrope_advance_in_patches", "mrope_video_time_constant", "mrope_padding_counted_then_zeroed")),
    Check(IDS, "a group whose length does not match its grid raises ValueError naming grid_thw", "raises_ints",
          prompt([[T, I, I, I, T]], images=[[1, 4, 4]]), expect="raises", mentions=("grid_thw",), public=True,
          id="group_mismatch_raises_valueerror", twin=draw_among(mismatched_prompts)),
    Check(IDS, "an image, a video of 2x4x4 patches and padding, batch of two", "call_ints",
          prompt([[I, I, I, I, T, V, V, V, V, V, V, V, V, T], [T, T, T, T, T, T, I, I, I, I, T, T, T, T]],
                 images=[[1, 4, 4], [1, 4, 4]], videos=[[2, 4, 4]], mask=[[1] * 14, [0] * 4 + [1] * 10]),
          # its video's T = 2 = max(h, w); square grids: (T, W, H) is (T, H, W), a walk by columns swaps the ids
          mistakes=but(IDS_MISTAKES, "mrope_text_after_largest_id", "mrope_grid_read_t_w_h",
                       "mrope_walked_column_major", "mrope_height_width_swapped"),
          id="image_video_padding_hidden",
          twin=draw_among(lambda: [groups_prompt(rows) for rows in image_video_rows()])),
    Check(IDS, "on CUDA", "call_ints", {**prompt(SEVERAL, images=SEVERAL_IMAGES, videos=SEVERAL_VIDEOS),
                                        "device": "cuda"},
          cuda=True, hint="build the ids on token_types.device", id="cuda_int64",
          twin=draw_among(lambda: [{**groups_prompt([g]), "device": "cuda"} for g in several_groups()])),
]

MROPE_POSITION_IDS = Exercise(
    "mrope_position_ids",
    convention="`(3, batch, seq)` ids for tokens of kinds 0 text, 1 image, 2 video; equals Qwen2-VL's "
               "`get_rope_index` in transformers 5.23",
    checks=MROPE_POSITION_IDS_CHECKS,
    main=[
        unseen_like(find(MROPE_POSITION_IDS_CHECKS, IDS, "text_image_text"), draw_choice(*PROMPTS),
                    "text, an image and text drawn for this submission", id="main_prompt_v2"),
    ],
    hints=(
        "walk each row's real tokens group by group (a run of one kind) with a counter s, the next position.",
        "the counter is `start`, and `kinds[i] == 0` marks a text run: a text run of n tokens takes s .. s + n - 1 "
        "in all three ids; a vision run takes the next row of its "
        "grid_thw, (T, H/m, W/m) merged tokens, and token (t, i, j) gets (s + t, s + i, s + j) "
        "(`torch.meshgrid(..., indexing=\"ij\")`).",
        "after a vision run of `h` x `w` merged tokens (h = H/m, w = W/m), `start` moves on by max(h, w); padded "
        "positions (attention_mask 0) are left out and keep 0.",
        "key line: `start += max(h, w)`",
    ),
    mistakes={
        "mrope_text_counts_tokens": Mistake(
            "mrope_position_ids",
            "after an image the text went on by the number of image tokens, as in 1-D positions: M-RoPE moves on by "
            "max(H, W)/m, the extent of the image in its own ids",
            hints=(
                "an image occupies as much of the position axis as its widest side, not as many places as it has "
                "tokens: the text after it moves on by the extent of the image in its own ids.",
                "in the vision branch (not when `kinds[i] == 0`, a text run): after a run of `h` x `w` merged tokens, "
                "where the counter `start` moves on.",
                "key line: `start += max(h, w)`",
            ),
            wrong="start += j - i",
        ),
        "mrope_text_after_largest_id": Mistake(
            "mrope_position_ids",
            "after a video the text started one past the largest id (the temporal one): transformers 5.23 starts it at "
            "s + max(H, W)/m for videos too, whatever T is",
            hints=(
                "transformers moves the text on by the image's spatial extent, for videos too: the number of frames "
                "does not count.",
                "in the vision branch (not when `kinds[i] == 0`, a text run): after a run of `h` x `w` merged tokens "
                "over `t` frames, where the counter `start` moves on: only h and w decide.",
                "key line: `start += max(h, w)`",
            ),
            wrong="start += max(t, h, w)",
        ),
        "mrope_padding_counted": Mistake(
            "mrope_position_ids",
            "the padded positions were counted (as text): compute the ids over the tokens where attention_mask is 1 "
            "only, and leave 0 at the padded ones",
            hints=(
                "padding is not part of the sequence: the ids count the real tokens only, and the padded places keep "
                "0.",
                "for each row `b`, when `attention_mask is not None`: the tokens to walk, `keep`, are those where that "
                "row's mask is 1.",
                "key line: `keep = attention_mask[b].bool()`",
            ),
            wrong="keep = torch.ones(length, dtype=torch.bool, device=token_types.device)",
        ),
        "mrope_height_width_swapped": Mistake(
            "mrope_position_ids",
            "the height and width ids are swapped: in a row-major grid of merged tokens the height id is s + row, the "
            "width id s + column",
            hints=(
                "the three ids are time, height, width, in that order: a token's height id follows its row in the "
                "grid, its width id its column.",
                "in the vision branch (not when `kinds[i] == 0`, a text run), where the run's ids are stacked from the "
                "meshgrid `tt`, `hh`, `ww`, offset by `start` and appended to the row's `pieces`: keep the order time, "
                "height, width.",
                "key line: `pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + start)`",
            ),
            wrong="pieces.append(torch.stack([tt, ww, hh]).reshape(3, -1) + start)",
        ),
        "mrope_walked_column_major": Mistake(
            "mrope_position_ids",
            "the merged tokens were walked column by column: a vision group lists its tokens row by row, frame by "
            "frame, so token k of a frame sits at row k // (W/m) and column k % (W/m)",
            hints=(
                "the tokens of an image come in reading order: the first row of merged tokens from left to right, then "
                "the next row, and a video repeats that for each temporal patch.",
                "in the vision branch (not when `kinds[i] == 0`, a text run), the meshgrid over (t, h, w) with "
                "indexing=\"ij\" gives `tt`, `hh`, `ww` in that order: time outermost, the width innermost.",
                "key line: `tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), "
                "indexing=\"ij\")`",
            ),
            wrong="tt, ww, hh = torch.meshgrid(torch.arange(t), torch.arange(w), torch.arange(h), indexing=\"ij\")",
        ),
        "mrope_padding_counted_then_zeroed": Mistake(
            "mrope_position_ids",
            "the ids were computed over the padding too and the padded entries zeroed afterwards: left padding then "
            "shifts every real token's ids; count only the tokens where attention_mask is 1, so the first real token "
            "of every row starts at 0",
            hints=(
                "padding is not part of the text: a row's first real token takes id 0 however many padded entries come "
                "before it, so the padding must be left out before the counting starts.",
                "the row's token kinds `kinds`, which the loop walks: take them only at the real positions `keep` "
                "(attention_mask[b] as booleans), and write the ids back at those positions alone.",
                "key line: `kinds = token_types[b][keep].tolist()`",
            ),
            wrong="kinds = token_types[b].tolist()",
            also={"position_ids[:, b, keep] = torch.cat(pieces, dim=1).to(position_ids.device)":
                  "position_ids[:, b] = torch.cat(pieces, dim=1).to(position_ids.device) * keep"},
        ),
        "mrope_grid_read_t_w_h": Mistake(
            "mrope_position_ids",
            "the grid was read as (T, W, H): a row of image_grid_thw is (T, H, W), the height before the width, so the "
            "merged grid has H/m rows of W/m tokens",
            hints=(
                "image_grid_thw and video_grid_thw give each group's size as (time, height, width), in patches: the "
                "height, the number of rows, comes second.",
                "in the vision branch (not when `kinds[i] == 0`, a text run), where the group's row `grid` of the thw "
                "table is read: t from grid[0], h from grid[1] and w from grid[2], the last two divided by "
                "spatial_merge_size.",
                "key line: `t, h, w = grid[0], grid[1] // spatial_merge_size, grid[2] // spatial_merge_size`",
            ),
            wrong="t, h, w = grid[0], grid[2] // spatial_merge_size, grid[1] // spatial_merge_size",
        ),
        "mrope_video_time_constant": Mistake(
            "mrope_position_ids",
            "every token of the video has the time id s: temporal patch t of a video group takes s + t, so the time id "
            "grows from one temporal patch to the next (an image, with T = 1, keeps s)",
            hints=(
                "a video is a stack of T grids in time: all tokens of temporal patch t share one time id, and it "
                "grows by one from each temporal patch to the next.",
                "in the vision branch (not when `kinds[i] == 0`, a text run): the group's ids, appended to `pieces`, "
                "take the meshgrid's time index `tt` in their first row, beside `hh` and `ww`, all shifted by `start`.",
                "key line: `pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + start)`",
            ),
            wrong="pieces.append(torch.stack([torch.zeros_like(tt), hh, ww]).reshape(3, -1) + start)",
        ),
        "mrope_no_advance_after_image": Mistake(
            "mrope_position_ids",
            "the text after an image (or a video) starts where the image started: after a vision group the counter "
            "moves on by its spatial extent, to s + max(H, W)/m, so the text comes after the image's ids",
            hints=(
                "a vision group takes room on the position axis too: after it, the next text token starts past the "
                "image's height and width ids, not at the image's own start.",
                "in the vision branch (not when `kinds[i] == 0`, a text run): after a run of `h` x `w` merged tokens, "
                "the counter `start` must move on, as it does after text.",
                "key line: `start += max(h, w)`",
            ),
            wrong="pass",
        ),
        "mrope_advance_in_patches": Mistake(
            "mrope_position_ids",
            "after an image the text moved on by max(H, W) in patches: the ids count merged tokens, so it moves on by "
            "max(H, W)/m, with m = spatial_merge_size",
            hints=(
                "the grid of a vision group is counted in merged tokens (m x m patches make one token), and so is its "
                "extent on the position axis.",
                "in the vision branch (not when `kinds[i] == 0`, a text run): `h` and `w` are the grid's sides divided "
                "by spatial_merge_size; the counter `start` moves on by the larger of those, not of the patch counts "
                "in `grid`.",
                "key line: `start += max(h, w)`",
            ),
            wrong="start += max(grid[1], grid[2])",
        ),
        "mrope_padding_one": Mistake(
            "mrope_position_ids",
            "the padded positions hold 1 (transformers 4.x padded with 1): transformers 5.23 leaves 0 in all three ids "
            "wherever attention_mask is 0",
            hints=(
                "padding takes no place in the sequence, and transformers 5.23 marks it with 0 in all three ids.",
                "where the output `position_ids` (3, B, L) is created, before any row is filled, with `batch, length` "
                "the shape of token_types: the value the padded places keep.",
                "key line: `position_ids = torch.zeros(3, batch, length, dtype=torch.long, device=token_types.device)`",
            ),
            wrong="position_ids = torch.ones(3, batch, length, dtype=torch.long, device=token_types.device)",
        ),
    },
)


# ---- mrope_cos_sin -------------------------------------------------------------------------------
def vision_ids(groups):
    """The (3, 1, L) ids of one row of groups, as mrope_position_ids gives them (text advances all three ids; grid
    token (t, i, j) at s takes (s + t, s + i, s + j), and s then moves on by max(h, w))."""
    ids, s = [[], [], []], 0
    for g in groups:
        if isinstance(g, int):
            for k in range(3):
                ids[k] += range(s, s + g)
            s += g
            continue
        t, h, w = g
        for a in range(t):
            for i in range(h):
                for j in range(w):
                    for k, value in enumerate((s + a, s + i, s + j)):
                        ids[k].append(value)
        s += max(h, w)
    return [[row] for row in ids]


MROPE_MISTAKES = ("mrope_sections_reversed", "mrope_sections_over_full_head", "mrope_time_id_only",
                  "mrope_interleaved_sections", "mrope_interleaved_tables", "mrope_ladder_over_half_head",
                  "mrope_ladder_without_factor_two", "mrope_height_width_swapped_sections",
                  "mrope_sections_restart_ladder", "mrope_ids_height_width_time")
# head sizes with their frequency sections (the three add up to head_dim / 2), for the twins
SECTIONS = [(8, [1, 1, 2]), (8, [2, 1, 1]), (16, [2, 3, 3]), (16, [4, 2, 2]), (32, [4, 6, 6]), (32, [8, 4, 4]),
            (64, [8, 12, 12]), (64, [16, 8, 8])]
# the ids of SEVERAL, written out (3, 1, 25): what mrope_position_ids returns for it
SEVERAL_IDS = [[[0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 7, 8, 9, 9, 10, 10, 11, 11, 12, 12, 11, 12, 13, 14]],
               [[0, 1, 2, 3, 3, 3, 3, 4, 4, 4, 4, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9, 11, 12, 13, 14]],
               [[0, 1, 2, 3, 4, 5, 6, 3, 4, 5, 6, 7, 8, 9, 10, 9, 10, 9, 10, 9, 10, 11, 12, 13, 14]]]


def mrope(ids, head_dim, section, **kwargs):
    return {"args": [ids, head_dim, section], "kwargs": kwargs}


# head sizes with their frequency sections (the three sections add up to head_dim / 2)
HEADS = [(16, [2, 3, 3]), (32, [4, 6, 6]), (32, [8, 4, 4]), (64, [8, 12, 12])]

MROPE_COS_SIN_CHECKS = [
    Check(MROPE, "the ids of two images and a video, head_dim=16, mrope_section=[2, 3, 3]", "call_ints",
          mrope(long(SEVERAL_IDS), 16, [2, 3, 3]), points=2, public=True, mistakes=MROPE_MISTAKES,
          hint="angles of every id with chapter 4's ladder over the whole head, (3, B, L, d/2); the first s_t "
               "frequencies from the time id, the next s_h from the height id, the last s_w from the width id; "
               "tables cat(angles, angles)", id="several_head_dim_16",
          twin=draw_among(lambda: [mrope(long(vision_ids(g)), head_dim, section, base=drawn_base())
                                   for g in several_groups()[::20] for head_dim, section in SECTIONS])),
    Check(MROPE, "Qwen2-VL's head: head_dim=128, mrope_section=[16, 24, 24], ids up to 300", "call",
          mrope({"t": "randint", "low": 0, "high": 300, "shape": [3, 2, 7], "seed": 1}, 128, [16, 24, 24]),
          public=True, mistakes=MROPE_MISTAKES, tol=angle_tol(300), id="qwen2_vl_head_128"),
    Check(MROPE, "text ids (three equal rows) give chapter 4's RoPE tables", "call_ints",
          mrope(long([[[0, 1, 2, 3, 4, 5]]] * 3), 8, [1, 1, 2], base=100.0), public=True,
          mistakes=("mrope_interleaved_tables",),  # equal ids: which id turns which frequency does not matter
          id="text_ids_plain_rope",
          twin=draw_among(lambda: [mrope(long([[list(range(start, start + n))]] * 3), head_dim, section,
                                         base=drawn_base(10.0, 1000.0))
                                   for start in range(10) for n in range(3, 9) for head_dim, section in SECTIONS])),
    Check(MROPE, "a section that does not sum to head_dim // 2 raises ValueError naming mrope_section", "raises",
          mrope(randint(5, 3, 1, 4), 16, [2, 3, 2]), expect="raises", mentions=("mrope_section",), public=True,
          id="section_sum_raises_valueerror"),
    Check(MROPE, "runs on the device of the ids (checked on the meta device)", "meta_call",
          mrope(randint(9, 3, 2, 5), 16, [2, 3, 3]), expect="ok", public=True,
          hint="build the frequencies with device=position_ids.device", id="runs_ids_device_checked_meta"),
    Check(MROPE, "head_dim=64, mrope_section=[8, 12, 12], ids up to 1000", "call",
          mrope({"t": "randint", "low": 0, "high": 1000, "shape": [3, 1, 9], "seed": 2}, 64, [8, 12, 12]),
          mistakes=MROPE_MISTAKES, tol=angle_tol(1000), id="head_dim_64_ids_1000_hidden"),
    Check(MROPE, "on CUDA", "call", {**mrope({"t": "randint", "low": 0, "high": 300, "shape": [3, 2, 7], "seed": 1},
                                             128, [16, 24, 24]), "device": "cuda"},
          cuda=True, tol=angle_tol(300), hint="build the frequencies with device=position_ids.device",
          id="cuda_float32"),
]

MROPE_COS_SIN = Exercise(
    "mrope_cos_sin",
    convention="`(cos, sin)`, each `(batch, seq, head_dim)` float32: frequency block k of `mrope_section` "
               "turns by id k; equals `Qwen2VLRotaryEmbedding`",
    checks=MROPE_COS_SIN_CHECKS,
    main=[
        unseen_like(find(MROPE_COS_SIN_CHECKS, MROPE, "qwen2_vl_head_128"),
                    draw_choice(*[mrope(drawn_ids(50, 3, 2, draw_int(3, 9)), head_dim, section)
                                  for head_dim, section in HEADS]),
                    "ids, head_dim and mrope_section drawn for this submission", id="main_tables", tol=angle_tol(50)),
    ],
    hints=(
        "chapter 4's ladder over the whole head, θ_i = base^(-2i/d), multiplied by each of the three ids: angles "
        "(3, B, L, d/2).",
        "cut the d/2 frequencies into mrope_section's three blocks with `angles.split(list(mrope_section), dim=-1)`; "
        "block k takes its angles from id k (time, height, width).",
        "join the chosen blocks back to (B, L, d/2), then the half layout: cos and sin of "
        "`torch.cat((chosen, chosen), dim=-1)`.",
        "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
    ),
    mistakes={
        "mrope_sections_reversed": Mistake(
            "mrope_cos_sin",
            "the ids are taken in the order width, height, time: the first mrope_section[0] frequencies turn by the "
            "time id, the next mrope_section[1] by the height id, the last by the width id",
            hints=(
                "the first block of frequencies turns by the time id, the second by the height id, the third by the "
                "width id: block k takes id k.",
                "where the chosen angles are gathered from the `blocks` of the split: block k reads the angles of id "
                "k.",
                "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
            ),
            wrong="chosen = torch.cat([block[2 - k] for k, block in enumerate(blocks)], dim=-1)",
        ),
        "mrope_ladder_over_half_head": Mistake(
            "mrope_cos_sin",
            "the frequencies fall twice as fast, θ_i = base^(-2i/(d/2)): that is the vision tower's ladder over half "
            "the head (exercise 8.3); the language model's M-RoPE keeps chapter 4's ladder over the whole head, "
            "θ_i = base^(-2i/d)",
            hints=(
                "M-RoPE changes which id turns each frequency, not the frequencies: the ladder is chapter 4's, d/2 "
                "frequencies over the whole head.",
                "the ladder `theta`: exponents 0, 2, 4, ... below head_dim, divided by head_dim, not by head_dim // 2.",
                "key line: `theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                "device=position_ids.device) / head_dim)`",
            ),
            wrong="theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                  "device=position_ids.device) / (head_dim // 2))",
        ),
        "mrope_ladder_without_factor_two": Mistake(
            "mrope_cos_sin",
            "the frequencies fall half as fast, θ_i = base^(-i/d): the exponent of chapter 4's ladder is 2i/d, so the "
            "last frequency is close to 1/base",
            hints=(
                "chapter 4's ladder runs from 1 down to about 1/base over the d/2 frequencies: the exponent of "
                "frequency i is 2i/d.",
                "the ladder `theta`: exponents 0, 2, 4, ... (a step of 2) below head_dim, divided by head_dim.",
                "key line: `theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, "
                "device=position_ids.device) / head_dim)`",
            ),
            wrong="theta = 1.0 / base ** (torch.arange(0, head_dim // 2, dtype=torch.float32, "
                  "device=position_ids.device) / head_dim)",
        ),
        "mrope_sections_restart_ladder": Mistake(
            "mrope_cos_sin",
            "each section starts the ladder again at θ_0: mrope_section cuts the d/2 frequencies into three "
            "consecutive blocks, so the height's block goes on where the time's stopped, θ_(s_t), and the width's "
            "after it",
            hints=(
                "the three sections share one ladder of d/2 frequencies and take consecutive parts of it: together "
                "they cover every frequency once.",
                "the blocks of the angles `angles` (3, B, L, d/2): split the last axis into the section sizes, "
                "consecutive pieces, rather than taking the first n frequencies for each.",
                "key line: `blocks = angles.split(list(mrope_section), dim=-1)`",
            ),
            wrong="blocks = [angles[..., :n] for n in mrope_section]",
        ),
        "mrope_ids_height_width_time": Mistake(
            "mrope_cos_sin",
            "the ids were taken as (height, width, time): position_ids is (time, height, width), and block k of "
            "mrope_section turns by id k, the time first",
            hints=(
                "the three ids come in the order (time, height, width), and so do the three blocks of frequencies: "
                "block k turns by id k.",
                "where the `chosen` angles are assembled from the three `blocks`: block k takes the angles of id k, "
                "`block[k]`, with no reordering.",
                "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
            ),
            wrong="chosen = torch.cat([block[(1, 2, 0)[k]] for k, block in enumerate(blocks)], dim=-1)",
        ),
        "mrope_height_width_swapped_sections": Mistake(
            "mrope_cos_sin",
            "the height and width ids are swapped: the second block of mrope_section turns by the height id "
            "(position_ids[1]) and the third by the width id (position_ids[2])",
            hints=(
                "the three ids come in the order (time, height, width), and so do the three blocks of frequencies: "
                "block k turns by id k.",
                "where the `chosen` angles are assembled from the three `blocks`: block k takes the angles of id k, "
                "`block[k]`, with no reordering.",
                "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
            ),
            wrong="chosen = torch.cat([block[(0, 2, 1)[k]] for k, block in enumerate(blocks)], dim=-1)",
        ),
        "mrope_sections_over_full_head": Mistake(
            "mrope_cos_sin",
            "the sections were cut out of the full tables cat(angles, angles): cut the d/2 angles by mrope_section "
            "first, then repeat the result, cat(chosen, chosen)",
            hints=(
                "mrope_section cuts the d/2 frequencies, not the d coordinates: choose the ids first, on the d/2 "
                "angles, and only then repeat them for the half layout.",
                "the tables: the d/2 `chosen` angles, already cut by section, repeated end to end.",
                "key line: `emb = torch.cat((chosen, chosen), dim=-1)`",
            ),
            wrong="emb = torch.cat([blk[k] for k, blk in enumerate(torch.cat((angles, angles), dim=-1).split([2 * s "
                  "for s in mrope_section], dim=-1))], dim=-1)",
        ),
        "mrope_time_id_only": Mistake(
            "mrope_cos_sin",
            "every frequency turned by the time id: that is 1-D RoPE; each block of mrope_section takes its own id "
            "(time, height, width)",
            hints=(
                "M-RoPE gives each block of frequencies its own id: with the time id everywhere it is 1-D RoPE, and "
                "the image loses its rows and columns.",
                "where the chosen angles are gathered from the `blocks` of the split: block k reads the angles of id k "
                "(time, height, width).",
                "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
            ),
            wrong="chosen = angles[0]",
        ),
        "mrope_interleaved_sections": Mistake(
            "mrope_cos_sin",
            "the frequencies are interleaved, height on i ≡ 1 and width on i ≡ 2 (mod 3): that is Qwen3-VL's layout; "
            "Qwen2-VL cuts them into three consecutive blocks, the first mrope_section[0] turned by the time id, the "
            "next mrope_section[1] by the height id, the last mrope_section[2] by the width id",
            hints=(
                "this exercise follows Qwen2-VL, whose weights were trained with one consecutive block of frequencies "
                "per id; interleaving them is Qwen3-VL's later layout.",
                "where the chosen angles are gathered from the `blocks` of the split by mrope_section: block k, whole, "
                "reads the angles of id k.",
                "key line: `chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)`",
            ),
            wrong="chosen = angles[0].clone()\n"
                  "chosen[..., 1: 3 * mrope_section[1]: 3] = angles[1, ..., 1: 3 * mrope_section[1]: 3]\n"
                  "chosen[..., 2: 3 * mrope_section[2]: 3] = angles[2, ..., 2: 3 * mrope_section[2]: 3]",
        ),
        "mrope_interleaved_tables": Mistake(
            "mrope_cos_sin",
            "the tables repeat each angle twice in a row (the interleaved layout); Qwen2-VL uses the half layout, "
            "cat(chosen, chosen)",
            hints=(
                "Qwen2-VL's language model rotates in the half layout, as chapter 4's rotate_half: coordinate i pairs "
                "with i + d/2, not with its neighbour.",
                "the tables: the d/2 `chosen` angles repeated end to end, not each angle twice in a row.",
                "key line: `emb = torch.cat((chosen, chosen), dim=-1)`",
            ),
            wrong="emb = chosen.repeat_interleave(2, dim=-1)",
        ),
    },
)


EXERCISES = (RESIZE_POSITION_TABLE_2D, SINCOS_2D_TABLE, AXIAL_ROPE_COS_SIN, CHECK_AXIAL_PROPERTY, MROPE_POSITION_IDS,
             MROPE_COS_SIN)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
