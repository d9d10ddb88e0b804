# Generated from course/07_train_short_test_long/probes.py by `python -m grader build`: edit there.
"""Chapter 7 probes: the learner's PositionalAttention and TinyDecoder wired to position schemes built
here from plain seeded tensors, with seeded weights loaded by name.

The schemes follow the chapter's interface (three hooks: embed, rotate, bias) and are written here,
independently of the course's code, so the grader needs nothing but torch to plug them in:

    none     every hook is the identity (NoPE)
    table    embed: x + T[p] with a seeded table T (an absolute scheme)
    bias     bias: B[h, clip(j - i, -K, K) + K] with a seeded (H, 2K+1) table (a learned relative bias)
    alibi    bias: -m_h |j - i|, m_h = 2^(-8h/H) (Press et al., 2022)
    rotary   rotate: half-layout RoPE with base^(-2i/d), cos and sin times an attention factor
    all      table, bias and rotary at once: each hook must be called at its own place
"""

from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F
from torch import nn

try:
    from .probes_base import _dtype, _get, _pack, _skip_without, build, registry
    from .probes_ch04 import _forward
    from .probes_meta import on_meta
except ImportError:  # flat in the sandbox
    from probes_base import _dtype, _get, _pack, _skip_without, build, registry
    from probes_ch04 import _forward
    from probes_meta import on_meta

PROBES, probe = registry()


# ----------------------------------------------------------------------------------------------
# schemes made of plain tensors
# ----------------------------------------------------------------------------------------------
class _Identity(nn.Module):
    def embed(self, x, position_ids):
        return x

    def rotate(self, t, position_ids):
        return t

    def bias(self, q_positions, k_positions):
        return None


class _ProbeScheme(_Identity):
    """Any subset of the three hooks, each made of seeded tensors."""

    def __init__(self, kind, d_model, num_heads, seed=0, max_len=64, max_distance=3, base=10000.0,
                 attention_factor=1.0, trainable=False, float32=False):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.kind, self.max_distance, self.attention_factor = kind, max_distance, attention_factor
        head_dim = d_model // num_heads
        if kind in ("table", "all"):
            self.register_buffer("table", torch.randn(max_len, d_model, generator=gen) * 0.5)  # (P, d)
        if kind in ("bias", "all"):
            rel = torch.randn(num_heads, 2 * max_distance + 1, generator=gen)  # (H, 2K+1)
            if trainable:
                self.rel = nn.Parameter(rel)
            elif float32:  # a bias computed in float32 whatever the model's dtype (as the lab's adapters do):
                # kept as integers in units of 2^-20, which .to(dtype) leaves alone
                self.register_buffer("rel_fixed", (rel * 2**20).round().long())
            else:
                self.register_buffer("rel", rel)
        if kind == "alibi":
            # m_h = 2^(-8h/H), h = 1..H
            self.register_buffer("slopes", 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads))
        if kind in ("rotary", "all"):
            # theta_i = base^(-2i/d)
            self.register_buffer("inv_freq", base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))

    def embed(self, x, position_ids):
        if not hasattr(self, "table"):
            return x
        return x + self.table[position_ids].to(x.dtype)  # (B, L, d)

    def rotate(self, t, position_ids):
        if not hasattr(self, "inv_freq"):
            return t
        angles = position_ids[:, None].float() * self.inv_freq  # (L, d/2), float32
        cos = (angles.cos() * self.attention_factor).to(t.dtype)
        sin = (angles.sin() * self.attention_factor).to(t.dtype)
        half = t.shape[-1] // 2
        t1, t2 = t[..., :half], t[..., half:]
        return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), dim=-1)

    def bias(self, q_positions, k_positions):
        distance = k_positions[None, :] - q_positions[:, None]  # (Lq, Lk): j - i
        index = distance.clamp(-self.max_distance, self.max_distance) + self.max_distance
        if hasattr(self, "rel"):
            return self.rel[:, index]  # (H, Lq, Lk)
        if hasattr(self, "rel_fixed"):
            return self.rel_fixed[:, index].float() / 2**20  # (H, Lq, Lk), float32
        if hasattr(self, "slopes"):
            return -self.slopes[:, None, None] * distance.abs()  # (H, Lq, Lk)
        return None


