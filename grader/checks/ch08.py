"""Chapter 8 checks: resize_position_table_2d, sincos_2d_table, axial_rope_cos_sin, check_axial_property,
mrope_position_ids, mrope_cos_sin."""


from grader.checks.mutation import Catalogue
from grader.spec import SEED, Check, draw_choice, draw_int, find, same, unseen_like

RESIZE, SINCOS, AXIAL, PROPERTY, IDS, MROPE = ("resize_position_table_2d", "sincos_2d_table", "axial_rope_cos_sin",
                                               "check_axial_property", "mrope_position_ids", "mrope_cos_sin")


def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


def randint(high, *shape, seed=0):
    return {"t": "randint", "low": 0, "high": high, "shape": list(shape), "seed": seed}


def long(values):
    return {"long": values}


# ---- resize_position_table_2d ---------------------------------------------------------------------
RESIZE_MISTAKES = ("resize2d_class_token_with_grid", "resize2d_column_major", "resize2d_align_corners",
                   "resize2d_size_w_h", "resize2d_no_antialias")


def resize(rows, d, old, new, seed=0, **kwargs):
    return {"args": [randn(rows, d, seed=seed), list(old), list(new)], "kwargs": kwargs}


# ---- sincos_2d_table --------------------------------------------------------------------------------
SINCOS_MISTAKES = ("sincos2d_columns_first", "sincos2d_interleaved", "sincos2d_column_major")

# ---- axial_rope_cos_sin -----------------------------------------------------------------------------
AXIAL_MISTAKES = ("axial_ladder_over_full_head", "axial_rows_then_columns", "axial_columns_first",
                  "axial_interleaved_tables")
# Qwen2-VL's order of the patches of a 4 x 6 grid (spatial_merge_size 2: block by block), then a 2 x 2 image
QWEN_IDS = [[0, 0], [0, 1], [1, 0], [1, 1], [0, 2], [0, 3], [1, 2], [1, 3], [0, 4], [0, 5], [1, 4], [1, 5],
            [2, 0], [2, 1], [3, 0], [3, 1], [2, 2], [2, 3], [3, 2], [3, 3], [2, 4], [2, 5], [3, 4], [3, 5],
            [0, 0], [0, 1], [1, 0], [1, 1]]


def axial(ids, head_dim, **kwargs):
    return {"args": [ids, head_dim], "kwargs": kwargs}


# ---- mrope_position_ids -----------------------------------------------------------------------------
IDS_MISTAKES = ("mrope_text_counts_tokens", "mrope_text_after_largest_id", "mrope_padding_counted",
                "mrope_height_width_swapped")


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

# ---- mrope_cos_sin ----------------------------------------------------------------------------------
MROPE_MISTAKES = ("mrope_sections_reversed", "mrope_sections_over_full_head", "mrope_time_id_only")
# the ids of SEVERAL, written out (3, 1, 25): what mrope_position_ids returns for it
SEVERAL_IDS = [[[0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 7, 8, 9, 9, 10, 10, 11, 11, 12, 12, 11, 12, 13, 14]],
               [[0, 1, 2, 3, 3, 3, 3, 4, 4, 4, 4, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9, 11, 12, 13, 14]],
               [[0, 1, 2, 3, 4, 5, 6, 3, 4, 5, 6, 7, 8, 9, 10, 9, 10, 9, 10, 9, 10, 11, 12, 13, 14]]]


def mrope(ids, head_dim, section, **kwargs):
    return {"args": [ids, head_dim, section], "kwargs": kwargs}


# float32 angles: tables at positions p agree with float64 ones to about p * 1e-7
def angle_tol(max_position):
    return {"per_position": 2e-7, "max_position": max_position}


# ---- check_axial_property: candidates and what a correct test answers ---------------------------
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


