"""Chapter 6 checks: RotaryCache."""

from grader.exercise import Exercise, declared
from grader.spec import Check, Mistake, draw_float, draw_int, find, same, unseen_like

# ---- RotaryCache ---------------------------------------------------------------------------------
EX = "RotaryCache"
ALL = ("cache_interleaved", "cache_not_grown", "cache_low_precision_angles")
# float32 angles p * theta lose about p * 6e-8 per rounding (course contract), and two correct float32 tables round
# theta and the product each their own way: the complete example (theta by pow, cos and sin by torch.polar) erred by
# up to 1.5 times p * 6e-8 against the reference over 1,000 drawn inputs; p * 2e-7, as chapters 7 and 8 allow, keeps
# it under half of that (tests/test_rounding_fairness.py). The tolerance grows with the position
POS_TOL = {"per_position": 2e-7}


def arange(end, start=0, shape=None):
    spec = {"t": "arange", "start": start, "end": end}
    if shape is not None:
        spec["shape"] = list(shape)
    return spec


def forward(head_dim, positions, **ctor_kwargs):
    return {"ctor_args": [head_dim], "ctor_kwargs": ctor_kwargs, "forward_args": [positions]}


def even(lo, hi, name=None):
    """An even head_dim in [lo, hi], drawn for each student."""
    return draw_int(lo, hi, step=2, name=name)


def drawn_base(lo=1000.0, hi=1000000.0):
    """A base drawn log-uniformly for each student (a twin's or a main check's)."""
    return draw_float(lo, hi, log=True)


