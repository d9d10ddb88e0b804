"""Chapter 8: the resize against timm 1.0.31's resample_abs_pos_embed, bad input, and the 2-D property test on its
catalogue of candidates (tests/test_ch08_transformers.py compares the rest with transformers 5.23.0)."""

import ast
import importlib.util
import math
import pathlib
import typing

import pytest
import torch
import torch.nn.functional as F

import posenc_ref as ref
from grader import hidden_probes
from grader.checks.ch08 import ACCEPT, BAD, GOOD, PUBLIC_ACCEPT, PUBLIC_REJECT, REJECT

F32 = {"rtol": 1.3e-6, "atol": 1e-5}


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


# ---- timm ------------------------------------------------------------------------------------------------
def timm_resample():
    """timm's resample_abs_pos_embed. timm's package import needs torchvision (not a dependency of the course);
    without it, the function is compiled from the installed timm's own source file, decorators left out."""
    if importlib.util.find_spec("timm") is None:
        pytest.skip("timm is not installed (the test extra installs it)")
    try:
        from timm.layers import resample_abs_pos_embed
        return resample_abs_pos_embed
    except Exception:  # ModuleNotFoundError for torchvision, or a torchvision that does not match torch
        path = pathlib.Path(importlib.util.find_spec("timm").origin).parent / "layers" / "pos_embed.py"
        tree = ast.parse(path.read_text())
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "resample_abs_pos_embed")
        fn.decorator_list = []
        ns = {"torch": torch, "F": F, "math": math, "List": typing.List, "Optional": typing.Optional,
              "is_exporting": lambda: False, "_logger": None}
        exec(compile(ast.Module([fn], []), str(path), "exec"), ns)
        return ns["resample_abs_pos_embed"]


@pytest.mark.parametrize("prefix,old,new,mode,antialias,dtype", [
    (1, (4, 6), (7, 9), "bicubic", True, torch.float32),  # grow, not square
    (1, (7, 7), (3, 5), "bicubic", True, torch.float32),  # shrink: antialiasing matters
    (0, (5, 3), (8, 4), "bicubic", True, torch.float32),
    (2, (6, 6), (9, 9), "bicubic", True, torch.float32),  # DeiT: class and distillation tokens
    (1, (6, 4), (3, 7), "bilinear", False, torch.float32),
    (1, (14, 14), (24, 24), "bicubic", True, torch.float32),  # ViT-B/16 at 224 -> 384 pixels
    (1, (4, 4), (6, 5), "bicubic", True, torch.float64),
    (1, (14, 14), (24, 24), "bicubic", True, torch.bfloat16),
    (1, (4, 5), (4, 5), "bicubic", True, torch.float32),  # same grid: timm returns the table itself
])
def test_resize_matches_timm(prefix, old, new, mode, antialias, dtype):
    resample = timm_resample()
    table = randn(prefix + old[0] * old[1], 16, seed=sum(old) + sum(new), dtype=dtype)
    ours = ref.resize_position_table_2d(table, old, new, prefix, mode, antialias)
    theirs = resample(table[None], list(new), list(old), num_prefix_tokens=prefix, interpolation=mode,
                      antialias=antialias)[0]
    assert ours.dtype == dtype and ours.shape == theirs.shape
    torch.testing.assert_close(ours, theirs, **(F32 if dtype != torch.bfloat16 else {"rtol": 0, "atol": 0}))


