"""A hoard of results: every answer is a 64 MB tensor, so what the children send back adds up to gigabytes in the
trusted grading process, which holds every result until it judges (and has no address-space limit where CUDA is).
Stopped by Limits.submission_result_bytes: the grader accepts no more than that of one submission's results, counted
by their sizes before anything is decoded; the rest is dropped unread and those checks have no result."""
import torch


def shift_matrix(k, d_model, base=10000.0):
    return torch.ones(16 << 20)  # 64 MB of float32
