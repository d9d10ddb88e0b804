"""Learner-style submission with two mistakes: the table keeps nn.Embedding's default N(0, 1) start, and
forward always adds rows 0 .. seq-1, whatever position_ids says."""
from torch import nn


class LearnablePositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        self.max_len = max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, position_ids=None):
        seq_len = x.size(-2)
        if seq_len > self.max_len:
            raise ValueError(f"sequence length {seq_len} exceeds max_len={self.max_len}")
        pe = self.position_embeddings.weight[:seq_len]
        return self.dropout(x + pe.to(x.dtype))
