"""Chapter 1 checks: sinusoidal_table, shift_matrix, SinusoidalPositionalEncoding."""

from grader.exercise import Exercise, declared
from grader.spec import MAIN, SEED, Check, Mistake, draw_float, draw_int, find, same, unseen_like

# float32 angles p * w lose about p * 6e-8 (course contract): the tolerance grows with the position
POS_TOL = {"per_position": 6e-8}


def drawn_base(lo=100.0, hi=100000.0):
    """A base drawn log-uniformly for each student (a twin's or a main check's)."""
    return draw_float(lo, hi, log=True)


# ---- sinusoidal_table ----------------------------------------------------------------------------
TABLE_MISTAKES = ("table_swapped", "table_i_over_d", "table_concatenated")


def table(seq_len, d_model, **kw):
    return {"args": [seq_len, d_model], "kwargs": kw}


SINUSOIDAL_TABLE_CHECKS = [
    Check("sinusoidal_table", "matches the reference for seq_len=16, d_model=8", "call", table(16, 8),
          public=True, mistakes=TABLE_MISTAKES, tol={**POS_TOL, "max_position": 16},
          id="matches_reference_seq_len_16_d_model_8",
          twin=table(draw_int(5, 16), draw_int(2, 64, step=2), base=drawn_base())),
    Check("sinusoidal_table", "a single position (seq_len=1)", "call", table(1, 4), public=True,
          mistakes=TABLE_MISTAKES, id="single_position_seq_len_1",
          # one row is sin 0, cos 0 whatever the frequencies: the main check asks for the work
          twin=(table(1, draw_int(2, 128, step=2), base=drawn_base()), MAIN)),
    Check("sinusoidal_table", "odd d_model raises ValueError naming it", "raises", table(5, 7),
          expect="raises", mentions=("d_model", "7"), public=True,
          hint="interleaved sin/cos needs an even width: check d_model first",
          id="odd_d_model_raises_valueerror_naming",
          twin={"params": table(draw_int(1, 100), draw_int(1, 255, step=2, name="d")),
                "mentions": ("d_model", same("d"))}),
    Check("sinusoidal_table", "matches the reference for seq_len=50, d_model=64", "call", table(50, 64),
          points=2, mistakes=TABLE_MISTAKES, tol={**POS_TOL, "max_position": 50},
          public=True, id="matches_reference_seq_len_50_d_model_64",
          twin=table(draw_int(17, 50), draw_int(34, 128, step=2), base=drawn_base())),
    Check("sinusoidal_table", "another base (base=100, d_model=6)", "call", table(9, 6, base=100.0),
          mistakes=TABLE_MISTAKES, hint="use the base argument instead of the constant 10000",
          public=True, id="another_base_base_100_d_model_6",
          twin=table(draw_int(3, 9), draw_int(2, 16, step=2), base=drawn_base(2.0, 1000.0))),
    Check("sinusoidal_table", "long tables stay accurate to float32 rounding (seq_len=20000)", "call",
          table(20000, 16), tol={**POS_TOL, "max_position": 20000},
          public=True, id="long_tables_stay_accurate_float32",
          # the case is the length: d_model and the base stay the public ones, where float32 frequencies (as
          # transformers computes them) keep the tolerance (another d_model or base moves float32's rounding of the
          # exponent: correct code failed); the rows run past the 20000 whose answer ships
          twin={"params": table(draw_int(20001, 30000), 16), "tol": {**POS_TOL, "max_position": 30000}}),
    Check("sinusoidal_table", "seq_len=0 raises ValueError naming it", "raises", table(0, 8),
          expect="raises", mentions=("seq_len",), public=True, id="seq_len_0_raises_valueerror_naming",
          twin=table(0, draw_int(2, 256, step=2), base=drawn_base())),
    Check("sinusoidal_table", "d_model=0 raises ValueError naming it", "raises", table(4, 0),
          expect="raises", mentions=("d_model",), public=True, id="d_model_0_raises_valueerror_naming",
          twin=table(draw_int(1, 1000), 0, base=drawn_base())),
]

