"""One decoder layer's attention as today's models configure it, built from *your* chapter 9 functions.

A layer's `LayerPlan` says what its attention does: RoPE with which frequencies (or none: a NoPE layer), which
keys a query may see (all earlier ones, the same chunk, a sliding window), whether a NoPE layer's queries get
Llama 4's temperature, and whether the softmax has a learned sink per head (GPT-OSS). `LayerAttention` wraps
chapter 7's `PositionalAttention` (its four projections, trained as they are) and replaces only its forward:

    q, k, v = split(W_q x), split(W_k x), split(W_v x)               (B, H, L, d_head)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)          RoPE layers (chapter 4)
    q = q * tau(p)                                                   NoPE layers with the temperature (9.x)
    out = softmax(q kᵀ / sqrt(d_head) + mask [+ sink]) v             the mask of 9.x; sinks: attention_with_sinks

Every formula here is a call of the implementation `impl` it is given (an object or a namespace with
`apply_rope`, `nope_layer_temperature`, `chunked_causal_mask`, `sliding_window_mask`, `attention_with_sinks`);
this file only decides which function each layer calls, with what.
"""

from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn

CAUSAL, CHUNKED, WINDOW, WINDOW_FIRST = "causal", "chunked", "window", "window + first token"


@dataclasses.dataclass
class LayerPlan:
    inv_freq: torch.Tensor | None = None  # (d_head / 2,) RoPE's frequencies; None: a NoPE layer
    mask: str = CAUSAL  # which keys a query may see: CAUSAL, CHUNKED, WINDOW or WINDOW_FIRST
    span: int = 0  # the chunk size or the window
    temperature: tuple | None = None  # (floor_scale, attn_scale) of Llama 4's NoPE layers; None: no temperature
    sinks: bool = False  # a learned sink logit per head (GPT-OSS)

    def describe(self):
        """The plan as data for results.json (English keys, the same in every language)."""
        longest = None if self.inv_freq is None else round(2 * math.pi / self.inv_freq.min().item(), 1)
        return {"rope": self.inv_freq is not None, "rope_wavelength_max": longest,
                "mask": self.mask, "span": self.span or None,
                "temperature": list(self.temperature) if self.temperature else None, "sinks": self.sinks}


def attention_mask(impl, plan, length):
    """(length, length) bool, True = may attend, for a window of `length` tokens (no cache); None: plain causal."""
    if plan.mask == CHUNKED:
        return impl.chunked_causal_mask(length, plan.span)  # (L, L)
    if plan.mask == WINDOW:
        return impl.sliding_window_mask(length, plan.span)
    if plan.mask == WINDOW_FIRST:  # StreamingLLM (Xiao et al. 2024): the window, and the first token always
        mask = impl.sliding_window_mask(length, plan.span).clone()  # (L, L)
        mask[:, 0] = True  # key 0 is at or before every query
        return mask
    return None


def causal(length, device=None):
    """(length, length) bool: query i sees keys j <= i."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


class LayerAttention(nn.Module):
    """Chapter 7's attention module `inner` (its q_proj, k_proj, v_proj, o_proj) with the forward a `LayerPlan`
    describes. Called as chapter 7's DecoderBlock calls its attention: (x, position_ids, causal, kv_cache)."""

    def __init__(self, inner, impl, plan):
        super().__init__()
        self.inner, self.impl, self.plan = inner, impl, plan
        self.num_heads, self.head_dim = inner.num_heads, inner.head_dim
        # GPT-OSS: one sink logit per head, initialised N(0, 0.02^2)
        self.sinks = nn.Parameter(torch.randn(self.num_heads) * 0.02) if plan.sinks else None  # (H,)
        self.record = None  # a list: each forward appends its attention probabilities (B, H, L, S) there

    def forward(self, x, position_ids=None, causal_mask=True, kv_cache=None):
        if kv_cache is not None or not causal_mask:
            raise NotImplementedError("chapter 9's layers run causal windows without a cache")
        batch, length, _ = x.shape
        if position_ids is None:
            position_ids = torch.arange(length, device=x.device)  # (L,)

        def heads(t):  # (B, L, d) -> (B, H, L, d_head)
            return t.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.inner.q_proj(x)), heads(self.inner.k_proj(x)), heads(self.inner.v_proj(x))
        plan = self.plan
        if plan.inv_freq is not None:
            # angle[p, i] = p * inv_freq[i], written twice (half layout, chapter 4)
            angles = position_ids[:, None].float() * plan.inv_freq.to(x.device)  # (L, d_head / 2)
            emb = torch.cat((angles, angles), dim=-1)  # (L, d_head)
            q, k = self.impl.apply_rope(q, emb.cos(), emb.sin()), self.impl.apply_rope(k, emb.cos(), emb.sin())
        if plan.temperature is not None:
            floor_scale, attn_scale = plan.temperature
            # q_p <- q_p * tau(p), tau from your nope_layer_temperature
            tau = self.impl.nope_layer_temperature(position_ids, floor_scale, attn_scale)  # (L,)
            q = q * tau.to(q.dtype)[:, None]  # (B, H, L, d_head)
        mask = attention_mask(self.impl, plan, length)  # (L, L) or None
        out = self._attend(q, k, v, mask)  # (B, H, L, d_head)
        if self.record is not None:  # the probabilities: the same attention applied to one-hot values
            eye = torch.eye(length, dtype=q.dtype, device=q.device).expand(batch, self.num_heads, length, length)
            self.record.append(self._attend(q, k, eye, mask).detach())  # (B, H, L, L)
        out = out.transpose(1, 2).reshape(batch, length, self.num_heads * self.head_dim)  # (B, L, d)
        return self.inner.o_proj(out), (k, v)

    def _attend(self, q, k, v, mask):
        if self.sinks is not None:
            full = causal(q.shape[2], q.device) if mask is None else mask  # (L, L)
            return self.impl.attention_with_sinks(q, k, v, self.sinks, full, 1.0 / math.sqrt(self.head_dim))
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.device))