def make_scheme(spec, d_model, num_heads):
    spec = dict(spec)
    kind = spec.pop("kind")
    return _Identity() if kind == "none" else _ProbeScheme(kind, d_model, num_heads, **spec)


# ----------------------------------------------------------------------------------------------
# seeded weights, loaded by name
# ----------------------------------------------------------------------------------------------
def _seeded(shapes, seed):
    """{name: tensor} in name order: weights N(0, 1/fan_in), norm weights 1 + N(0, 0.01), biases N(0, 0.01),
    the token table N(0, 1/d) (scaled by sqrt(d) in the model)."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in sorted(shapes.items()):
        noise = torch.randn(shape, generator=gen)
        if name.endswith("norm.weight"):
            out[name] = 1.0 + 0.1 * noise
        elif name.endswith("bias"):
            out[name] = 0.1 * noise
        else:
            out[name] = noise / math.sqrt(shape[-1])
    return out


def attention_shapes(d_model, prefix=""):
    return {f"{prefix}{p}.weight": (d_model, d_model) for p in ("q_proj", "k_proj", "v_proj", "o_proj")}


def decoder_shapes(vocab_size, d_model, num_layers):
    shapes = {"embed_tokens.weight": (vocab_size, d_model), "norm.weight": (d_model,), "norm.bias": (d_model,)}
    for n in range(num_layers):
        layer = f"layers.{n}."
        shapes.update(attention_shapes(d_model, layer + "attn."))
        for norm in ("attn_norm", "mlp_norm"):
            shapes[f"{layer}{norm}.weight"] = shapes[f"{layer}{norm}.bias"] = (d_model,)
        shapes.update({f"{layer}mlp.0.weight": (4 * d_model, d_model), f"{layer}mlp.0.bias": (4 * d_model,),
                       f"{layer}mlp.2.weight": (d_model, 4 * d_model), f"{layer}mlp.2.bias": (d_model,)})
    return shapes


PROJECTION_BIAS = re.compile(r"(^|\.)[qkvo]_proj\.bias$")
NAMES_HINT = {
    "attention": "the projections are nn.Linear(d_model, d_model, bias=False) named q_proj, k_proj, v_proj, o_proj",
    "decoder": ("name them embed_tokens, layers.<n>.attn_norm, layers.<n>.attn.{q,k,v,o}_proj, layers.<n>.mlp_norm, "
                "layers.<n>.mlp (nn.Sequential: Linear, GELU, Linear), norm"),
}


def _load(module, shapes, scheme, seed, what):
    """Load seeded weights by name; refuse missing names and trainable parameters nobody asked for."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"built a {type(module).__name__}, not an nn.Module")
    ours = {id(p) for p in scheme.parameters()}
    params = {name: p for name, p in module.named_parameters() if id(p) not in ours}
    missing = [name for name in shapes if name not in params]
    if missing:
        raise ValueError(f"the module has no parameter {missing[0]!r}: {NAMES_HINT[what]}")
    # projections built with bias=True: zero biases compute what the asked-for projections compute, so only
    # the parameter-count checks say it (one mistake, its own checks)
    projection_biases = [name for name in params if name not in shapes and PROJECTION_BIAS.search(name)]
    with torch.no_grad():
        for name in projection_biases:
            params[name].zero_()
    extra = sorted(name for name, p in params.items()
                   if name not in shapes and p.requires_grad and name not in projection_biases)
    if extra:
        tied = " (the output head is embed_tokens.weight itself: weight tying)" if what == "decoder" else ""
        raise ValueError(f"unexpected trainable parameters {extra[:3]}{tied}")
    wrong = [(n, tuple(params[n].shape), s) for n, s in shapes.items() if tuple(params[n].shape) != tuple(s)]
    if wrong:
        name, got, want = wrong[0]
        raise ValueError(f"parameter {name!r} has shape {got}, expected {want}")
    with torch.no_grad():
        for name, value in _seeded(shapes, seed).items():
            params[name].copy_(value)
    return module


