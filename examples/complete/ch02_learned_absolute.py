"""Chapter 2, as a learner might finish it: correct, but written independently of the reference
(explicit bounds checks with min/max, the resize written as a float64 blend of gathered rows
through index_select instead of F.interpolate)."""

import torch
from torch import nn


class LearnablePositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        if int(d_model) <= 0:
            raise ValueError(f"d_model must be a positive integer (got d_model={d_model})")
        if int(max_len) <= 0:
            raise ValueError(f"max_len must be a positive integer (got max_len={max_len})")
        self.d_model = int(d_model)
        self.max_len = int(max_len)
        self.position_embeddings = nn.Embedding(self.max_len, self.d_model)
        with torch.no_grad():
            nn.init.trunc_normal_(self.position_embeddings.weight, mean=0.0, std=0.02)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, position_ids=None):
        if x.dim() != 3:
            raise ValueError(f"x must be (batch, seq, d_model), got shape {tuple(x.shape)}")
        batch, seq_len, width = x.shape
        if width != self.d_model:
            raise ValueError(f"x's last dimension must be d_model={self.d_model}, got {width}")
        if seq_len > self.max_len:
            raise ValueError(f"sequence of length seq_len={seq_len} is longer than the table: "
                             f"max_len={self.max_len}")
        if position_ids is None:
            ids = torch.arange(seq_len, device=x.device)
        else:
            ids = position_ids
            bad_batch = ids.dim() == 2 and ids.shape[0] not in (1, batch)
            if ids.dim() not in (1, 2) or ids.shape[-1] != seq_len or bad_batch:
                raise ValueError(f"position_ids of shape {tuple(ids.shape)} do not match x of length "
                                 f"seq_len={seq_len} (batch {batch})")
            if ids.is_floating_point():
                raise ValueError(f"position_ids must be integers, got dtype {ids.dtype}")
            if ids.numel() > 0:
                lowest, highest = int(ids.min()), int(ids.max())
                if lowest < 0 or highest >= self.max_len:
                    raise ValueError(f"position_ids must lie in [0, max_len={self.max_len}), "
                                     f"got values from {lowest} to {highest}")
            ids = ids.to(device=x.device, dtype=torch.long)
        rows = self.position_embeddings(ids)  # (seq, d) or (batch, seq, d)
        return self.dropout(x + rows.to(x.dtype))


def resize_position_table(table, new_len):
    if not isinstance(table, torch.Tensor) or table.dim() != 2:
        shape = tuple(table.shape) if isinstance(table, torch.Tensor) else type(table).__name__
        raise ValueError(f"table must be a 2-D (L, d) tensor, got {shape}")
    if int(new_len) != new_len or new_len <= 0:
        raise ValueError(f"new_len must be a positive integer (got new_len={new_len})")
    new_len = int(new_len)
    old_len = table.shape[0]
    if old_len == 0:
        raise ValueError("table must have at least one row (got L=0)")
    dev = table.device
    # centre of new cell j, measured in old rows: (j + 1/2) * L / L' - 1/2, clamped to [0, L-1]
    centres = (torch.arange(new_len, device=dev, dtype=torch.float64) + 0.5) * (old_len / new_len) - 0.5
    centres = centres.clamp(min=0.0, max=float(old_len - 1))
    left = centres.floor().long()
    right = torch.clamp(left + 1, max=old_len - 1)
    w = (centres - left.to(torch.float64)).unsqueeze(1)  # (new_len, 1)
    wide = table.to(torch.float64)
    below = wide.index_select(0, left)
    above = wide.index_select(0, right)
    return (below + w * (above - below)).to(table.dtype)
