"""A correct property test that, on the checks with head_dim 16, calls its candidates in every way the grader
must refuse: garbage, a pickle, arguments too large to store, a token of no candidate, a complex tensor, a tensor
subclass, and more calls than a check allows; then it raises with the answers it got. Each such call must be
refused with a sentence (and never hang the run, or cost another check): only the head_dim-16 checks fail."""
import pickle
import sys

import torch
from safetensors.torch import save


def _relative(rope_fn, head_dim, n_positions=200, rtol=1e-3):
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(3, 1, 1, head_dim, generator=gen), torch.randn(3, 1, 1, head_dim, generator=gen)
    positions = torch.arange(n_positions)
    fq = rope_fn(q.expand(-1, 1, n_positions, -1).contiguous(), positions)[:, 0].double()  # (V, P, d)
    fk = rope_fn(k.expand(-1, 1, n_positions, -1).contiguous(), positions)[:, 0].double()
    norm_q, norm_k = q[:, 0].double().norm(dim=-1), k[:, 0].double().norm(dim=-1)  # (V, 1)
    if ((fq.norm(dim=-1) - norm_q).abs() > rtol * norm_q).any() or ((fk.norm(dim=-1) - norm_k).abs() > rtol * norm_k).any():
        return False
    if ((fq - fq[:, :1]).norm(dim=-1).amax(dim=-1, keepdim=True) <= rtol * norm_q).any():
        return False
    scores = fq @ fk.transpose(-1, -2)  # (V, P, P)
    delta = positions[None, :] - positions[:, None]
    same = torch.where(delta >= 0, scores[:, 0, delta.clamp(min=0)], scores[:, (-delta).clamp(min=0), 0])
    return bool(((scores - same).abs() <= rtol * (norm_q * norm_k)[:, :, None]).all())


class _Sub(torch.Tensor):
    pass


def _refusals(rope_fn):
    link = sys.modules["candidate_calls"]._LINK
    said = []
    x, ids = torch.randn(1, 1, 4, 16), torch.arange(4)
    for data in (b"garbage", pickle.dumps({"x": [1.0]}), b"c0123456789abcdef\n" + save({"x": x, "position_ids": ids}),
                 b"c0\n" + b"\0" * (17 << 20)):
        answer = link(data)
        said.append(f"{answer.error}" if answer is not None else "NO ANSWER")
    for args in ((x.to(torch.complex64), ids), (x.as_subclass(_Sub), ids), (torch.randn(1 << 21, 2), ids)):
        try:
            rope_fn(*args)
            said.append("ANSWERED")
        except ValueError as exc:
            said.append(str(exc))
    for _ in range(200):
        try:
            rope_fn(x, ids)
        except ValueError as exc:
            said.append(str(exc))
            break
    return said


_SAID = {}  # {the request's candidates (their tokens): what the calls got}, once per check


def check_relative_property(rope_fn, head_dim):
    if head_dim == 16:
        request = frozenset(sys.modules["candidate_calls"]._TOKENS.values())
        if request not in _SAID:
            _SAID[request] = " | ".join(said[:32] for said in _refusals(rope_fn))  # the feedback keeps 300
        raise ValueError("REFUSED " + _SAID[request])
    return _relative(rope_fn, head_dim)
