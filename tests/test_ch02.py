"""Chapter 2: the learned table and the resize against torch and the chapter's claims, and grading."""


import pytest
import torch
import torch.nn.functional as F
from torch import nn

import posenc_ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from posenc_selfcheck import SelfCheckFailed, check
from posenc_selfcheck.messages import from_child
from tests.conftest import ROOT, grade_with

CHECKS = chapter_checks("ch02")
MODULE, RESIZE = "LearnablePositionalEncoding", "resize_position_table"
resize = posenc_ref.resize_position_table


def _one_liner(table, new_len):
    """The contract's definition, by torch itself."""
    return F.interpolate(table.T[None], size=new_len, mode="linear", align_corners=False)[0].T


# ---- LearnablePositionalEncoding -----------------------------------------------------------------------
def test_module_holds_a_trainable_embedding_table_at_scale_002():
    torch.manual_seed(0)
    module = posenc_ref.LearnablePositionalEncoding(64, 2048)
    table = module.position_embeddings
    assert isinstance(table, nn.Embedding)
    assert table.weight.shape == (2048, 64) and table.weight.requires_grad
    assert [name for name, _ in module.named_parameters()] == ["position_embeddings.weight"]
    w = table.weight.detach()
    # N(0, 0.02²): the sample std of 131072 values is within 0.02 ± 4e-5 (1 sigma); nothing near ±2 is cut
    assert abs(w.std().item() - 0.02) < 4e-4 and abs(w.mean().item()) < 5e-4
    assert w.abs().max() < 2.0


def test_torch_trunc_normal_bounds_are_absolute():
    """The chapter's claim: a=-2, b=2 cut at ±2, not at ±2 std, so std=0.02 is left uncut."""
    torch.manual_seed(1)
    uncut = nn.init.trunc_normal_(torch.empty(200_000), std=0.02)
    cut = nn.init.trunc_normal_(torch.empty(200_000), std=0.02, a=-0.04, b=0.04)
    assert uncut.abs().max() > 0.07  # values beyond 3.5 std exist: nothing was truncated at 2 std
    assert cut.abs().max() <= 0.04
    assert abs(cut.std().item() - 0.02 * 0.8796) < 3e-4  # the truncated normal's std, 0.88 x 0.02
    # the check's range accepts all three recipes of the chapter and rejects nn.Embedding's default
    low, high = next(c for c in CHECKS if c.name.startswith("initialised")).fields["attr_std"]
    assert low <= cut.std() <= high and low <= uncut.std() <= high
    assert not low <= nn.Embedding(2048, 64).weight.std() <= high


def test_forward_adds_the_rows_of_the_positions():
    torch.manual_seed(2)
    module = posenc_ref.LearnablePositionalEncoding(8, 20).eval()
    weight = module.position_embeddings.weight.detach()
    x = torch.randn(3, 5, 8)
    torch.testing.assert_close(module(x), x + weight[:5], atol=0, rtol=0)
    ids = torch.tensor([7, 3, 3, 19, 0])  # (seq,)
    torch.testing.assert_close(module(x, ids), x + weight[ids], atol=0, rtol=0)
    batch_ids = torch.randint(0, 20, (3, 5))  # (batch, seq)
    expected = torch.stack([x[b] + weight[batch_ids[b]] for b in range(3)])
    torch.testing.assert_close(module(x, batch_ids), expected, atol=0, rtol=0)


def test_gradient_reaches_only_the_rows_that_were_used():
    module = posenc_ref.LearnablePositionalEncoding(4, 10)
    module(torch.zeros(2, 6, 4)).sum().backward()
    grad = module.position_embeddings.weight.grad
    assert (grad[:6] == 2).all() and (grad[6:] == 0).all()  # d(sum)/dE[p] = batch size for each used row


def test_module_follows_to_float64_keeps_input_dtype_and_runs_on_meta():
    module = posenc_ref.LearnablePositionalEncoding(8, 16).to(torch.float64)
    assert module(torch.zeros(2, 4, 8, dtype=torch.float64)).dtype == torch.float64
    half = torch.zeros(1, 4, 8, dtype=torch.float16)
    assert posenc_ref.LearnablePositionalEncoding(8, 16)(half).dtype == torch.float16
    meta = posenc_ref.LearnablePositionalEncoding(8, 16).to("meta")
    assert meta(torch.empty(2, 16, 8, device="meta")).device.type == "meta"


