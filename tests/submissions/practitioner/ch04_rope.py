"""Practitioner-style chapter 4, correct, in the style of transformers and popular rotary libraries:
the tables are computed under torch.autocast(device_type=..., enabled=False) with a matmul of
inv_freq against the positions; apply_rope upcasts to float32 and casts back; the interleaved layout
uses GPT-J's rotate_every_two in float64; the attention layer keeps its frequencies in a frozen
nn.Parameter (requires_grad=False) that stays float32 when the module is cast; validation messages are
worded their own way."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def rope_inv_freq(head_dim, base=10000.0, device=None):
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"rotary embeddings pair coordinates: head_dim={head_dim} must be even and positive")
    return 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64, device=device).float() / head_dim))


def rope_cos_sin(position_ids, head_dim, base=10000.0):
    inv_freq = rope_inv_freq(head_dim, base, device=position_ids.device)
    lead = position_ids.shape
    pos = position_ids.reshape(1, -1)  # (1, N)
    inv_freq_expanded = inv_freq[None, :, None].float()  # (1, d/2, 1)
    with torch.autocast(device_type=position_ids.device.type, enabled=False):  # force float32
        freqs = (inv_freq_expanded @ pos[:, None, :].float()).transpose(1, 2)  # (1, N, d/2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
    return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)


def rotate_half(x):
    if x.shape[-1] % 2:
        raise ValueError(f"rotate_half needs an even last dimension, not {x.shape[-1]}")
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    rotary_dim = cos.shape[-1]
    if rotary_dim % 2 or rotary_dim > x.shape[-1]:
        raise ValueError(f"tables of width {rotary_dim} do not fit a head of {x.shape[-1]}")
    if cos.dim() == 3:
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    work = torch.promote_types(x.dtype, torch.float32)  # half precision rotates in float32
    x_f = x_rot.to(work)
    out = x_f * cos.to(work) + rotate_half(x_f) * sin.to(work)
    return torch.cat((out.to(x.dtype), x_pass), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope_interleaved(x, position_ids, base=10000.0):
    dim = x.shape[-1]
    if dim % 2:
        raise ValueError(f"odd head_dim={dim} cannot be paired")
    inv_freq = rope_inv_freq(dim, base, device=x.device)
    with torch.autocast(device_type=x.device.type, enabled=False):
        sinusoid = torch.einsum("...i,j->...ij", position_ids.to(x.device).float(), inv_freq)  # (..., L, d/2)
        if sinusoid.dim() == 3:
            sinusoid = sinusoid[:, None]
        sin = torch.repeat_interleave(sinusoid.sin(), 2, dim=-1).double()
        cos = torch.repeat_interleave(sinusoid.cos(), 2, dim=-1).double()
        out = x.double() * cos + rotate_every_two(x.double()) * sin
    return out.to(x.dtype)


def interleaved_to_half_perm(head_dim):
    if head_dim < 1 or head_dim % 2:
        raise ValueError(f"head_dim={head_dim} is not a positive even number")
    return torch.arange(head_dim).view(head_dim // 2, 2).t().reshape(-1)


def check_relative_property(rope_fn, head_dim):
    """Norms, relative scores on every pair of 300 positions, and a rotation that moves at all."""
    gen = torch.Generator().manual_seed(7)
    vecs = torch.randn(3, 2, head_dim, generator=gen)  # 3 pairs (q, k)
    positions = torch.arange(300)
    for q, k in vecs:
        fq = rope_fn(q.expand(1, 1, 300, head_dim).clone(), positions)[0, 0].double()
        fk = rope_fn(k.expand(1, 1, 300, head_dim).clone(), positions)[0, 0].double()
        qn, kn = q.double().norm(), k.double().norm()
        if not torch.allclose(fq.norm(dim=-1), qn.expand(300), rtol=5e-4, atol=0):
            return False
        if not torch.allclose(fk.norm(dim=-1), kn.expand(300), rtol=5e-4, atol=0):
            return False
        if float((fq - fq[:1]).norm(dim=-1).max()) < 1e-3 * float(qn):
            return False
        scores = fq @ fk.T  # (P, P)
        for shift in range(1, 300):  # every diagonal must be constant
            diag = torch.diagonal(scores, offset=shift)
            low = torch.diagonal(scores, offset=-shift)
            if (diag - diag[0]).abs().max() > 1e-3 * qn * kn or (low - low[0]).abs().max() > 1e-3 * qn * kn:
                return False
    return True


class RoPEAttention(nn.Module):
    def __init__(self, d_model, num_heads, base=10000.0):
        super().__init__()
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        head_dim = d_model // num_heads
        if head_dim % 2:
            raise ValueError(f"RoPE needs an even head_dim; got head_dim={head_dim}")
        self.num_heads, self.head_dim, self.hidden = num_heads, head_dim, d_model
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, d_model, bias=False)
        self.v_proj = nn.Linear(d_model, d_model, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)
        # frozen, not trained; kept float32 when the module is cast (see _apply)
        self.inv_freq = nn.Parameter(rope_inv_freq(head_dim, base), requires_grad=False)

    def _apply(self, fn, recurse=True):
        kept = self.inv_freq.data
        super()._apply(fn, recurse)
        self.inv_freq.data = kept.to(device=self.inv_freq.device, dtype=torch.float32)
        return self

    def forward(self, x, position_ids=None, causal=True, kv_cache=None):
        bsz, q_len, _ = x.shape
        past = 0 if kv_cache is None else kv_cache[0].shape[-2]
        if position_ids is None:
            position_ids = torch.arange(past, past + q_len, device=x.device)
        shape = (bsz, q_len, self.num_heads, self.head_dim)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        with torch.autocast(device_type=x.device.type, enabled=False):
            freqs = position_ids.to(x.device).float()[..., None] * self.inv_freq.float()
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if kv_cache is not None:
            k = torch.cat((kv_cache[0], k), dim=-2)
            v = torch.cat((kv_cache[1], v), dim=-2)
        kv_len = k.shape[-2]
        mask = None
        if causal and q_len > 1:
            mask = torch.ones(q_len, kv_len, dtype=torch.bool, device=x.device).tril(kv_len - q_len)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1 / math.sqrt(self.head_dim))
        out = out.transpose(1, 2).reshape(bsz, q_len, self.hidden)
        return self.o_proj(out), (k, v)
