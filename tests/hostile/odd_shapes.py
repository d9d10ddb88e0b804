"""Answers of shapes no check foresaw: empty (0, 0) for the property checks (it crashed the whole run),
and 3000 x 3000 for the orthogonality check (at 9000 x 9000, judging it took a minute and 3 GB in the grader). Stopped
by the grader capping sizes before judging and turning an answer it cannot judge into a failed check."""
import torch


def shift_matrix(k, d_model, base=10000.0):
    if k in (5, -4, 9):
        return torch.empty(0, 0)
    if k == 11:
        return torch.zeros(3000, 3000)
    raise ValueError(f"no shift for k={k}")