@pytest.mark.parametrize("call,words", [
    (lambda m: m(torch.zeros(1, 9, 4)), ("seq_len=9", "max_len=8")),
    (lambda m: m(torch.zeros(1, 3, 4), torch.tensor([6, 7, 8])), ("max_len=8", "8")),
    (lambda m: m(torch.zeros(1, 3, 4), torch.tensor([-1, 0, 1])), ("-1",)),
    (lambda m: m(torch.zeros(1, 3, 4), torch.tensor([0, 1])), ("position_ids", "seq_len=3")),
    (lambda m: m(torch.zeros(1, 3, 5)), ("d_model=4",)),
    (lambda m: posenc_ref.LearnablePositionalEncoding(4, 0), ("max_len=0",)),
])
def test_module_bad_input_raises_value_error_naming_it(call, words):
    module = posenc_ref.LearnablePositionalEncoding(4, 8)
    with pytest.raises(ValueError) as info:
        call(module)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_exactly_max_len_positions_are_allowed():
    module = posenc_ref.LearnablePositionalEncoding(4, 8)
    assert module(torch.zeros(2, 8, 4)).shape == (2, 8, 4)


def test_meta_check_accepts_validation_that_reads_values_and_still_catches_cpu_positions():
    """A bounds check that reads the ids (correct on a GPU) must not fail the meta-device check."""
    from posenc_selfcheck import probes

    class ReadsValues(nn.Module):
        def __init__(self, d_model, max_len, dropout=0.0):
            super().__init__()
            self.max_len = max_len
            self.position_embeddings = nn.Embedding(max_len, d_model)

        def forward(self, x, position_ids=None):
            if position_ids is None:
                position_ids = torch.arange(x.shape[1], device=x.device)
            if position_ids.max() >= self.max_len or (position_ids < 0).any():
                raise ValueError(f"position_ids past max_len={self.max_len}")
            return x + self.position_embeddings(position_ids)

    class CpuPositions(ReadsValues):
        def forward(self, x, position_ids=None):
            return x + self.position_embeddings(torch.arange(x.shape[1]))

    check_ = next(c for c in CHECKS if c.name.startswith("runs on the device of its input"))
    assert probes.run({MODULE: ReadsValues}, "meta_forward", check_.params, MODULE)["ok"] is True  # shared probe too
    assert probes.run({MODULE: ReadsValues}, check_.probe, check_.params, MODULE) == {"ok": True, "problem": ""}
    caught = probes.run({MODULE: CpuPositions}, check_.probe, check_.params, MODULE)
    # the problem crosses as message data (posenc_selfcheck/messages.py from_child decodes it)
    assert caught["ok"] is False and "mixes tensors on ['cpu', 'meta']" in str(from_child(caught["problem"]))


# ---- resize_position_table ------------------------------------------------------------------------------
@pytest.mark.parametrize("old_len,new_len", [(6, 10), (12, 5), (7, 7), (6, 1), (1, 5), (64, 200), (196, 576)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_resize_equals_f_interpolate(old_len, new_len, dtype):
    table = torch.randn(old_len, 5, dtype=dtype, generator=torch.Generator().manual_seed(old_len))
    got = resize(table, new_len)
    assert got.dtype == dtype and got.shape == (new_len, 5)
    # against torch in float64 (where its coordinates are exact enough): float32 rounding of the blend only
    exact = _one_liner(table.double(), new_len)
    torch.testing.assert_close(got.double(), exact, atol=1e-6 if dtype == torch.float32 else 1e-12, rtol=0)
    # against torch in the table's own dtype, within the tolerance the graded checks allow
    check = next(c for c in CHECKS if c.name.startswith("a longer table"))
    atol = 1e-5 + check.tol["per_position"] * old_len
    torch.testing.assert_close(got, _one_liner(table, new_len), atol=atol, rtol=1e-4)


def test_resize_keeps_low_precision_dtypes():
    table = torch.randn(10, 4).to(torch.bfloat16)
    got = resize(table, 17)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), _one_liner(table.float(), 17), atol=2e-2, rtol=2e-2)


def test_resize_by_hand_on_a_ramp():
    """Independently of F.interpolate: a table whose rows are their own index maps to x_j = (j+1/2)L/L' - 1/2."""
    old_len, new_len = 4, 8
    ramp = torch.arange(old_len, dtype=torch.float64)[:, None].repeat(1, 3)  # row i = (i, i, i)
    x = ((torch.arange(new_len, dtype=torch.float64) + 0.5) * old_len / new_len - 0.5).clamp(0, old_len - 1)
    torch.testing.assert_close(resize(ramp, new_len), x[:, None].repeat(1, 3), atol=1e-12, rtol=0)
    torch.testing.assert_close(resize(ramp, 1), torch.full((1, 3), 1.5, dtype=torch.float64), atol=1e-12, rtol=0)


def test_resize_runs_on_meta_and_rejects_bad_input():
    assert resize(torch.empty(8, 4, device="meta"), 13).device.type == "meta"
    with pytest.raises(ValueError, match="new_len=0"):
        resize(torch.randn(6, 4), 0)
    with pytest.raises(ValueError, match="table"):
        resize(torch.randn(6), 3)