ROTARY_CACHE_CHECKS = [
    Check(EX, "position_ids (6,), head_dim=8: cos/sin (6, 8) equal rope_cos_sin", "module_forward",
          forward(8, arange(6), max_len=16), public=True, mistakes=ALL, tol={**POS_TOL, "max_position": 6},
          hint="tables in the half layout cat(freqs, freqs), float32 angles p * theta_i, indexed by position_ids",
          id="position_ids_6_head_dim_8_cos_sin_6_8",
          twin=forward(even(2, 64), arange(draw_int(2, 6)), max_len=draw_int(8, 64), base=drawn_base())),
    Check(EX, "position_ids (batch, seq) = (2, 5), head_dim=16, base=500000", "module_forward",
          forward(16, {"t": "randint", "low": 0, "high": 30, "shape": [2, 5], "seed": 3}, base=500000.0, max_len=32),
          points=2, mistakes=ALL, tol={**POS_TOL, "max_position": 30},
          hint="index the tables with position_ids as they are: cos_cached[position_ids] has shape "
               "position_ids.shape + (head_dim,)", public=True, id="position_ids_batch_seq_2_5_head_dim_16"),
    Check(EX, "positions past max_len grow the cache (max_len=8, positions 0..39)", "module_forward",
          forward(8, arange(40), max_len=8), public=True, points=2, mistakes=ALL, tol={**POS_TOL, "max_position": 40},
          hint="when a position reaches max_len, recompute longer tables (on the buffers' device) before indexing",
          id="positions_past_max_len_grow_cache_max",
          twin=forward(even(2, 64), arange(draw_int(20, 40)), max_len=draw_int(2, 16), base=drawn_base())),
    Check(EX, "a position exactly at max_len (decoding one step past the cache)", "module_forward",
          forward(16, arange(17, start=16, shape=[1, 1]), max_len=16), mistakes=ALL,
          tol={**POS_TOL, "max_position": 17},
          hint="position max_len - 1 is the last row: max_len itself already needs a longer table",
          public=True, id="position_exactly_max_len_decoding_one",
          twin=forward(even(2, 64), arange(same("m", plus=1), start=same("m"), shape=[1, 1]),
                       max_len=draw_int(2, 16, name="m"), base=drawn_base())),
    Check(EX, "dtype=torch.float16 requested: angles in float32, rows cast", "module_forward_dtype",
          {**forward(32, arange(100), max_len=128), "out_dtype": "float16"}, points=2, mistakes=ALL,
          hint="compute the angles in float32 and cast cos/sin to the requested dtype; float16 angles lose "
               "about 0.03 rad at position 100", public=True, id="dtype_torch_float16_requested_angles",
          twin={**forward(even(16, 64), arange(draw_int(50, 100)), max_len=draw_int(64, 256), base=drawn_base()),
                "out_dtype": "float16"}),
    Check(EX, "dtype=torch.float64 requested", "module_forward_dtype",
          {**forward(16, arange(300), max_len=512), "out_dtype": "float64"}, mistakes=ALL,
          tol={"atol": 1e-6, **POS_TOL, "max_position": 300},
          hint="return cos/sin in the dtype asked for (the cached rows .to(dtype))",
          public=True, id="dtype_torch_float64_requested",
          twin={**forward(even(8, 64), arange(draw_int(100, 300)), max_len=draw_int(128, 512), base=drawn_base()),
                "out_dtype": "float64"}),
    Check(EX, "default dtype is float32", "module_forward", forward(8, arange(5), max_len=8), mistakes=ALL,
          hint="with dtype=None return float32 tables", public=True, id="default_dtype_float32",
          twin=forward(even(2, 64), arange(draw_int(2, 8)), max_len=draw_int(8, 32), base=drawn_base())),
    Check(EX, "no trainable parameters; the tables are non-persistent buffers", "module_state",
          {"ctor_args": [16], "ctor_kwargs": {"max_len": 32}}, expect="fields", public=True,
          fields={"n_trainable": 0, "n_params": 0, "n_buffers": [1, 8], "n_state_dict": 0},
          hint="store the tables with self.register_buffer('cos_cached', table, persistent=False), not as "
               "nn.Parameter or plain attributes", id="no_trainable_parameters_tables_non",
          twin={"ctor_args": [even(2, 128)], "ctor_kwargs": {"max_len": draw_int(1, 4096), "base": drawn_base()}}),
    Check(EX, "runs on the device of its buffers (checked on the meta device)", "meta_forward",
          forward(16, arange(12), max_len=32), expect="ok",
          hint="keep the tables in buffers so .to() moves them, and build any new table on "
               "self.<buffer>.device", public=True, id="runs_device_buffers_checked_meta_device",
          twin=forward(even(2, 64), arange(draw_int(2, 30)), max_len=draw_int(32, 64), base=drawn_base())),
    # values read on meta are real here (MetaDevice keeps CPU shadows), so max(position_ids) = 39 takes the
    # growth path, where a table rebuilt on the default CPU meets the meta buffers
    Check(EX, "grows its tables on the device of its buffers (positions past max_len, on the meta device)",
          "meta_forward", forward(16, arange(40), max_len=8), expect="ok",
          hint="build the longer tables on self.cos_cached.device (where the buffers live), not on the default "
               "CPU", public=True, id="grows_device_buffers_checked_meta",
          twin=forward(even(2, 64), arange(draw_int(20, 60)), max_len=draw_int(2, 16), base=drawn_base())),
    Check(EX, "odd head_dim raises ValueError naming it", "raises", {"ctor_args": [7], "ctor_kwargs": {}},
          expect="raises", mentions=("head_dim", "7"),
          hint="the half layout needs an even head_dim: check it in __init__",
          public=True, id="odd_head_dim_raises_valueerror_naming",
          twin={"params": {"ctor_args": [draw_int(1, 255, step=2, name="d")], "ctor_kwargs": {"base": drawn_base()}},
                "mentions": ("head_dim", same("d"))}),
    Check(EX, "negative position_ids raise ValueError naming them", "raises",
          forward(8, arange(3, start=-2), max_len=16), expect="raises", mentions=("position_ids",),
          hint="a negative index would silently read the table from its end: check position_ids.min()",
          public=True, id="negative_position_ids_raise_valueerror",
          twin=forward(even(2, 64), arange(draw_int(1, 20), start=draw_int(-20, -1)), max_len=draw_int(8, 64))),
    Check(EX, "max_len=0 raises ValueError naming it", "raises", {"ctor_args": [8], "ctor_kwargs": {"max_len": 0}},
          expect="raises", mentions=("max_len",), public=True, id="max_len_0_raises_valueerror_naming",
          twin={"ctor_args": [even(2, 128)], "ctor_kwargs": {"max_len": 0, "base": drawn_base()}}),
    Check(EX, "on CUDA: tables on the GPU, float16 on request", "module_forward_dtype",
          {**forward(32, arange(300), max_len=128), "device": "cuda", "out_dtype": "float16"}, cuda=True,
          hint="grow the tables on self.cos_cached.device", id="cuda_tables_gpu_float16_request",
          twin={**forward(even(16, 64), arange(draw_int(150, 300)), max_len=draw_int(64, 128), base=drawn_base()),
                "device": "cuda", "out_dtype": "float16"}),
]

