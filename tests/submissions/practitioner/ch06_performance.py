"""Practitioner-style chapter 6, correct: the tables computed under torch.autocast(..., enabled=False)
with einsum, registered as non-persistent buffers, grown on the buffers' device, looked up with
F.embedding."""
import torch
import torch.nn.functional as F
from torch import nn


class RotaryCache(nn.Module):
    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        if head_dim <= 0 or head_dim % 2:
            raise ValueError(f"head_dim={head_dim}: expected a positive even number")
        if max_len <= 0:
            raise ValueError(f"max_len={max_len}: expected a positive length")
        self.head_dim, self.base = head_dim, base
        self._set_cos_sin_cache(max_len, torch.device("cpu"))

    def _set_cos_sin_cache(self, seq_len, device):
        self.max_seq_len_cached = seq_len
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, device=device).float() / self.head_dim))
        t = torch.arange(seq_len, device=device, dtype=torch.float32)
        with torch.autocast(device_type=device.type, enabled=False):
            freqs = torch.einsum("i,j->ij", t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos_cached", emb.cos(), persistent=False)
            self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, position_ids, dtype=None):
        if position_ids.numel() and int(position_ids.min()) < 0:
            raise ValueError("position_ids must not hold negative positions")
        if position_ids.numel() and int(position_ids.max()) >= self.max_seq_len_cached:
            self._set_cos_sin_cache(2 * int(position_ids.max()) + 1, self.cos_cached.device)
        dtype = dtype or torch.float32
        cos, sin = F.embedding(position_ids, self.cos_cached), F.embedding(position_ids, self.sin_cached)
        return cos.to(dtype), sin.to(dtype)