def test_linear_interpolation_shrinks_orthogonal_rows():
    """The chapter's norm argument: orthogonal unit rows blended with weights (1-w, w) have length sqrt((1-w)² + w²)."""
    table = torch.eye(2, dtype=torch.float64)  # rows e0, e1
    mid = resize(table, 4)[1:3]  # x = 0.25 and 0.75: weights 1/4, 3/4
    torch.testing.assert_close(mid.norm(dim=1), torch.full((2,), (0.75 ** 2 + 0.25 ** 2) ** 0.5, dtype=torch.float64))


def test_every_known_mistake_really_is_wrong():
    table = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    for name, mistake in MISTAKES.items():
        if mistake.exercise == RESIZE:
            got = mistake.impl(table, 10)
            assert got.shape != (10, 4) or not torch.allclose(got, resize(table, 10), atol=1e-3), name
    module = MISTAKES["learned_ignores_position_ids"].impl(4, 16)
    x, ids = torch.zeros(1, 3, 4), torch.tensor([5, 6, 7])
    assert not torch.allclose(module(x, ids), x + module.position_embeddings.weight[ids])


def test_the_reference_passes_its_self_checks_and_a_mistake_is_named():
    for exercise, obj in ((MODULE, posenc_ref.LearnablePositionalEncoding), (RESIZE, resize)):
        check(exercise, obj, quiet=True)
    with pytest.raises(SelfCheckFailed) as info:
        check(RESIZE, MISTAKES["resize_align_corners"].impl, quiet=True)
    assert MISTAKES["resize_align_corners"].message in str(info.value)


# ---- grading -----------------------------------------------------------------------------------------


def _failed(results, exercise):
    return [r for r in results.values() if r.check.exercise == exercise and r.status == "failed"]


def _hint(name_start):
    return next(c for c in CHECKS if c.name.startswith(name_start)).hint


@pytest.mark.parametrize("submission,mistake", [
    ("ch02_align_corners.py", "resize_align_corners"),
    ("ch02_wrong_axis.py", "resize_wrong_axis"),
    ("ch02_nearest.py", "resize_nearest"),
])
def test_learner_mistake_gets_its_diagnosis(submission, mistake):
    results = grade_with(ROOT / "tests" / "submissions" / submission, CHECKS)
    exercise = MISTAKES[mistake].exercise
    failed = _failed(results, exercise)
    assert failed, "the submission passed every check"
    assert any(MISTAKES[mistake].message in str(r.feedback) for r in failed), [str(r.feedback) for r in failed]
    others = [m.message for name, m in MISTAKES.items() if name != mistake and m.exercise == exercise]
    assert not any(message in str(r.feedback) for r in failed for message in others)


def test_missing_bounds_check_is_named_as_the_embeddings_index_error():
    results = grade_with(ROOT / "tests" / "submissions" / "ch02_no_bounds_check.py", CHECKS)
    past = results["seq_len past max_len raises ValueError naming both"]
    assert past.status == "failed"
    assert "expected ValueError, got IndexError" in str(past.feedback)
    assert _hint("seq_len past max_len") in str(past.feedback)
    # the lookups themselves are right: the forward checks pass
    assert results["x + E[0 .. seq-1] for a batch (2, 10, 16)"].status == "passed"


def test_positions_built_on_the_cpu_are_caught_on_the_meta_device():
    results = grade_with(ROOT / "tests" / "submissions" / "ch02_positions_on_cpu.py", CHECKS)
    meta = results["runs on the device of its input (checked on the meta device)"]
    assert meta.status == "failed"
    assert "mixes tensors on ['cpu', 'meta']" in str(meta.feedback) and "device=x.device" in str(meta.feedback)
    # on the CPU the answers are right, which is why only a device check can see this
    assert results["x + E[0 .. seq-1] for a batch (2, 10, 16)"].status == "passed"


def test_ignored_position_ids_and_default_initialisation_are_both_named():
    results = grade_with(ROOT / "tests" / "submissions" / "ch02_ignores_ids_default_init.py", CHECKS)
    failed = _failed(results, MODULE)
    assert any(MISTAKES["learned_ignores_position_ids"].message in str(r.feedback) for r in failed)
    init = next(r for r in results.values() if r.check.name.startswith("initialised"))
    assert init.status == "failed" and "attr_std should lie in [0.017, 0.021]" in str(init.feedback)
    assert _hint("initialised") in str(init.feedback)
    # the default positions are right, and the seeded forward check does not depend on the initialisation
    assert results["x + E[0 .. seq-1] for a batch (2, 10, 16)"].status == "passed"
