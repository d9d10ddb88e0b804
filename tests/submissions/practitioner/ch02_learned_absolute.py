"""Practitioner-style chapter 2, correct: the table initialised the way GPT-2-style code does it (normal
init truncated at two standard deviations), validation worded its own way, and the resize done with
F.interpolate, as timm and transformers do it, instead of the formula."""
import torch
import torch.nn.functional as F
from torch import nn


class LearnablePositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        if d_model < 1 or max_len < 1:
            raise ValueError(f"d_model and max_len must be positive (d_model={d_model}, max_len={max_len})")
        self.d_model, self.max_len = d_model, max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)
        nn.init.trunc_normal_(self.position_embeddings.weight, mean=0.0, std=0.02, a=-0.04, b=0.04)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, position_ids=None):
        if x.size(-1) != self.d_model:
            raise ValueError(f"input width {x.size(-1)} != d_model={self.d_model}")
        n = x.size(-2)
        if position_ids is None:
            if n > self.max_len:
                raise ValueError(f"sequence of length {n} exceeds max_len={self.max_len}")
            position_ids = torch.arange(n, device=x.device).unsqueeze(0)  # (1, L): broadcast over the batch
        elif position_ids.numel() and (int(position_ids.max()) >= self.max_len or int(position_ids.min()) < 0):
            raise ValueError(f"a position lies outside the table of max_len={self.max_len} rows")
        return self.dropout(x + self.position_embeddings(position_ids).type_as(x))


def resize_position_table(table, new_len):
    if table.ndim != 2:
        raise ValueError(f"expected a 2-D table, got {table.ndim} dimensions")
    if new_len < 1:
        raise ValueError(f"cannot resize to new_len={new_len}")
    work = table.float() if table.dtype in (torch.float16, torch.bfloat16) else table
    grid = work.t().unsqueeze(0)  # (1, d, L)
    out = F.interpolate(grid, size=new_len, mode="linear", align_corners=False)
    return out.squeeze(0).t().to(table.dtype)