ROTARY_CACHE = Exercise(
    "RotaryCache",
    convention="`(cos, sin)` rows looked up from float32 tables kept as buffers, grown when a position "
               "reaches `max_len`; rows cast to `dtype` (float32 by default)",
    checks=ROTARY_CACHE_CHECKS,
    main=[
        unseen_like(find(ROTARY_CACHE_CHECKS, EX, "position_ids_6_head_dim_8_cos_sin_6_8"),
                    forward(draw_int(2, 32, step=2), arange(draw_int(2, 16)), max_len=16, base=drawn_base()),
                    "tables for positions and a head_dim drawn for this submission", id="main_tables_v2",
                    tol={**POS_TOL, "max_position": 16}),
        unseen_like(find(ROTARY_CACHE_CHECKS, EX, "positions_past_max_len_grow_cache_max"),
                    forward(draw_int(2, 32, step=2), arange(draw_int(20, 60)), max_len=8, base=drawn_base()),
                    "positions past max_len, drawn for this submission", id="main_grow_v2",
                    tol={**POS_TOL, "max_position": 60}),
    ],
    hints=(
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
    mistakes={
        "cache_interleaved": Mistake(
            "RotaryCache",
            "the tables are interleaved (repeat_interleave: t0, t0, t1, t1, ...); RoPE's half layout repeats the "
            "angles end to end: torch.cat((freqs, freqs), dim=-1)",
            hints=(
                "apply_rope pairs coordinate i with coordinate i + d/2, so both must carry the same angle: the tables "
                "hold the d/2 angles once for each half, end to end, not each angle twice side by side.",
                "in _build, where the angles `freqs` (length, d/2) become the (length, d) tables: join two copies of "
                "`freqs` on the last axis; `repeat_interleave` builds the interleaved layout instead.",
                "key line: `emb = torch.cat((freqs, freqs), dim=-1)`",
            ),
            wrong="emb = freqs.repeat_interleave(2, dim=-1)",
        ),
        "cache_not_grown": Mistake(
            "RotaryCache",
            "the cache is not grown: positions at or past max_len read the wrong rows; when max(position_ids) >= "
            "max_len, recompute longer tables (on the buffers' device) before indexing",
            hints=(
                "a position past the table has no row: clamped to the last row, it gets that row's angles, wrong and "
                "without an error. The table must grow to cover it first.",
                "in forward, when `position_ids.numel() > 0` and the largest position needs `needed = "
                "int(position_ids.max()) + 1` rows: if `needed > self.max_len`, rebuild with _build on the buffers' "
                "device, at least doubling.",
                "key line: `self._build(max(needed, 2 * self.max_len), device=self.cos_cached.device)`",
            ),
            wrong="position_ids = position_ids.clamp(max=self.max_len - 1)",
        ),
        "cache_low_precision_angles": Mistake(
            "RotaryCache",
            "the angles p * theta_i are computed in the requested low-precision dtype; compute them in float32 and "
            "cast cos/sin (the rows) to the requested dtype",
            hints=(
                "angles p·theta need float32: bfloat16 cannot hold every position above 256, and by position 1000 its "
                "angles are off by radians (float16's by tenths of a radian). Compute the angles in float32, cast only "
                "the finished rows.",
                "in forward, after any growth: look the rows up in the float32 tables `self.cos_cached` and "
                "`self.sin_cached` by position, then cast them to `dtype` (float32 by default), instead of computing "
                "angles in that dtype.",
                "key line: `cos = self.cos_cached[position_ids].to(dtype); sin = "
                "self.sin_cached[position_ids].to(dtype)`",
            ),
            wrong="freqs = position_ids[..., None].to(dtype) * (1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, "
                  "dtype=torch.float32, device=position_ids.device) / self.head_dim))).to(dtype)\n"
                  "cos, sin = torch.cat((freqs, freqs), dim=-1).cos(), torch.cat((freqs, freqs), dim=-1).sin()",
        ),
    },
)


EXERCISES = (ROTARY_CACHE,)
# the flat tables every consumer reads (grader/checks/__init__.py), derived from the records
CONVENTIONS, CHECKS, HINTS, MISTAKES = declared(EXERCISES)
