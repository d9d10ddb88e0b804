"""Generated from course/06_performance/chapter.py by `python -m grader build`: edit the chapter."""

# from course/06_performance/chapter.py#py-5afec018
import torch
from torch import nn


# from course/06_performance/chapter.py#py-1ac761c2
class RotaryCache(nn.Module):
    """Precomputed RoPE tables: cos/sin of p * theta_i (float32 angles, half layout cat(freqs, freqs)),
    looked up by position_ids and grown on demand. forward(position_ids, dtype=None) -> (cos, sin)."""

    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        # Hint: the idea: validate, remember head_dim and base, build the first tables.
        #       Shapes: cos_cached, sin_cached (max_len, head_dim)
        if head_dim <= 0 or head_dim % 2 != 0:
            raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.head_dim, self.base = head_dim, base
        self._build(max_len, device=None)

    def _build(self, length, device):
        """Register cos_cached / sin_cached of shape (length, head_dim) on `device`; set self.max_len."""
        # Hint: the idea: the angles p·theta_i for every position below `length`, in float32 and in the half
        #       layout, kept as non-persistent buffers on `device`.
        #       Shapes: positions (length,), angles (length, d/2), tables (length, d)
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32, device=device)
                                        / self.head_dim))  # (d/2,)
        positions = torch.arange(length, dtype=torch.float32, device=device)  # (max_len,)
        freqs = torch.outer(positions, inv_freq)  # (max_len, d/2): angle p * theta_i in float32
        emb = torch.cat((freqs, freqs), dim=-1)  # (max_len, d): half layout
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)
        self.max_len = length

    def forward(self, position_ids, dtype=None):
        # Hint: the idea: check the positions, grow the tables when a position reaches max_len, look the rows
        #       up, cast them.
        #       Shapes: position_ids any shape; cos, sin position_ids.shape + (head_dim,)
        if position_ids.numel() > 0:
            if int(position_ids.min()) < 0:
                raise ValueError(f"position_ids must be >= 0, got min(position_ids)={int(position_ids.min())}")
            needed = int(position_ids.max()) + 1
            if needed > self.max_len:
                # grow geometrically, where the buffers live, so repeated growth stays cheap
                self._build(max(needed, 2 * self.max_len), device=self.cos_cached.device)
        dtype = torch.float32 if dtype is None else dtype
        cos = self.cos_cached[position_ids].to(dtype)  # position_ids.shape + (d,)
        sin = self.sin_cached[position_ids].to(dtype)
        return cos, sin