def test_the_antialiased_bicubic_kernel_is_keys_with_a_minus_half_and_hugging_face_differs_from_timm():
    """The chapter's claims: with antialias=True PyTorch's bicubic weights are Keys' kernel with a = -0.5, without
    it a = -0.75, so Hugging Face's interpolate_pos_encoding (no antialiasing) and timm differ, growing or
    shrinking."""
    def keys(x, a):
        x = abs(x)
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1 if x <= 1 else (a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
                                                                        if x < 2 else 0.0)

    impulse = torch.zeros(1, 1, 1, 8, dtype=torch.float64)
    impulse[..., 4] = 1.0
    sources = [(j + 0.5) / 2 - 0.5 for j in range(16)]  # doubling, align_corners=False
    for antialias, a in ((True, -0.5), (False, -0.75)):
        out = F.interpolate(impulse, size=(1, 16), mode="bicubic", align_corners=False, antialias=antialias)[0, 0, 0]
        want = torch.tensor([keys(s - 4, a) for s in sources], dtype=torch.float64)
        torch.testing.assert_close(out[4:13], want[4:13])  # away from the clamped border
    table = randn(1 + 49, 8, seed=3)

    def hf(new):  # ViTEmbeddings.interpolate_pos_encoding's operation, written out
        grid = table[1:].reshape(1, 7, 7, 8).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, size=new, mode="bicubic", align_corners=False)
        return torch.cat([table[:1], grid.permute(0, 2, 3, 1).reshape(-1, 8)])

    for new in ((12, 12), (4, 4)):
        assert (ref.resize_position_table_2d(table, (7, 7), new) - hf(new)).abs().max() > 1e-2
        torch.testing.assert_close(ref.resize_position_table_2d(table, (7, 7), new, antialias=False), hf(new), **F32)


def test_resize_keeps_the_prefix_rows_and_a_constant_grid():
    table = torch.cat([torch.full((2, 4), 7.0), torch.ones(30, 4) * 0.5])
    out = ref.resize_position_table_2d(table, (5, 6), (9, 2), num_prefix_tokens=2)
    assert out.shape == (2 + 18, 4)
    torch.testing.assert_close(out[:2], table[:2], rtol=0, atol=0)
    torch.testing.assert_close(out[2:], torch.full((18, 4), 0.5), **F32)  # cubic weights sum to 1


@pytest.mark.parametrize("call,word", [
    (lambda: ref.resize_position_table_2d(torch.zeros(10, 4), (3, 3), (4, 4), 2), "old_grid"),
    (lambda: ref.resize_position_table_2d(torch.zeros(10, 4), (3, 3), (0, 4)), "new_grid"),
    (lambda: ref.sincos_2d_table(4, 4, 6), "d_model"),
    (lambda: ref.sincos_2d_table(0, 4, 8), "grid_h"),
    (lambda: ref.axial_rope_cos_sin(torch.zeros(4, 2, dtype=torch.long), 6), "head_dim"),
    (lambda: ref.axial_rope_cos_sin(torch.zeros(4, 3, dtype=torch.long), 8), "position_ids"),
    (lambda: ref.mrope_position_ids(torch.tensor([[0, 1, 1, 0]]), torch.tensor([[1, 4, 4]])), "grid_thw"),
    (lambda: ref.mrope_cos_sin(torch.zeros(3, 1, 4, dtype=torch.long), 16, [2, 3, 2]), "mrope_section"),
])
def test_bad_input_raises_value_error_naming_it(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_axial_property_on_the_whole_catalogue():
    for head_dim in (32, 16):
        merged = hidden_probes.catalog()["axial_property"].keywords["table"]  # public and hidden candidates
        verdicts = {name: ref.check_axial_property(fn, head_dim) for name, fn in merged.items()}
        assert {n for n, v in verdicts.items() if v} == {GOOD, *PUBLIC_ACCEPT, *ACCEPT}
        assert {n for n, v in verdicts.items() if not v} == {BAD, *PUBLIC_REJECT, *REJECT}


def test_axial_scores_depend_on_the_displacement_only():
    ids = torch.tensor([[r, c] for r in range(6) for c in range(5)])
    cos, sin = ref.axial_rope_cos_sin(ids, 16)
    q, k = randn(1, 1, 1, 16, seed=4).double(), randn(1, 1, 1, 16, seed=5).double()
    fq = ref.apply_rope(q.expand(1, 1, len(ids), 16), cos.double(), sin.double())[0, 0]
    fk = ref.apply_rope(k.expand(1, 1, len(ids), 16), cos.double(), sin.double())[0, 0]
    torch.testing.assert_close(fq.norm(dim=-1), q.norm().expand(len(ids)))
    scores = fq @ fk.T
    torch.testing.assert_close(scores[0 * 5 + 1, 2 * 5 + 3], scores[3 * 5 + 0, 5 * 5 + 2])  # (2, 2) both times
    assert abs(scores[0, 1] - scores[0, 5]) > 1e-3  # one column right is not one row down
