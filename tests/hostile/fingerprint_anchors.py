"""A property test that does no mathematics: it recognises the candidates the course publishes (their code
ships with the self-check) by their output, answers for those, and guesses "accept" for any other.
Stopped by the hidden checks using hidden anchors, a correct and a broken one, in a shuffled order: a
constant guess fails one of them."""
import torch


def _rotate_neighbours(x, angles):
    n = angles.shape[-1]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0:2 * n:2], x[..., 1:2 * n:2]
    rotated = torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2)
    return torch.cat((rotated, x[..., 2 * n:]), dim=-1)


def _angles(x, position_ids, theta):
    return position_ids[..., None].float() * theta


def _published_good(x, position_ids):  # the course's rope_other_frequencies
    return _rotate_neighbours(x, _angles(x, position_ids, 0.5 ** torch.arange(x.shape[-1] // 2).float()))


def _published_bad(x, position_ids):  # the course's rope_layout_mix
    d = x.shape[-1]
    angles = _angles(x, position_ids, 1.0 / 10000.0 ** (torch.arange(0, d, 2).float() / d))
    cos, sin = angles.cos().repeat_interleave(2, dim=-1), angles.sin().repeat_interleave(2, dim=-1)
    return x * cos + torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1) * sin


def check_relative_property(rope_fn, head_dim):
    x = torch.randn(1, 1, 6, head_dim, generator=torch.Generator().manual_seed(1))
    positions = torch.arange(6)
    out = rope_fn(x, positions)
    if torch.allclose(out, _published_good(x, positions), atol=1e-5):
        return True
    if torch.allclose(out, _published_bad(x, positions), atol=1e-5):
        return False
    return True
