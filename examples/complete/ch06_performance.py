"""Learner-style submission for chapter 6, correct and written independently of the reference: the
tables are built with torch.polar (cos + i sin of float32 angles), the layout with expand + reshape
of a stacked tensor, growth doubles until the table is long enough, lookup with index_select."""
import torch
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim % 2 == 1 or head_dim < 2:
            raise ValueError(f"head_dim has to be even and positive (got head_dim={head_dim})")
        if max_len < 1:
            raise ValueError(f"max_len has to be at least 1 (got max_len={max_len})")
        self.head_dim = head_dim
        self.base = float(base)
        self.register_buffer("cos_table", torch.empty(0), persistent=False)
        self.register_buffer("sin_table", torch.empty(0), persistent=False)
        self._fill(max_len, torch.device("cpu"))

    def _fill(self, n, device):
        exponent = torch.arange(self.head_dim // 2, device=device, dtype=torch.float32) * 2 / self.head_dim
        theta = torch.pow(torch.tensor(self.base, device=device), -exponent)
        pos = torch.arange(n, device=device).to(torch.float32)
        angle = pos.unsqueeze(1) * theta.unsqueeze(0)  # float32
        z = torch.polar(torch.ones_like(angle), angle)
        # (n, 2, d/2) -> (n, d): first half and second half are the same angles
        self.cos_table = z.real.unsqueeze(1).expand(n, 2, -1).reshape(n, self.head_dim).contiguous()
        self.sin_table = z.imag.unsqueeze(1).expand(n, 2, -1).reshape(n, self.head_dim).contiguous()

    def forward(self, position_ids, dtype=None):
        if position_ids.numel():
            lo, hi = int(position_ids.min()), int(position_ids.max())
            if lo < 0:
                raise ValueError(f"position_ids contains a negative position ({lo})")
            n = self.cos_table.shape[0]
            if hi >= n:
                while n <= hi:
                    n *= 2
                self._fill(n, self.cos_table.device)
        flat = position_ids.reshape(-1)
        shape = tuple(position_ids.shape) + (self.head_dim,)
        cos = self.cos_table.index_select(0, flat).reshape(shape)
        sin = self.sin_table.index_select(0, flat).reshape(shape)
        out = dtype if dtype is not None else torch.float32
        return cos.to(out), sin.to(out)
