"""The synthetic task: where is the marker, seen from each patch?

A G x G grid of patches, each one of four kinds: blank (0), two kinds of distractor (2, 3), and exactly one
marker (1) at a random cell. Every patch must say in which direction the marker lies from it: above, level
or below (sign of the row difference) times left, level or right (sign of the column difference), nine
classes (the marker itself answers "level, level"). The answer depends on where the patch and the marker are:
a model without positions can still recognise the marker's own patch (always "level, level"), and for every
other patch do no better than the most frequent class (`no_position_ceiling`)."""

from __future__ import annotations

import torch

KINDS = 4  # blank, marker, distractor a, distractor b
CLASSES = 9  # 3 * (sign(row difference) + 1) + (sign(column difference) + 1)
DISTRACTOR_RATE = 0.3


def grid_positions(grid):
    """(G*G, 2) integer (row, column) of the patches, flattened row-major: patch (r, c) is token r*G + c."""
    rows, cols = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    return torch.stack((rows.flatten(), cols.flatten()), dim=-1)  # (N, 2)


def sample(batch, grid, generator):
    """(kinds (B, N) long, labels (B, N) long) for `batch` grids of G x G patches."""
    n = grid * grid
    kinds = torch.zeros(batch, n, dtype=torch.long)
    distract = torch.rand(batch, n, generator=generator) < DISTRACTOR_RATE  # (B, N)
    which = torch.randint(2, 4, (batch, n), generator=generator)  # (B, N)
    kinds = torch.where(distract, which, kinds)
    marker = torch.randint(0, n, (batch,), generator=generator)  # (B,)
    kinds[torch.arange(batch), marker] = 1
    pos = grid_positions(grid)  # (N, 2)
    delta = pos[marker][:, None, :] - pos[None, :, :]  # (B, N, 2): marker minus patch
    labels = 3 * (delta[..., 0].sign() + 1) + (delta[..., 1].sign() + 1)  # (B, N)
    return kinds, labels


def _pair_labels(grid):
    """(N, N) label of patch j when the marker is at patch i, for every pair (marker uniform)."""
    pos = grid_positions(grid)
    delta = pos[:, None, :] - pos[None, :, :]  # (N, N, 2): marker minus patch
    return 3 * (delta[..., 0].sign() + 1) + (delta[..., 1].sign() + 1)


def majority_accuracy(grid):
    """The accuracy of always answering the most frequent class at this grid size (marker uniform)."""
    counts = torch.bincount(_pair_labels(grid).flatten(), minlength=CLASSES)
    return float(counts.max()) / float(counts.sum())


def no_position_ceiling(grid):
    """The best accuracy without positions: a set model tells the marker's own patch ("level, level") from the
    others, and nothing else it sees says where a patch lies, so every other patch gets one answer, at best the
    most frequent class among them. (N + max count off the diagonal) / N^2; majority + 1/G^2 from G = 4 on."""
    labels = _pair_labels(grid)
    n = labels.shape[0]
    others = labels[~torch.eye(n, dtype=torch.bool)]  # the N(N - 1) pairs where the patch is not the marker
    return (n + float(torch.bincount(others, minlength=CLASSES).max())) / n ** 2