SINUSOIDAL_TABLE = Exercise(
    "sinusoidal_table",
    convention="`(seq_len, d_model)`: PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i), ω_i = base^(−2i/d)",
    checks=SINUSOIDAL_TABLE_CHECKS,
    main=[
        unseen_like(find(SINUSOIDAL_TABLE_CHECKS, "sinusoidal_table", "matches_reference_seq_len_16_d_model_8"),
                    table(draw_int(5, 48), draw_int(4, 32, step=2), base=drawn_base(1000.0, 100000.0)),
                    "matches the reference for a seq_len and d_model drawn for this submission", id="main_table_v2",
                    tol={**POS_TOL, "max_position": 48}),
    ],
    hints=(
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
    mistakes={
        "table_swapped": Mistake(
            "sinusoidal_table",
            "sin and cos are swapped: even columns 2i take sin(p·w_i), odd columns 2i+1 take cos(p·w_i)",
            hints=(
                "in each pair of columns the sine comes first: column 2i holds sin(p·w_i), column 2i+1 cos(p·w_i).",
                "where you write the angles into the table, `pe` (L, d): the even columns (step 2 from 0) take the "
                "sines.",
                "key line: `pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)`",
            ),
            wrong="pe[:, 0::2], pe[:, 1::2] = torch.cos(angles), torch.sin(angles)",
        ),
        "table_i_over_d": Mistake(
            "sinusoidal_table",
            "the exponent is i/d; it should be 2i/d (w_i = base^(-2i/d), with 2i the even dimension index)",
            hints=(
                "pair i uses the exponent 2i/d, with 2i the index of its even column, so the last pair's frequency is "
                "close to 1/base, not 1/sqrt(base).",
                "the frequencies: the exponents are the even column indices 0, 2, 4, ... divided by d_model.",
                "key line: `inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32, device=device) "
                "/ d_model))`",
            ),
            wrong="inv_freq = 1.0 / (base ** (torch.arange(0, d_model // 2, dtype=torch.float32, device=device) "
                  "/ d_model))",
        ),
        "table_concatenated": Mistake(
            "sinusoidal_table",
            "sin and cos are concatenated (all sines, then all cosines); they should be interleaved: pe[:, 0::2] = "
            "sin, pe[:, 1::2] = cos",
            hints=(
                "the sine and cosine of one frequency sit side by side, in columns 2i and 2i+1: interleaved, not all "
                "sines followed by all cosines.",
                "where you assemble the table: write into the even and the odd columns of one (L, d) tensor, `pe` "
                "(strided slices), instead of concatenating.",
                "key line: `pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)`",
            ),
            wrong="pe = torch.cat((torch.sin(angles), torch.cos(angles)), dim=-1)",
        ),
    },
)


# ---- shift_matrix --------------------------------------------------------------------------------
def shifts_twin(k, bases=(100.0, 100000.0)):
    """A `shifts_sinusoids` check's twin: M_k PE[p] = PE[p+k] for k drawn from `k` (lo, hi), an even d_model and a
    base drawn for each student (the property is told the same k, d_model and base)."""
    params = {"args": [draw_int(*k, name="k"), draw_int(4, 64, step=2, name="d")],
              "kwargs": {"base": draw_float(*bases, log=True, name="b")}}
    return Check("shift_matrix", "M_k PE[p] = PE[p+k] for a k, d_model and base drawn for this student", "call",
                 params, expect="property", property="shifts_sinusoids",
                 property_params={"k": same("k"), "d_model": same("d"), "base": same("b")},
                 mistakes=("shift_backwards",))  # no id: a twin of its own check only, never shared


SHIFT_MATRIX_CHECKS = [
    Check("shift_matrix", "matches the reference for k=3, d_model=8", "call", {"args": [3, 8]},
          public=True, mistakes=("shift_backwards",), tol={**POS_TOL, "max_position": 3},
          id="matches_reference_k_3_d_model_8",
          twin={"args": [draw_int(1, 3), draw_int(2, 64, step=2)], "kwargs": {"base": drawn_base()}}),
    Check("shift_matrix", "M_k PE[p] = PE[p+k] for k=5, d_model=16", "call", {"args": [5, 16]},
          expect="property", property="shifts_sinusoids", property_params={"k": 5, "d_model": 16},
          public=True, mistakes=("shift_backwards",), id="m_k_pe_p_pe_p_k_k_5_d_model_16",
          twin=(shifts_twin((2, 40)),)),
    Check("shift_matrix", "M_k PE[p] = PE[p+k] for a negative shift k=-4, d_model=32", "call",
          {"args": [-4, 32]}, expect="property", property="shifts_sinusoids",
          property_params={"k": -4, "d_model": 32}, mistakes=("shift_backwards",), points=2,
          public=True, id="m_k_pe_p_pe_p_k_negative_shift_k_4_d", twin=(shifts_twin((-40, -1)),)),
    Check("shift_matrix", "M_k PE[p] = PE[p+k] with base=500", "call", {"args": [9, 12], "kwargs": {"base": 500.0}},
          expect="property", property="shifts_sinusoids", property_params={"k": 9, "d_model": 12, "base": 500.0},
          hint="use the base argument in the frequencies", public=True, id="m_k_pe_p_pe_p_k_base_500",
          twin=(shifts_twin((1, 20), (20.0, 5000.0)),)),
    Check("shift_matrix", "M_0 is the identity", "call", {"args": [0, 10]}, public=True, id="m_0_identity",
          twin=({"args": [0, draw_int(2, 128, step=2)], "kwargs": {"base": drawn_base()}}, MAIN)),
    Check("shift_matrix", "M_k is orthogonal (a rotation)", "call", {"args": [11, 24]},
          expect="property", property="orthogonal", public=True, id="m_k_orthogonal_rotation",
          twin={"args": [draw_int(-60, 60), draw_int(2, 64, step=2)], "kwargs": {"base": drawn_base()}}),
    Check("shift_matrix", "matches the reference for k=100, d_model=64", "call", {"args": [100, 64]},
          mistakes=("shift_backwards",), tol={**POS_TOL, "max_position": 100},
          public=True, id="matches_reference_k_100_d_model_64",
          twin={"args": [draw_int(50, 100), draw_int(32, 128, step=2)], "kwargs": {"base": drawn_base()}}),
    Check("shift_matrix", "odd d_model raises ValueError naming it", "raises", {"args": [1, 5]},
          expect="raises", mentions=("d_model",), public=True, id="odd_d_model_raises_valueerror_naming",
          twin={"args": [draw_int(-50, 50), draw_int(1, 255, step=2)]}),
]

SHIFT_MATRIX = Exercise(
    "shift_matrix",
    convention="`(d_model, d_model)`: the block-diagonal rotation M_k with PE[p+k] = M_k PE[p] for every p",
    checks=SHIFT_MATRIX_CHECKS,
    main=[
        unseen_like(find(SHIFT_MATRIX_CHECKS, "shift_matrix", "matches_reference_k_3_d_model_8"),
                    {"args": [draw_int(-20, 20), draw_int(4, 32, step=2)],
                     "kwargs": {"base": drawn_base(1000.0, 100000.0)}},
                    "matches the reference for a k and d_model drawn for this submission", id="main_shift_v2",
                    tol={**POS_TOL, "max_position": 20}),
    ],
    hints=(
        "only the d/2 angles k·w_i are needed: the table's frequencies times k (a negative k works as it is).",
        "write the four entries of every block at once with an index tensor: with `idx = torch.arange(0, d_model, "
        "2)`, `m[idx, idx]`, `m[idx, idx + 1]`, `m[idx + 1, idx]` and `m[idx + 1, idx + 1]` are the four "
        "diagonals of the blocks.",
        "the signs: with the sine first in each pair, R_i(k) = [[cos, sin], [-sin, cos]]; the textbook rotation "
        "[[cos, -sin], [sin, cos]] moves positions backwards.",
        "key line: `m[idx + 1, idx] = -sin`",
    ),
    mistakes={
        "shift_backwards": Mistake(
            "shift_matrix",
            "your matrix shifts by -k: with (sin, cos) pairs the block is [[cos kw, sin kw], [-sin kw, cos kw]] (the "
            "textbook rotation [[cos, -sin], [sin, cos]] turns the other way)",
            hints=(
                "with the sine first in each pair, the shift by +k takes (sin, cos) at p to (sin, cos) at p + k: the "
                "block is [[cos, sin], [-sin, cos]], the transpose of the textbook rotation, which shifts by -k.",
                "the two off-diagonal entries of every block of the matrix `m`, at `idx = torch.arange(0, d_model, "
                "2)`: the sine `sin` goes above the diagonal, `m[idx, idx + 1]`, and minus the sine below it.",
                "key line: `m[idx + 1, idx] = -sin`",
            ),
            wrong="m[idx + 1, idx] = sin",
            also={"m[idx, idx + 1] = sin": "m[idx, idx + 1] = -sin"},
        ),
    },
)


# ---- SinusoidalPositionalEncoding ----------------------------------------------------------------
def randn(*shape, seed=0):
    return {"t": "randn", "shape": list(shape), "seed": seed}


MODULE_MISTAKES = ("module_swapped", "module_i_over_d", "module_concatenated")
MODULE = "SinusoidalPositionalEncoding"


def forward(ctor, x, **fkw):
    return {"ctor_args": ctor[0], "ctor_kwargs": ctor[1], "forward_args": [x], "forward_kwargs": fkw}


SINUSOIDAL_POSITIONAL_ENCODING_CHECKS = [
    Check(MODULE, "x + PE for a batch (2, 10, 16)", "module_forward",
          forward(([16], {"max_len": 50}), randn(2, 10, 16)),
          public=True, mistakes=MODULE_MISTAKES, id="x_pe_batch_2_10_16"),
    Check(MODULE, "no trainable parameters; the table is a buffer", "module_info",
          {"ctor_args": [16], "ctor_kwargs": {"max_len": 32}}, expect="fields",
          fields={"n_trainable": 0, "n_params": 0, "n_buffers": [1, 8]}, public=True,
          hint="store the table with self.register_buffer('pe', table, persistent=False), "
               "not as nn.Parameter or a plain attribute", id="no_trainable_parameters_table_buffer",
          twin={"ctor_args": [draw_int(2, 128, step=2)], "ctor_kwargs": {"max_len": draw_int(1, 512)}}),
    Check(MODULE, "runs on the device of its input (checked on the meta device)", "meta_forward",
          forward(([16], {"max_len": 32}), randn(2, 40, 16)), expect="ok", public=True,
          hint="build positions and tables with device=x.device, and keep the table in a buffer so .to() "
               "moves it", id="runs_device_input_checked_meta_device"),
    Check(MODULE, "sequences longer than max_len still work", "module_forward",
          forward(([16], {"max_len": 8}), randn(1, 20, 16)), points=2, mistakes=MODULE_MISTAKES,
          hint="past max_len compute the missing rows with the formula; slicing a shorter table returns "
               "fewer rows than the input has", public=True, id="sequences_longer_than_max_len_still_work"),
    Check(MODULE, "offset: rows offset .. offset+seq-1", "module_forward",
          forward(([16], {"max_len": 50}), randn(2, 5, 16), offset=7), points=2, mistakes=MODULE_MISTAKES,
          hint="add PE[offset : offset + seq_len], not PE[:seq_len]",
          public=True, id="offset_rows_offset_offset_seq_1"),
    Check(MODULE, "offset that runs past max_len", "module_forward",
          forward(([8], {"max_len": 10}), randn(1, 5, 8), offset=8), mistakes=MODULE_MISTAKES,
          public=True, id="offset_runs_past_max_len"),
    Check(MODULE, "the table follows .to(torch.float64) and the output keeps float64", "module_forward",
          {**forward(([16], {"max_len": 20}), randn(2, 6, 16)), "dtype": "float64"}, mistakes=MODULE_MISTAKES,
          hint="a buffer is cast by .to(dtype); add the table in x's dtype",
          public=True, id="table_follows_torch_float64_output"),
    Check(MODULE, "a float16 input gives a float16 output", "module_forward",
          {**forward(([16], {"max_len": 20}), randn(2, 6, 16)), "input_dtype": "float16"},
          hint="cast the table to x.dtype before adding, so the output keeps the input's dtype",
          public=True, id="float16_input_float16_output"),
    Check(MODULE, "the table follows .to(torch.bfloat16), also past max_len (the CUDA check's dtype, on the CPU)",
          "module_forward", {**forward(([32], {"max_len": 64}), randn(2, 100, 32)), "dtype": "bfloat16"},
          mistakes=MODULE_MISTAKES, hint="add the table in x's dtype; rows past max_len too",
          public=True, id="bfloat16_module_past_max_len_cpu"),
    Check(MODULE, "odd d_model raises ValueError naming it", "raises", {"ctor_args": [15], "ctor_kwargs": {}},
          expect="raises", mentions=("d_model",), public=True, id="odd_d_model_raises_valueerror_naming",
          twin={"ctor_args": [draw_int(1, 255, step=2)], "ctor_kwargs": {"max_len": draw_int(1, 100)}}),
    Check(MODULE, "an input of the wrong width raises ValueError", "raises",
          {"ctor_args": [16], "ctor_kwargs": {"max_len": 8}, "forward_args": [randn(1, 4, 12)]},
          expect="raises", mentions=("d_model",), public=True, id="input_wrong_width_raises_valueerror"),
    *[
        Check(MODULE, f"on CUDA in {dtype}", "module_forward",
              {**forward(([32], {"max_len": 64}), randn(2, 100, 32)), "device": "cuda", "dtype": dtype},
              cuda=True, hint="build positions with device=x.device", id=f"cuda_{dtype}")
        for dtype in ("float32", "float16", "bfloat16")
    ],
]

SINUSOIDAL_POSITIONAL_ENCODING = Exercise(
    "SinusoidalPositionalEncoding",
    convention="x + PE[offset : offset+seq]; no trainable parameters; longer sequences than "
               "`max_len` still work",
    checks=SINUSOIDAL_POSITIONAL_ENCODING_CHECKS,
    main=[
        unseen_like(find(SINUSOIDAL_POSITIONAL_ENCODING_CHECKS, MODULE, "x_pe_batch_2_10_16"),
                    forward(([draw_int(4, 32, step=2, name="d")], {"max_len": 64}),
                            {"t": "randn", "shape": [2, draw_int(3, 40), same("d")], "seed": SEED}),
                    "x + PE for a batch drawn for this submission", id="main_forward"),
    ],
    hints=(
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
    mistakes={
        "module_swapped": Mistake(
            "SinusoidalPositionalEncoding",
            "the table inside the module: sin and cos are swapped: even columns 2i take sin(p·w_i), odd columns 2i+1 "
            "take cos(p·w_i)",
            hints=(
                "the module adds chapter 1's table: in each pair of columns the sine comes first, column 2i holds "
                "sin(p·w_i) and column 2i+1 cos(p·w_i).",
                "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. "
                "If yours is the one called there, its own self-check names the same mistake: fix it there first.",
                "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
            ),
            wrong="self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base).view(max_len, -1, 2).flip(-1)"
                  ".flatten(1), persistent=False)",
        ),
        "module_i_over_d": Mistake(
            "SinusoidalPositionalEncoding",
            "the table inside the module: the exponent is i/d; it should be 2i/d (w_i = base^(-2i/d), with 2i the even "
            "dimension index)",
            hints=(
                "pair i of the module's table uses the exponent 2i/d, with 2i the index of its even column, so the "
                "last pair's frequency is close to 1/base, not 1/sqrt(base).",
                "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. "
                "If yours is the one called there, its own self-check names the same mistake: fix it there first.",
                "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
            ),
            wrong="self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base ** 0.5), persistent=False)",
        ),
        "module_concatenated": Mistake(
            "SinusoidalPositionalEncoding",
            "the table inside the module: sin and cos are concatenated (all sines, then all cosines); they should be "
            "interleaved: pe[:, 0::2] = sin, pe[:, 1::2] = cos",
            hints=(
                "in the module's table the sine and cosine of one frequency sit side by side, in columns 2i and 2i+1: "
                "interleaved, not all sines followed by all cosines.",
                "where the module gets its table, the buffer registered in __init__: build it with sinusoidal_table. "
                "If yours is the one called there, its own self-check names the same mistake: fix it there first.",
                "key line: `self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base), persistent=False)`",
            ),
            wrong="self.register_buffer(\"pe\", sinusoidal_table(max_len, d_model, base).view(max_len, -1, 2)"
                  ".transpose(1, 2).flatten(1), persistent=False)",
        ),
    },
)


EXERCISES = (SINUSOIDAL_TABLE, SHIFT_MATRIX, SINUSOIDAL_POSITIONAL_ENCODING)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
