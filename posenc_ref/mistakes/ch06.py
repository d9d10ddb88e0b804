"""Chapter 6 mistakes, by hand: the rotary cache built the ways learners (and tutorials) get it wrong.

IMPLEMENTATIONS maps each mistake's name to its wrong implementation; its exercise and message are declared in
grader/checks/ch06.py.
"""

from __future__ import annotations

import torch

from .. import ch06_performance as ref


def _angles(length, head_dim, base, device=None, dtype=torch.float32):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim))
    return torch.arange(length, dtype=dtype, device=device)[:, None] * inv_freq.to(dtype)  # (length, d/2)


class _Interleaved(ref.RotaryCache):
    """repeat_interleave(2) builds the GPT-J layout (t0, t0, t1, t1, ...) instead of cat(freqs, freqs)."""

    def _build(self, length, device):
        emb = _angles(length, self.head_dim, self.base, device).repeat_interleave(2, dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)
        self.max_len = length


class _NotGrown(ref.RotaryCache):
    """Never grows: positions past the table silently read its last row."""

    def forward(self, position_ids, dtype=None):
        idx = position_ids.clamp(max=self.cos_cached.shape[0] - 1)
        dtype = dtype or torch.float32
        return self.cos_cached[idx].to(dtype), self.sin_cached[idx].to(dtype)


class _LowPrecisionAngles(ref.RotaryCache):
    """Computes the angles in the requested dtype (float16) instead of float32, then cos/sin."""

    def forward(self, position_ids, dtype=None):
        dtype = dtype or torch.float32
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float32,
                                                     device=position_ids.device) / self.head_dim))
        freqs = position_ids[..., None].to(dtype) * inv_freq.to(dtype)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


IMPLEMENTATIONS = {
    "cache_interleaved": _Interleaved,
    "cache_not_grown": _NotGrown,
    "cache_low_precision_angles": _LowPrecisionAngles,
}

