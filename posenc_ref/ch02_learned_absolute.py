"""Generated from course/02_learned_absolute/chapter.py by `python -m grader build`: edit the chapter."""

# from course/02_learned_absolute/chapter.py#py-5afec018
import torch
from torch import nn


# from course/02_learned_absolute/chapter.py#py-92322657
class LearnablePositionalEncoding(nn.Module):
    """x + E[position_ids] with a trainable table E = position_embeddings.weight of shape (max_len, d_model).

    The learned absolute positions of BERT (Devlin et al., 2019) and GPT-2 (Radford et al., 2019).
    Gradients reach only the rows that training sequences use; there are no rows past max_len.
    """

    def __init__(self, d_model, max_len, dropout=0.0):
        super().__init__()
        # Hint: the idea: one learned vector per position, i.e. an embedding layer with max_len rows, started
        #       at scale 0.02 instead of torch's default N(0, 1).
        #       Shapes: the weight (max_len, d_model)
        if d_model <= 0:
            raise ValueError(f"d_model must be positive, got d_model={d_model}")
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.d_model, self.max_len = d_model, max_len
        self.position_embeddings = nn.Embedding(max_len, d_model)  # weight (max_len, d)
        # E ~ N(0, 0.02²); torch's default cut-offs a=-2, b=2 are absolute, so nothing is cut
        nn.init.trunc_normal_(self.position_embeddings.weight, std=0.02)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, position_ids=None):
        # Hint: the idea: look up one row per position and add it to x; refuse positions the table lacks.
        #       Shapes: x (B, L, d); position_ids (L,) or (B, L); the rows (L, d) or (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        seq_len = x.shape[-2]
        if position_ids is None:
            if seq_len > self.max_len:
                raise ValueError(f"seq_len={seq_len} is longer than max_len={self.max_len}: "
                                 f"the learned table has no rows for positions {self.max_len} and up")
            position_ids = torch.arange(seq_len, device=x.device)  # (L,)
        else:
            if position_ids.shape[-1] != seq_len:
                raise ValueError(f"position_ids must have seq_len={seq_len} entries per row, "
                                 f"got shape {tuple(position_ids.shape)}")
            if position_ids.numel() > 0:
                low, high = int(position_ids.min()), int(position_ids.max())
                if low < 0 or high >= self.max_len:
                    raise ValueError(f"position_ids must lie in [0, max_len={self.max_len}), "
                                     f"got values from {low} to {high}")
        # h = x + E[p]
        pe = self.position_embeddings(position_ids)  # (L, d) or (B, L, d)
        return self.dropout(x + pe.to(x.dtype))  # (B, L, d)


# from course/02_learned_absolute/chapter.py#py-3b8ef512
def resize_position_table(table, new_len):
    """T'[j] = (1 - w) T[i0] + w T[i1], x_j = (j + 1/2) L / L' - 1/2 clamped to [0, L-1], i0 = floor(x_j).

    Linear interpolation along the positions of a (L, d) table, as
    F.interpolate(table.T[None], size=new_len, mode="linear", align_corners=False)[0].T. Returns (new_len, d).
    """
    # Hint: the idea: new row j sits at x_j = (j + 1/2)·L/L' - 1/2 in units of old rows (align_corners=False),
    #       clamped to [0, L - 1]; it is a linear blend of the two old rows around x_j.
    #       Shapes: table (L, d), x (L',), the output (L', d)
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D (positions, d), got shape {tuple(table.shape)}")
    if new_len <= 0:
        raise ValueError(f"new_len must be positive, got new_len={new_len}")
    old_len = table.shape[0]
    # coordinates in float64: a float32 x near row 200 is off by about 1e-5 of a row
    j = torch.arange(new_len, dtype=torch.float64, device=table.device)  # (L',)
    # x_j = (j + 1/2) L / L' - 1/2, clamped to [0, L - 1]
    x = ((j + 0.5) * (old_len / new_len) - 0.5).clamp(0, old_len - 1)  # (L',)
    i0 = x.floor().long()  # (L',)
    i1 = (i0 + 1).clamp(max=old_len - 1)  # (L',)
    work = torch.promote_types(table.dtype, torch.float32)  # float16 rows blend in float32
    w = (x - i0).to(work)[:, None]  # (L', 1) weight of row i1
    rows = table.to(work)
    # T'[j] = (1 - w) T[i0] + w T[i1]
    return ((1 - w) * rows[i0] + w * rows[i1]).to(table.dtype)  # (L', d)
