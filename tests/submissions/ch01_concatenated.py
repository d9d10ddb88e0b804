# Chapter 1 with sines and cosines concatenated instead of interleaved.
import torch


def sinusoidal_table(seq_len, d_model, base=10000.0):
    if d_model % 2 or d_model <= 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    if seq_len <= 0:
        raise ValueError(f"seq_len must be positive, got {seq_len}")
    w = 1.0 / base ** (torch.arange(0, d_model, 2).float() / d_model)
    ang = torch.outer(torch.arange(seq_len).float(), w)
    return torch.cat([ang.sin(), ang.cos()], dim=1)
