"""Learner-style submission: nearest-neighbour resizing."""
import torch.nn.functional as F


def resize_position_table(table, new_len):
    x = table.transpose(0, 1).unsqueeze(0)  # (1, d, L)
    y = F.interpolate(x, size=new_len, mode="nearest")
    return y.squeeze(0).transpose(0, 1)