# docs/conventions.md's row of each exercise, in the order of the table (`python -m grader build` writes the
# table: this description beside the reference's signature)
CONVENTIONS = {
    "resize_position_table_2d": ("`(P + H·W, d)` → `(P + H'·W', d)`: prefix rows kept, the grid resized as a `(1, "
                                 "d, H, W)` image with `F.interpolate(align_corners=False)` in float32; equals "
                                 "timm's `resample_abs_pos_embed`"),
    "sincos_2d_table": ("`(H·W, d)` float32: [sin(rω) | cos(rω) | sin(cω) | cos(cω)], ω_i = base^(−i/(d/4)); "
                        "equals transformers' `build_2d_sinusoidal_position_embedding` (MAE, He et al., 2022)"),
    "axial_rope_cos_sin": ("`(cos, sin)`, each `(N, head_dim)` float32, for (row, column) ids: angles [rθ | cθ], "
                           "θ_j = base^(−2j/(d/2)), tables cat(angles, angles); equals Qwen2-VL's vision rotary "
                           "embedding"),
    "check_axial_property": ("a test the learner writes: True when rope_fn(x, position_ids) keeps norms, makes q·k "
                             "depend on the displacement (Δrow, Δcolumn) only, and changes along rows and along "
                             "columns"),
    "mrope_position_ids": ("`(3, batch, seq)` ids for tokens of kinds 0 text, 1 image, 2 video; equals Qwen2-VL's "
                           "`get_rope_index` in transformers 5.23"),
    "mrope_cos_sin": ("`(cos, sin)`, each `(batch, seq, head_dim)` float32: frequency block k of `mrope_section` "
                      "turns by id k; equals `Qwen2VLRotaryEmbedding`"),
}