def _attention(ns, exercise, d_model, num_heads, scheme, seed):
    scheme = make_scheme(scheme, d_model, num_heads)
    module = _get(ns, exercise)(d_model, num_heads, scheme)
    return _load(module, attention_shapes(d_model), scheme, seed, "attention").eval()


def _decoder(ns, exercise, vocab_size, d_model, num_layers, num_heads, scheme, seed, causal=None):
    scheme = make_scheme(scheme, d_model, num_heads)
    cls = _get(ns, exercise)
    module = cls(vocab_size, d_model, num_layers, num_heads, scheme) if causal is None else \
        cls(vocab_size, d_model, num_layers, num_heads, scheme, causal=causal)
    return _load(module, decoder_shapes(vocab_size, d_model, num_layers), scheme, seed, "decoder").eval()


def _place(module, device, dtype):
    if device is not None or dtype is not None:
        module = module.to(device=device, dtype=_dtype(dtype))
    return module


def _decode(module, x, prefix, chunk):
    """The sequence fed as a prefix, then chunks, each with the cache the previous call returned."""
    outs, cache, start = [], None, 0
    while start < x.shape[1]:
        end = min(x.shape[1], start + (prefix if start == 0 else chunk))
        out, cache = module(x[:, start:end]) if cache is None else module(x[:, start:end], kv_caches=cache)
        outs.append(out)
        start = end
    return torch.cat(outs, dim=1), cache


def _decoder_call(module, tokens, kv_caches=None):
    result = module(tokens) if kv_caches is None else module(tokens, kv_caches=kv_caches)
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and isinstance(result[1], (tuple, list))):
        raise TypeError(f"forward returned a {type(result).__name__}; it must return (logits, kv_caches)")
    return result[0], list(result[1])


# ----------------------------------------------------------------------------------------------
# PositionalAttention
# ----------------------------------------------------------------------------------------------
@probe
def scheme_attention(ns, exercise, d_model, num_heads, scheme, x, position_ids=None, causal=None, device=None,
                     dtype=None, seed=0):
    """One forward pass: the output and the returned (k, v)."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _place(_attention(ns, exercise, d_model, num_heads, scheme, seed), device, dtype)
    positions = None if position_ids is None else torch.tensor(position_ids, device=device or "cpu")
    with torch.no_grad():
        out, (k, v) = _forward(module, build(x, device, _dtype(dtype)), positions, causal)
    result = _pack({}, "out", out)
    _pack(result, "k", k)
    return _pack(result, "v", v)


@probe
def scheme_attention_decode(ns, exercise, d_model, num_heads, scheme, x, prefix, chunk=1, device=None, dtype=None,
                            seed=0):
    """The full causal pass, then the same tokens as a prefix and chunks with the cache."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _place(_attention(ns, exercise, d_model, num_heads, scheme, seed), device, dtype)
    x = build(x, device, _dtype(dtype))
    with torch.no_grad():
        full, _ = _forward(module, x)
        outs, cache, start = [], None, 0
        while start < x.shape[1]:
            end = min(x.shape[1], start + (prefix if start == 0 else chunk))
            out, cache = _forward(module, x[:, start:end], kv_cache=cache)
            outs.append(out)
            start = end
    result = _pack({}, "full", full)
    _pack(result, "out", torch.cat(outs, dim=1))
    _pack(result, "k", cache[0])
    return _pack(result, "v", cache[1])


@probe
def scheme_attention_info(ns, exercise, d_model, num_heads):
    """Parameters of the block with a parameter-free scheme."""
    module = _get(ns, exercise)(d_model, num_heads, _Identity())
    params = list(module.parameters())
    return {"n_trainable": sum(p.numel() for p in params if p.requires_grad),
            "n_params": sum(p.numel() for p in params)}


