"""Learner-style submission: the default positions are built on the CPU."""
import torch
from torch import nn


class LearnablePositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        torch.nn.init.trunc_normal_(self.position_embeddings.weight, std=0.02)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x, position_ids=None):
        seq_len = x.shape[1]
        if seq_len > self.max_len:
            raise ValueError(f"seq_len {seq_len} > max_len {self.max_len}")
        if position_ids is None:
            position_ids = torch.arange(seq_len)
        return self.dropout(x + self.position_embeddings(position_ids).to(x.dtype))