CHECKS = [
    # ---- resize_position_table_2d -----------------------------------------------------------------------
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
          resize(15, 4, (5, 3), (8, 4), seed=2, num_prefix_tokens=0), public=True, mistakes=RESIZE_MISTAKES,
          id="no_prefix_5x3_8x4"),
    Check(RESIZE, "two prefix rows (DeiT: class and distillation tokens), 6x6 to 9x9", "call",
          resize(2 + 36, 8, (6, 6), (9, 9), seed=3, num_prefix_tokens=2), public=True, mistakes=RESIZE_MISTAKES,
          hint="the first num_prefix_tokens rows are kept as they are, in front of the resized grid",
          id="two_prefix_rows_6x6_9x9"),
    Check(RESIZE, "bilinear without antialiasing, 6x4 to 3x7", "call",
          resize(1 + 24, 4, (6, 4), (3, 7), seed=4, mode="bilinear", antialias=False), public=True,
          hint="pass mode and antialias on to F.interpolate", id="bilinear_no_antialias_6x4_3x7"),
    Check(RESIZE, "the same grid gives the table back", "call", resize(1 + 20, 4, (4, 5), (4, 5), seed=5),
          public=True, mistakes=RESIZE_MISTAKES, id="same_grid_table_back"),
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
          resize(1 + 196, 64, (14, 14), (24, 24), seed=7), mistakes=RESIZE_MISTAKES, id="vit_14x14_24x24_hidden"),
] + [
    Check(RESIZE, f"on CUDA in {dtype}", "call", {**resize(1 + 196, 64, (14, 14), (24, 24)), "device": "cuda",
                                                  "dtype": dtype},
          cuda=True, hint="keep everything on table.device", id=f"cuda_{dtype}")
    for dtype in ("float32", "bfloat16")
] + [
    # ---- sincos_2d_table -----------------------------------------------------------------------------------
    Check(SINCOS, "a 4x6 grid, d_model=16", "call", {"args": [4, 6, 16]}, points=2, public=True,
          mistakes=SINCOS_MISTAKES, id="grid_4x6_d_16"),
    Check(SINCOS, "a 14x14 grid, d_model=64 (MAE's grid)", "call", {"args": [14, 14, 64]}, public=True,
          mistakes=SINCOS_MISTAKES, id="grid_14x14_d_64"),
    Check(SINCOS, "a single row (1x7), d_model=8", "call", {"args": [1, 7, 8]}, public=True, mistakes=SINCOS_MISTAKES,
          hint="with one row, every row angle is 0: the row blocks hold sin 0 = 0 and cos 0 = 1",
          id="single_row_1x7_d_8"),
    Check(SINCOS, "another base (3x5, d_model=32, base=100)", "call", {"args": [3, 5, 32], "kwargs": {"base": 100.0}},
          public=True, mistakes=SINCOS_MISTAKES, id="base_100_3x5_d_32"),
    Check(SINCOS, "d_model=6 raises ValueError naming it", "raises", {"args": [4, 4, 6]}, expect="raises",
          mentions=("d_model",), public=True, id="d_model_6_raises_valueerror"),
    Check(SINCOS, "grid_h=0 raises ValueError naming it", "raises", {"args": [0, 4, 8]}, expect="raises",
          mentions=("grid_h",), public=True, id="grid_h_0_raises_valueerror"),
    Check(SINCOS, "builds on the device it is given (checked on the meta device)", "meta_call",
          {"args": [4, 4, 16], "kwargs": {"device": "meta"}}, expect="ok", public=True,
          hint="create every tensor with device=device", id="builds_device_checked_meta"),
    Check(SINCOS, "a 24x16 grid, d_model=128", "call", {"args": [24, 16, 128]}, mistakes=SINCOS_MISTAKES,
          id="grid_24x16_d_128_hidden"),
] + [
    # ---- axial_rope_cos_sin --------------------------------------------------------------------------------
    Check(AXIAL, "(row, column) ids in [0, 16), head_dim=16", "call", axial(randint(16, 10, 2), 16), points=2,
          public=True, mistakes=AXIAL_MISTAKES,
          hint="θ_j = base^(-2j/(d/2)) over half the head; angles [r·θ | c·θ] (d/2), tables cat(angles, angles)",
          id="ids_0_16_head_dim_16"),
    Check(AXIAL, "Qwen2-VL's patch order (2x2 blocks) for a 4x6 and a 2x2 grid, head_dim=32", "call_ints",
          axial(long(QWEN_IDS), 32), public=True, mistakes=AXIAL_MISTAKES, id="qwen_order_head_dim_32"),
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
    # ---- check_axial_property (graded by mutation) ------------------------------------------------------
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
    # ---- mrope_position_ids ------------------------------------------------------------------------------
    Check(IDS, "text, a 1x4x4 image, text", "call_ints", prompt(ONE_IMAGE, images=[[1, 4, 4]]), points=2,
          public=True, mistakes=IDS_MISTAKES,
          hint="text takes s, s + 1, ... in all three ids; the image's token (t, i, j) takes (s + t, s + i, s + j); "
               "the text after it starts at s + max(H, W)/m", id="text_image_text"),
    Check(IDS, "two images and a video with 4 temporal patches (more time than space), between text", "call_ints",
          prompt(SEVERAL, images=SEVERAL_IMAGES, videos=SEVERAL_VIDEOS), points=2, public=True,
          mistakes=IDS_MISTAKES,
          hint="a 1x4x8 image is a 2x4 grid of merged tokens (height 2, width 4); after a video, transformers 5.23 "
               "moves on by max(H, W)/m as after an image, whatever T is", id="two_images_video"),
    Check(IDS, "a batch of two, the second left-padded by 3 (attention_mask)", "call_ints",
          prompt(PADDED, images=[[1, 4, 6], [1, 2, 4]], mask=PADDED_MASK), points=2, public=True,
          mistakes=IDS_MISTAKES, hint="compute the ids over the real tokens of each row only; padded entries stay 0",
          id="left_padding_batch_2"),
    Check(IDS, "text only: three equal ids 0 .. L-1", "call_ints", prompt([[T] * 6]), public=True,
          mistakes=IDS_MISTAKES, id="text_only"),
    Check(IDS, "spatial_merge_size=1: every patch is a token", "call_ints",
          prompt([[T, I, I, I, I, I, I, T]], images=[[1, 2, 3]], spatial_merge_size=1), public=True,
          mistakes=IDS_MISTAKES, id="merge_size_1"),
    Check(IDS, "a group whose length does not match its grid raises ValueError naming grid_thw", "raises_ints",
          prompt([[T, I, I, I, T]], images=[[1, 4, 4]]), expect="raises", mentions=("grid_thw",), public=True,
          id="group_mismatch_raises_valueerror"),
    Check(IDS, "an image, a video of 2x4x4 patches and padding, batch of two", "call_ints",
          prompt([[I, I, I, I, T, V, V, V, V, V, V, V, V, T], [T, T, T, T, T, T, I, I, I, I, T, T, T, T]],
                 images=[[1, 4, 4], [1, 4, 4]], videos=[[2, 4, 4]], mask=[[1] * 14, [0] * 4 + [1] * 10]),
          mistakes=IDS_MISTAKES, id="image_video_padding_hidden"),
    Check(IDS, "on CUDA", "call_ints", {**prompt(SEVERAL, images=SEVERAL_IMAGES, videos=SEVERAL_VIDEOS),
                                        "device": "cuda"},
          cuda=True, hint="build the ids on token_types.device", id="cuda_int64"),
    # ---- mrope_cos_sin -----------------------------------------------------------------------------------
    Check(MROPE, "the ids of two images and a video, head_dim=16, mrope_section=[2, 3, 3]", "call_ints",
          mrope(long(SEVERAL_IDS), 16, [2, 3, 3]), points=2, public=True, mistakes=MROPE_MISTAKES,
          hint="angles of every id with chapter 4's ladder over the whole head, (3, B, L, d/2); the first s_t "
               "frequencies from the time id, the next s_h from the height id, the last s_w from the width id; "
               "tables cat(angles, angles)", id="several_head_dim_16"),
    Check(MROPE, "Qwen2-VL's head: head_dim=128, mrope_section=[16, 24, 24], ids up to 300", "call",
          mrope({"t": "randint", "low": 0, "high": 300, "shape": [3, 2, 7], "seed": 1}, 128, [16, 24, 24]),
          public=True, mistakes=MROPE_MISTAKES, tol=angle_tol(300), id="qwen2_vl_head_128"),
    Check(MROPE, "text ids (three equal rows) give chapter 4's RoPE tables", "call_ints",
          mrope(long([[[0, 1, 2, 3, 4, 5]]] * 3), 8, [1, 1, 2], base=100.0), public=True,
          mistakes=MROPE_MISTAKES, id="text_ids_plain_rope"),
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


# ---- main checks: inputs drawn for each submission (grader/unseen.py) ---------------------------------
def drawn(*shape):
    return {"t": "randn", "shape": list(shape), "seed": SEED}


def drawn_ids(high, *shape):
    return {"t": "randint", "low": 0, "high": high, "shape": list(shape), "seed": SEED}


# prompts the release has never shown: text, one image of (2h) x (2w) patches (h·w tokens), text
PROMPTS = [prompt([[T] * before + [I] * (h * w) + [T] * after], images=[[1, 2 * h, 2 * w]])
           for before in (1, 2, 3) for h in (1, 2, 3) for w in (1, 2, 3) for after in (1, 2) if h * w > 1]
# head sizes with their frequency sections (the three sections add up to head_dim / 2)
HEADS = [(16, [2, 3, 3]), (32, [4, 6, 6]), (32, [8, 4, 4]), (64, [8, 12, 12])]
CHECKS += [
    unseen_like(find(CHECKS, RESIZE, "grow_4x6_class_token_7x9"),
                {"args": [drawn(same("w", times=4, plus=1), draw_choice(4, 6, 8)), [4, draw_int(3, 5, name="w")],
                          [draw_int(5, 8), draw_int(5, 9)]], "kwargs": {}},
                "grow a 4 x W grid with a class token, sizes drawn for this submission", id="main_grow"),
    unseen_like(find(CHECKS, SINCOS, "grid_4x6_d_16"),
                {"args": [draw_int(2, 9), draw_int(2, 9), draw_choice(8, 16, 32)]},
                "a grid and d_model drawn for this submission", id="main_grid"),
    unseen_like(find(CHECKS, AXIAL, "ids_0_16_head_dim_16"), axial(drawn_ids(16, draw_int(4, 12), 2),
                                                                   draw_choice(8, 16, 32)),
                "(row, column) ids and head_dim drawn for this submission", id="main_tables"),
    CATALOGUE.main_check(),
    unseen_like(find(CHECKS, IDS, "text_image_text"), draw_choice(*PROMPTS),
                "text, an image and text drawn for this submission", id="main_prompt"),
    unseen_like(find(CHECKS, MROPE, "qwen2_vl_head_128"),
                draw_choice(*[mrope(drawn_ids(50, 3, 2, draw_int(3, 9)), head_dim, section)
                              for head_dim, section in HEADS]),
                "ids, head_dim and mrope_section drawn for this submission", id="main_tables", tol=angle_tol(50)),
]
