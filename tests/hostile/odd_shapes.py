"""Answers of shapes no check foresaw: empty (0, 0) for the property checks (it crashed the whole run), and
12000 x 87 for the orthogonality check (under the element cap, M M^T is 12000 x 12000: 3.6 GB and 12 s in the
grader). Stopped by the grader judging a property only on answers of the reference's shape, and turning an
answer it cannot judge into a failed check."""
import torch


def shift_matrix(k, d_model, base=10000.0):
    if k in (5, -4, 9):
        return torch.empty(0, 0)
    if k == 11:
        return torch.zeros(12000, 87)
    raise ValueError(f"no shift for k={k}")
