"""Generated from course/01_sinusoidal/chapter.py by `python -m grader build`: edit the chapter."""

# from course/01_sinusoidal/chapter.py#py-5afec018
import torch
from torch import nn


# from course/01_sinusoidal/chapter.py#py-720f8af0
def sinusoidal_table(seq_len, d_model, base=10000.0, device=None):
    """PE[p, 2i] = sin(p * w_i), PE[p, 2i+1] = cos(p * w_i), w_i = base^(-2i/d). Returns (seq_len, d_model)."""
    # Hint: the idea: one angle p·w_i per position p and pair i; its sine goes in column 2i, its cosine in
    #       column 2i+1. Check the arguments first.
    #       Shapes: w (d/2,), positions (L,), angles (L, d/2), table (L, d)
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    if seq_len <= 0:
        raise ValueError(f"seq_len must be positive, got seq_len={seq_len}")
    # w_i = base^(-2i/d), i = 0 .. d/2 - 1, in float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32, device=device) / d_model))  # (d/2,)
    positions = torch.arange(seq_len, dtype=torch.float32, device=device)  # (L,)
    # angle[p, i] = p * w_i
    angles = torch.outer(positions, inv_freq)  # (L, d/2)
    pe = torch.empty(seq_len, d_model, dtype=torch.float32, device=device)  # (L, d)
    # PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i): interleaved, even columns first
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return pe


# from course/01_sinusoidal/chapter.py#py-7e56722a
def shift_matrix(k, d_model, base=10000.0):
    """M_k = diag(R_0(k), ..., R_{d/2-1}(k)), R_i(k) = [[cos kw_i, sin kw_i], [-sin kw_i, cos kw_i]]. (d, d)."""
    # Hint: the idea: M_k is block-diagonal, one 2x2 rotation R_i(k) per pair (2i, 2i+1), with the angle
    #       k·w_i and the sine in the upper right (section 1.3).
    #       Shapes: angles (d/2,), M_k (d, d)
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even number, got d_model={d_model}")
    # w_i = base^(-2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model))  # (d/2,)
    angle = k * inv_freq  # (d/2,)
    cos, sin = torch.cos(angle), torch.sin(angle)  # (d/2,)
    idx = torch.arange(0, d_model, 2)  # (d/2,) first row/column of each block
    m = torch.zeros(d_model, d_model, dtype=torch.float32)  # (d, d)
    # R_i(k) = [[cos, sin], [-sin, cos]]
    m[idx, idx] = cos
    m[idx, idx + 1] = sin
    m[idx + 1, idx] = -sin
    m[idx + 1, idx + 1] = cos
    return m


# from course/01_sinusoidal/chapter.py#py-beebe2da
class SinusoidalPositionalEncoding(nn.Module):
    """x + PE[offset : offset + seq] with a fixed, non-trainable table (Vaswani et al., 2017)."""

    def __init__(self, d_model, max_len=5000, base=10000.0, dropout=0.0):
        super().__init__()
        # Hint: the idea: compute the table once and keep it in the module, moved by .to() but never trained.
        #       Shapes: the table (max_len, d_model)
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.d_model, self.base = d_model, base
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model, base), persistent=False)  # (max_len, d)

    def forward(self, x, offset=0):
        # Hint: the idea: add rows offset .. offset + seq - 1 of the table to x; rows past max_len are computed,
        #       not sliced from a table that does not have them.
        #       Shapes: x (B, L, d), the rows (L, d), the output (B, L, d)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got offset={offset}")
        seq_len = x.shape[1]
        end = offset + seq_len
        if end <= self.pe.shape[0]:
            pe = self.pe[offset:end]  # (L, d)
        else:
            # past max_len: the formula still holds; build the rows where x lives
            pe = sinusoidal_table(end, self.d_model, self.base, device=x.device)[offset:]  # (L, d)
        return self.dropout(x + pe.to(x.dtype))  # (B, L, d)
