"""Learner-style submission: the exponent i/d in the frequencies, rotate_half written from the
formula with the minus sign on the first half, apply_rope with the sign of the sin term flipped,
and the inverse permutation."""
import torch


def rope_inv_freq(head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 2:
        raise ValueError(f"bad head_dim {head_dim}")
    i = torch.arange(head_dim // 2, dtype=torch.float32)
    return 1.0 / (base ** (i / head_dim))


def rotate_half(x):
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"last dim {d} is odd")
    return torch.cat((x[..., d // 2:], -x[..., : d // 2]), dim=-1)


def apply_rope(x, cos, sin):
    r = cos.shape[-1]
    if cos.ndim == 3:
        cos = cos[:, None]
        sin = sin[:, None]
    cos = cos.to(x.dtype)
    sin = sin.to(x.dtype)
    head = x[..., :r]
    h = r // 2
    turned = torch.cat((-head[..., h:], head[..., :h]), dim=-1)
    return torch.cat((head * cos - turned * sin, x[..., r:]), dim=-1)


def interleaved_to_half_perm(head_dim):
    if head_dim % 2:
        raise ValueError(f"head_dim={head_dim} is odd")
    half = head_dim // 2
    out = []
    for i in range(half):
        out += [i, i + half]
    return torch.tensor(out)