# ----------------------------------------------------------------------------------------------
# TinyDecoder
# ----------------------------------------------------------------------------------------------
@probe
def scheme_decoder(ns, exercise, vocab_size, d_model, num_layers, num_heads, scheme, tokens, causal=None, device=None,
                   dtype=None, seed=0):
    """Logits of one forward pass."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _place(_decoder(ns, exercise, vocab_size, d_model, num_layers, num_heads, scheme, seed, causal),
                    device, dtype)
    with torch.no_grad():
        logits, _ = _decoder_call(module, build(tokens, device))
    return _pack({}, "out", logits)


@probe
def scheme_decoder_decode(ns, exercise, vocab_size, d_model, num_layers, num_heads, scheme, tokens, prefix, chunk=1,
                          device=None, dtype=None, seed=0):
    """Logits of the full pass, and of the same tokens fed as a prefix and chunks with the caches."""
    skipped = _skip_without(device)
    if skipped:
        return skipped
    module = _place(_decoder(ns, exercise, vocab_size, d_model, num_layers, num_heads, scheme, seed), device, dtype)
    tokens = build(tokens, device)
    with torch.no_grad():
        full, _ = _decoder_call(module, tokens)
        outs, caches, start = [], None, 0
        while start < tokens.shape[1]:
            end = min(tokens.shape[1], start + (prefix if start == 0 else chunk))
            out, caches = _decoder_call(module, tokens[:, start:end], caches)
            outs.append(out)
            start = end
    result = _pack({}, "full", full)
    _pack(result, "out", torch.cat(outs, dim=1))
    _pack(result, "k", caches[-1][0])
    return _pack(result, "v", caches[-1][1])


@probe
def scheme_decoder_info(ns, exercise, vocab_size, d_model, num_layers, num_heads):
    """Parameters of the decoder with a parameter-free scheme; those outside the attention blocks apart (the
    attention's own are PositionalAttention's business)."""
    module = _get(ns, exercise)(vocab_size, d_model, num_layers, num_heads, _Identity())
    named = list(module.named_parameters())
    return {"n_trainable": sum(p.numel() for _, p in named if p.requires_grad),
            "n_params": sum(p.numel() for _, p in named),
            "n_params_outside_attention": sum(p.numel() for name, p in named if ".attn." not in f".{name}")}


def _adamw(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    """One AdamW step (Loshchilov & Hutter, 2019) on `params` per call, with torch.optim.AdamW's defaults. Written
    out: torch.optim's `step` imports torch._dynamo on its first call (about a second in a fresh process), which
    every sandbox child that runs this probe and a learner's first check of the decoder would pay."""
    beta1, beta2 = betas
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    t = 0

    @torch.no_grad()
    def step():
        nonlocal t
        t += 1
        for p, m_i, v_i in zip(params, m, v):
            if p.grad is None:
                continue
            # decoupled weight decay: θ ← θ (1 − lr λ)
            p.mul_(1 - lr * weight_decay)
            # m ← β1 m + (1 − β1) g,  v ← β2 v + (1 − β2) g²
            m_i.mul_(beta1).add_(p.grad, alpha=1 - beta1)
            v_i.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
            # θ ← θ − lr m̂ / (√v̂ + ε),  m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)
            denominator = (v_i / (1 - beta2 ** t)).sqrt_().add_(eps)
            p.addcdiv_(m_i, denominator, value=-lr / (1 - beta1 ** t))

    return step


