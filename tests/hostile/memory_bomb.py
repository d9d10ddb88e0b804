"""A memory bomb inside an exercise: it meets the address-space limit (MemoryError), not the machine's."""
import torch


def shift_matrix(k, d_model, base=10000.0):
    hoard = []
    while True:
        hoard.append(torch.ones(64 << 20, dtype=torch.uint8))  # 64 MB, touched
