"""The learner's self-check is as strong as the grader: on every learner-style submission under
tests/submissions, an exercise the grader fails also fails its self-check (where the grader's check
needs a GPU, a hidden candidate or memory at scale, a public counterpart catches the same mistake);
and correct practitioner-style code passes both.

Both run in this process, on the submissions' own definitions (they are our test data, not hostile
code): the self-check from its stored answers, the grader's checks through the same probes and the
same `judge` the engine uses, hidden probes included."""

from functools import lru_cache

import pytest
import torch

from grader.checks import all_checks
from posenc_selfcheck import FAILED
from posenc_selfcheck.messages import render
from posenc_selfcheck.runner import one_thread, run_checks
from tests.conftest import ROOT
from tests.grading_support import judge_in_process

SUBMISSIONS = ROOT / "tests" / "submissions"
MISTAKEN = sorted(SUBMISSIONS.glob("*.py"))
PRACTITIONER = sorted((SUBMISSIONS / "practitioner").glob("*.py"))
CHECKS = tuple(c for c in all_checks() if not c.cuda)


@lru_cache(maxsize=None)
def definitions(path):
    ns = {"__name__": f"submission_{path.stem}"}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102 (our own test data)
    return ns


def verdicts(path):
    """{exercise: (grader's failed check keys, self-check's failed check names)} for the exercises defined."""
    ns = definitions(path)
    out = {}
    with one_thread():
        for exercise in dict.fromkeys(c.exercise for c in CHECKS):
            if exercise not in ns:
                continue
            checks = [c for c in CHECKS if c.exercise == exercise]
            graded = [c.key for c in checks if judge_in_process(ns, c).status == FAILED]
            selfcheck = [spec["name"] for spec, status, _ in run_checks(exercise, ns[exercise]) if status == FAILED]
            out[exercise] = graded, selfcheck
    return out


@pytest.mark.parametrize("path", MISTAKEN, ids=[p.stem for p in MISTAKEN])
def test_every_exercise_the_grader_fails_fails_its_self_check(path):
    found = verdicts(path)
    assert found, "the submission defines no exercise"
    assert any(graded for graded, _ in found.values()), "the grader finds no mistake: not a mistake submission"
    missed = {exercise: graded for exercise, (graded, selfcheck) in found.items() if graded and not selfcheck}
    assert missed == {}


@pytest.mark.parametrize("path", PRACTITIONER, ids=[p.stem for p in PRACTITIONER])
def test_correct_practitioner_code_passes_the_self_check_and_the_grader(path):
    found = verdicts(path)
    assert found
    assert {exercise: v for exercise, v in found.items() if v != ([], [])} == {}


def test_the_repeated_table_is_caught_on_the_meta_device_in_milliseconds():
    """The grader's scale check needs gigabytes and seconds; its self-check counterpart measures the
    same call's largest buffer on the meta device and names the tensor."""
    ns = definitions(SUBMISSIONS / "ch03_repeat_table.py")
    with one_thread():
        results = {spec["key"]: (status, message) for spec, status, message in run_checks("shaw_attention",
                                                                                     ns["shaw_attention"])}
    status, message = results["shaw_attention.no_buffer_over_3_gib_on_meta"]
    message = render(message, "en")
    assert status == FAILED
    assert "one buffer is 8.6 GB" in message and "(1, 8, 2048, 2048, 64)" in message
    assert "repeated over batch and heads" in message


def test_meta_probes_keep_real_values_so_growth_paths_run():
    """A value read on the meta device answers what the same code would read on a GPU."""
    from posenc_selfcheck.probes_meta import MetaDevice

    with MetaDevice():
        positions = torch.arange(40).to("meta")
        assert int(positions.max()) == 39 and positions.device.type == "meta"
        doubled = positions[10:14] * 2
        assert [int(v) for v in doubled] == [20, 22, 24, 26]


def test_the_meta_device_lets_cpu_indices_index_as_torch_does_on_a_gpu():
    """torch indexes a tensor on any device with index tensors on the CPU ("indices should be either on cpu or on the
    same device as the indexed tensor"): a permutation x[..., order] with a CPU order runs on a GPU and passes; a CPU
    table indexed by positions on the device, or CPU values written into a device tensor, does not."""
    from posenc_selfcheck.probes_meta import on_meta

    order = torch.tensor([0, 2, 1, 3])

    def permuted():
        return torch.randn(2, 4).to("meta")[..., order]

    def table_on_cpu():
        return torch.randn(10, 4)[torch.arange(3).to("meta")]

    def cpu_values():
        x = torch.zeros(2, 4).to("meta")
        x[..., order] = torch.ones(2, 4)
        return x

    assert on_meta(permuted)[0] == {"ok": True, "problem": ""}
    for wrong, op in ((table_on_cpu, "aten::index"), (cpu_values, "aten::index_put_")):
        verdict = on_meta(wrong)[0]
        assert not verdict["ok"] and op in verdict["problem"] and "cpu" in verdict["problem"], verdict


def _property_test(kind):
    """A learner's check_relative_property with one classic weakness (kind) and everything else right."""
    def check_relative_property(rope_fn, head_dim):
        gen = torch.Generator().manual_seed(0)
        q, k = torch.randn(2, 1, 1, 1, head_dim, generator=gen, dtype=torch.float64)
        positions = torch.arange(256)
        fq = rope_fn(q.expand(1, 1, 256, head_dim).float().contiguous(), positions)[0, 0].double()
        fk = rope_fn(k.expand(1, 1, 256, head_dim).float().contiguous(), positions)[0, 0].double()
        scale = q.norm() * k.norm()
        if ((fq.norm(dim=-1) - q.norm()).abs() > 1e-3 * q.norm()).any():
            return False
        if kind == "norms only":
            return True
        if kind != "no position check" and (fq - fq[:1]).norm(dim=-1).max() < 1e-3 * q.norm():
            return False
        scores = fq @ fk.T  # (P, P)
        if kind == "one pair":  # the classic: (3, 1) against (10, 8)
            return bool((scores[3, 1] - scores[10, 8]).abs() <= 1e-3 * scale)
        rows = torch.arange(256)
        for shift in range(1, 256):
            same = scores[rows[:-shift], rows[shift:]]  # every (m, m + shift)
            if (same - same[0]).abs().max() > 1e-3 * scale:
                return False
        return True

    return check_relative_property


@pytest.mark.parametrize("kind", ["norms only", "one pair", "no position check"])
def test_the_self_check_rejects_a_property_test_with_a_classic_weakness(kind):
    with one_thread():
        weak = run_checks("check_relative_property", _property_test(kind))
        strong = run_checks("check_relative_property", _property_test("complete"))
    assert [name for spec, status, name in weak if status == FAILED]
    assert [spec["name"] for spec, status, _ in strong if status == FAILED] == []