@probe
def decoder_trains(ns, exercise, vocab_size, d_model, num_layers, num_heads, tokens, steps=25, lr=1e-2, seed=0):
    """AdamW on one fixed batch, with a scheme whose bias table is trainable: the losses, and how far the
    scheme's table moved (it moves only when the scheme is registered in the model)."""
    scheme = make_scheme({"kind": "bias", "seed": seed + 1, "trainable": True}, d_model, num_heads)
    cls = _get(ns, exercise)
    module = _load(cls(vocab_size, d_model, num_layers, num_heads, scheme),
                   decoder_shapes(vocab_size, d_model, num_layers), scheme, seed, "decoder").train()
    batch = build(tokens)  # (B, L + 1)
    inputs, targets = batch[:, :-1], batch[:, 1:]
    start = scheme.rel.detach().clone()
    step = _adamw(list(module.parameters()), lr)
    losses = []
    for _ in range(steps):
        logits, _ = _decoder_call(module, inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))
        module.zero_grad()
        loss.backward()
        step()
        losses.append(loss.item())
    return {"losses": torch.tensor(losses, dtype=torch.float64),
            "scheme_moved": float((scheme.rel.detach() - start).abs().max())}


@probe
def scheme_sdpa_mask_dtype(ns, exercise, d_model, num_heads, scheme, x, dtype, seed=0):
    """One forward pass of a module in `dtype` whose scheme makes its bias in float32, with SDPA watched: the
    number of calls that got a floating attn_mask of another dtype than q (0 when the bias was cast; a block
    that computes its softmax itself never calls SDPA, and is not concerned)."""
    module = _place(_attention(ns, exercise, d_model, num_heads, scheme, seed), None, dtype)
    original, seen = F.scaled_dot_product_attention, []

    def watched(q, k, v, attn_mask=None, *args, **kwargs):
        if isinstance(attn_mask, torch.Tensor) and attn_mask.is_floating_point():
            seen.append(attn_mask.dtype != q.dtype)
        return original(q, k, v, attn_mask, *args, **kwargs)

    F.scaled_dot_product_attention = watched
    try:
        with torch.no_grad():
            _forward(module, build(x, None, _dtype(dtype)))
    finally:
        F.scaled_dot_product_attention = original
    return {"mismatched": torch.tensor([float(sum(seen))]), "calls": len(seen)}


@probe
def scheme_repeat(ns, exercise, model, scheme, seed=0, **sizes):
    """The same input twice through the module in eval mode: both outputs (they must be equal)."""
    if model == "attention":
        module = _attention(ns, exercise, sizes["d_model"], sizes["num_heads"], scheme, seed)
        x = build(sizes["x"])
        with torch.no_grad():
            first, second = _forward(module, x)[0], _forward(module, x)[0]
    else:
        module = _decoder(ns, exercise, sizes["vocab_size"], sizes["d_model"], sizes["num_layers"],
                          sizes["num_heads"], scheme, seed)
        tokens = build(sizes["tokens"])
        with torch.no_grad():
            first, second = _decoder_call(module, tokens)[0], _decoder_call(module, tokens)[0]
    return _pack(_pack({}, "first", first), "second", second)


# ----------------------------------------------------------------------------------------------
# the meta device: every tensor built on the input's device
# ----------------------------------------------------------------------------------------------
@probe
def scheme_meta(ns, exercise, model, ctor_args, scheme, seq, cached=0):
    """Build the module with `scheme` on the CPU, move everything to `meta`, and run a forward pass on meta
    inputs (after `cached` tokens in a meta KV cache when cached > 0)."""
    if model == "attention":
        d_model, num_heads = ctor_args
        num_layers = 1
    else:
        _, d_model, num_layers, num_heads = ctor_args
    module = _get(ns, exercise)(*ctor_args, make_scheme(scheme, d_model, num_heads))
    head_dim = d_model // num_heads

    def run():
        moved = module.to("meta")  # inside the mode: the tables keep their values as shadows
        caches = [(torch.zeros(1, num_heads, cached, head_dim, device="meta"),) * 2 for _ in range(num_layers)]
        if model == "attention":
            x = torch.zeros(1, seq, d_model, device="meta")
            return moved(x, kv_cache=caches[0]) if cached else moved(x)
        tokens = torch.zeros(1, seq, dtype=torch.long, device="meta")
        return moved(tokens, kv_caches=caches) if cached else moved(tokens)

    return on_meta(run)[0]
