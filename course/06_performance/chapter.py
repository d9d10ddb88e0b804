# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Chapter 6 — Performance: measuring what positions cost
#
# Chapters 1–5 chose positional encodings for what they let a model *represent*. This chapter asks
# what they *cost*, and first how to find out without fooling yourself. A timing loop is an
# experiment: it has confounders (first-call costs, the number of threads, other processes) and a
# control (the same work for every scheme). Get either wrong and the numbers rank the schemes by
# the mistakes of the measurement.
#
# The answer, in short: on top of attention, an additive table costs one addition, RoPE a few
# elementwise operations on $q$ and $k$, and a float bias in the attention mask extra memory
# traffic — and on a GPU, the loss of the fastest attention kernel. The one expensive choice is
# materialising per-pair vectors, as Shaw's direct form does (chapter 3).
#
# You will implement `RotaryCache`, the precomputed cos/sin table that RoPE models keep beside their
# attention layers. Timing cells are tagged `demo`; they run in a few seconds and the grader never
# runs them.

# %%
#| export
import torch
from torch import nn

# %%
import math
import statistics
import time

import torch.nn.functional as F
from torch.utils import benchmark

from posenc_selfcheck import check

_ = torch.manual_seed(0)  # the same random numbers on every run

# %% tags=["demo"]
# Demo functions wear @demo: while an exercise they use is unfinished, they print one line instead of
# failing, and Run All goes on.
from posenc_selfcheck import demo

# %% [markdown]
# ## 6.1 How a timing loop misleads
#
# A common tutorial timing loop looks like this (rewritten, the same idea):
#
# ```python
# start = time.time(); out = x + sinusoidal_table(L, d);          t_sin = time.time() - start
# start = time.time(); q = apply_rope(q, cos, sin);               t_rope = time.time() - start
# start = time.time(); out = attention_with_bias(q, k, v, bias);  t_bias = time.time() - start
# ```
#
# Three things are wrong with it, and each can change the ranking:
#
# 1. **No warm-up.** The first call of an operation pays one-off costs: loading kernels, allocating
#    and caching memory, filling CPU caches, dispatch set-up; on a GPU, also CUDA context creation,
#    kernel compilation and autotuning. Whatever runs first looks slow.
# 2. **No thread control.** PyTorch uses every core by default, and the number differs between a
#    laptop, a CI runner and a shared server; a 2-core machine shared with other jobs gives noisy,
#    unrepeatable numbers. Fix the count with `torch.set_num_threads` (or the `num_threads` of
#    `torch.utils.benchmark.Timer`) and report it.
# 3. **Different work for each scheme.** The first line builds a table, the second rotates one
#    tensor, the third runs a whole attention. Comparing them compares *what was timed*, not the
#    schemes. Every scheme must do the same job — same shapes, same projections, the same attention
#    call — and differ only in its positional step.
#
# Add a fourth: **one run is an anecdote.** Repeat, report the median (robust to the occasional
# pause) and a spread (the interquartile range), and time calls long enough that the clock's
# resolution does not matter (`time.perf_counter`, never `time.time`).
#
# The cell below shows point 1 on this machine: the first call of an operation against the median
# of later ones.

# %% tags=["demo"]
def first_call_versus_steady_state(seq=128, heads=4, head_dim=32):
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, heads, seq, head_dim, generator=gen) for _ in range(3))
    bias = torch.randn(1, heads, seq, seq, generator=gen)  # a shape not used elsewhere in this notebook
    times = []
    for _ in range(21):
        start = time.perf_counter()
        F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        times.append(time.perf_counter() - start)
    print(f"first call {times[0] * 1e6:8.0f} µs; median of the next 20: {statistics.median(times[1:]) * 1e6:8.0f} µs")


first_call_versus_steady_state()

# %% [markdown]
# ## 6.2 A correct micro-benchmark
#
# The checklist:
#
# * warm up (a few untimed calls) before measuring;
# * fix the threads (`torch.set_num_threads(1)` makes CPU numbers comparable between machines);
# * time the **same work** for every scheme, in one function with the scheme as an argument;
# * repeat and report the median and the spread; on a GPU, call `torch.cuda.synchronize()` before
#   reading the clock, because kernels run asynchronously.
#
# `torch.utils.benchmark.Timer` does all of this: it warms up, sets the thread count, synchronises
# CUDA, picks the number of repeats itself (`blocked_autorange`), and returns a `Measurement` with a
# `.median` and an `.iqr`. It is what PyTorch's own developers use to compare kernels.
#
# The job below is one causal attention head group over a fixed input `x` of shape (B, L, D): project
# to $q, k, v$, run `F.scaled_dot_product_attention`, project back. The schemes differ only in
# their positional step:
#
# | scheme | positional step |
# | --- | --- |
# | none | — (`is_causal=True`) |
# | additive | `x + pe[:L]` before the projections (sinusoidal or learned: the same add) |
# | rope | rotate $q$ and $k$ with precomputed cos/sin |
# | bias | a float (H, L, L) bias plus the causal mask, passed as `attn_mask` |

# %% tags=["demo"]
def make_job(batch=2, seq=256, d_model=256, heads=4):
    """Inputs and tables shared by every scheme: only the positional step differs."""
    gen = torch.Generator().manual_seed(0)
    head_dim = d_model // heads
    x = torch.randn(batch, seq, d_model, generator=gen)
    w_qkv = torch.randn(3 * d_model, d_model, generator=gen) / math.sqrt(d_model)
    w_o = torch.randn(d_model, d_model, generator=gen) / math.sqrt(d_model)
    pe = torch.randn(seq, d_model, generator=gen)  # a table row per position: its values do not matter here
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    cos, sin = torch.cat((freqs, freqs), -1).cos(), torch.cat((freqs, freqs), -1).sin()  # (L, head_dim) each
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()
    bias = torch.randn(heads, seq, seq, generator=gen).masked_fill(~causal, float("-inf"))  # (H, L, L)
    return dict(x=x, w_qkv=w_qkv, w_o=w_o, pe=pe, cos=cos, sin=sin, bias=bias, heads=heads)


def rotate_half(t):
    half = t.shape[-1] // 2
    return torch.cat((-t[..., half:], t[..., :half]), dim=-1)


def attention_job(scheme, x, w_qkv, w_o, pe, cos, sin, bias, heads):
    """Project, attend (causal), project back; the scheme decides only the positional step."""
    batch, seq, d_model = x.shape
    if scheme == "additive":
        x = x + pe[:seq]  # one add
    q, k, v = (x @ w_qkv.T).view(batch, seq, 3, heads, -1).permute(2, 0, 3, 1, 4)  # (B, H, L, hd) each
    if scheme == "rope":
        q = q * cos + rotate_half(q) * sin  # elementwise on q ...
        k = k * cos + rotate_half(k) * sin  # ... and on k
    if scheme == "bias":
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # a float (H, L, L) mask is read
    else:
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return attended.transpose(1, 2).reshape(batch, seq, d_model) @ w_o.T


def compare_schemes(min_run_time=0.3, threads=1):
    job = make_job()
    results = {}
    for scheme in ("none", "additive", "rope", "bias"):
        timer = benchmark.Timer(stmt="attention_job(scheme, **job)", num_threads=threads,
                                globals={"attention_job": attention_job, "scheme": scheme, "job": job},
                                label="attention + positions", sub_label=scheme)
        attention_job(scheme, **job)  # warm-up (blocked_autorange also runs one untimed block)
        m = timer.blocked_autorange(min_run_time=min_run_time)
        results[scheme] = m
    base = results["none"].median
    print(f"B=2, L=256, D=256, H=4, float32, {threads} thread(s); median (IQR) per call")
    for scheme, m in results.items():
        print(f"{scheme:>9}: {m.median * 1e3:6.2f} ms (± {m.iqr * 1e3:4.2f})   {m.median / base:5.2f} × none")
    return results


timings = compare_schemes()

# %% [markdown]
# What you should see. Three runs on the 2-core shared CPU this chapter was written on (1 thread,
# torch 2.13, float32); yours will differ, the ranking should not:
#
# | scheme | median | vs none |
# | --- | --- | --- |
# | none | 3.9–4.1 ms | 1.00 |
# | additive | 3.9–4.2 ms | 1.01–1.03 |
# | rope | 4.2–5.6 ms | 1.02–1.40 |
# | bias | 5.5–6.6 ms | 1.41–1.66 |
#
# Note the spread *between runs* (RoPE moved from 1.02 to 1.40 on a machine shared with other
# jobs) even though each run's IQR was small: report the conditions, and rerun before trusting a
# difference of a few tens of percent.
#
# * **Additive** (sinusoidal or learned, chapters 1–2): one (L, D) addition before the projections,
#   lost in the noise next to three matrix products and an attention.
# * **RoPE** (chapter 4): a handful of elementwise passes over $q$ and $k$ (two multiplies, a
#   `cat`, an add, each): between a few and forty percent here, depending on the run. It leaves attention itself
#   untouched; fused kernels (Liger, FlashAttention's rotary kernel) fold it into one pass.
# * **Bias** (T5, ALiBi, chapter 3's bias through SDPA): the kernel must read an (H, L, L) float
#   tensor — $L^2$ numbers per head, the size of the attention matrix itself — and cannot use the
#   causal shortcut of skipping the upper triangle. That is memory traffic, and it grows with $L^2$.
#
# ### On a GPU: which kernel runs
#
# `F.scaled_dot_product_attention` dispatches to one of several backends: FlashAttention, the
# memory-efficient kernel, cuDNN's attention (`SDPBackend.CUDNN_ATTENTION`, on recent NVIDIA GPUs), or
# the plain math implementation. An arbitrary float `attn_mask` — a
# relative bias, an ALiBi slope matrix — **rules out the flash backend**; the memory-efficient kernel
# accepts it but must load the bias, and the math fallback materialises the full (B, H, L, L)
# scores. RoPE changes only $q$ and $k$ *before* the call, so it keeps the flash backend. That is one
# reason RoPE displaced learned biases in large models. (FlashAttention 2 added ALiBi as a built-in,
# computed inside the kernel from the slopes instead of read from memory.) The context manager
# `torch.nn.attention.sdpa_kernel(backends)` *selects*: inside it, SDPA may use only the backends
# listed. It does not report which one ran. To find out whether a call can use the flash kernel,
# allow only `SDPBackend.FLASH_ATTENTION`: with a float mask the call then raises an error instead of
# silently falling back (and a profiler, `torch.profiler`, names the kernel that did run).
#
# ### Shaw et al.: the form matters more than the scheme
#
# Chapter 3 measured the two forms of Shaw's relative attention (1 thread, B = 1, H = 8, d = 64):
# at L = 2048 the direct form needs 11.1 GB and 15.6 s, the efficient form 495 MB and 0.64 s. The
# same mathematics, 22× the memory and 24× the time — a bigger gap than between any two schemes
# above. This notebook does not rerun those sizes; see `benchmarks/bench_relative.py`.

# %% [markdown]
# ## 6.3 Caching the rotary table
#
# Chapter 4's `rope_cos_sin(position_ids, head_dim)` computes an outer product and two
# transcendental functions on every call. Every layer of a RoPE model needs the same cos/sin for the
# same positions, so practitioners compute the table **once**, for positions $0 \dots$ `max_len`-1,
# and look rows up: `cos_cached[position_ids]` is a gather, far cheaper than `cos` of a fresh
# angle tensor, and it works for any shape of `position_ids` — (seq,) for a prompt, (batch, seq)
# for left-padded batches, (batch, 1) while decoding.
#
# Four details decide whether the cache is right:
#
# * **The numbers.** Same convention as chapter 4: angles $p\,\theta_i$ in float32, half layout
#   `cat(freqs, freqs)`. Writing `repeat_interleave(2)` gives the interleaved (GPT-J) layout, which
#   `apply_rope` does not expect.
# * **The precision.** A model running in float16 wants float16 tables. Compute the angles in
#   float32 and *cast the result*. float16 keeps only about three significant decimal digits (11 bits):
#   between 64 and 128 its numbers are $1/16$ apart, so an angle $p\,\theta_i$ near $p = 100$ is off
#   by up to $0.03$ radians. bfloat16 keeps about two (8 bits): integers above 256 are no longer exact
#   (257 rounds to 256, and above 512 only every fourth integer exists), so positions or angles
#   computed in bfloat16 are off by whole tokens. Hugging Face's rotary classes disable autocast around
#   this computation for the same reason.
# * **Growth.** A position at or past `max_len` must still work: recompute a longer table (on the
#   device where the buffers are) instead of failing with an index error or, worse, clamping.
# * **Buffers.** Store the tables with `register_buffer(..., persistent=False)`: they follow
#   `.to(device)`, are not trained, and stay out of checkpoints (they are a function of `head_dim`
#   and `base`).

# %% [markdown]
# ### Exercise 6.1 — `RotaryCache(head_dim, base=10000.0, max_len=2048)`
#
# An `nn.Module` whose `forward(position_ids, dtype=None)` returns `(cos, sin)`, each of shape
# `position_ids.shape + (head_dim,)`, equal to chapter 4's `rope_cos_sin(position_ids, head_dim,
# base)`, in `dtype` (float32 when `None`), on the device of the buffers. Store the two
# (max_len, head_dim) tables as non-persistent buffers; grow them when a position reaches `max_len`.
# Raise `ValueError` naming the argument for an odd or non-positive `head_dim`, a non-positive
# `max_len`, and negative `position_ids`.

# %%
#| export
class RotaryCache(nn.Module):
    """Precomputed RoPE tables: cos/sin of p * theta_i (float32 angles, half layout cat(freqs, freqs)),
    looked up by position_ids and grown on demand. forward(position_ids, dtype=None) -> (cos, sin)."""

    def __init__(self, head_dim, base=10000.0, max_len=2048):
        super().__init__()
        ### BEGIN SOLUTION
        # Hint: the idea: validate, remember head_dim and base, build the first tables.
        #       Shapes: cos_cached, sin_cached (max_len, head_dim)
        if head_dim <= 0 or head_dim % 2 != 0:
            raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
        if max_len <= 0:
            raise ValueError(f"max_len must be positive, got max_len={max_len}")
        self.head_dim, self.base = head_dim, base
        self._build(max_len, device=None)
        ### END SOLUTION

    def _build(self, length, device):
        """Register cos_cached / sin_cached of shape (length, head_dim) on `device`; set self.max_len."""
        ### BEGIN SOLUTION
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
        ### END SOLUTION

    def forward(self, position_ids, dtype=None):
        ### BEGIN SOLUTION
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
        ### END SOLUTION


# %% tags=["selfcheck"]
check("RotaryCache", RotaryCache)

# %% [markdown]
# What does the cache buy? Time a lookup against recomputing the table, for the positions of one
# decoding step and of a whole prompt, with the same `Timer` discipline as above.

# %% tags=["demo"]
@demo
def cache_versus_recompute(head_dim=128, seq=1024, threads=1):
    cache = RotaryCache(head_dim, max_len=seq)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))

    def recompute(position_ids):
        # what chapter 4's rope_cos_sin does on every call: angles p * theta_i, both halves, cos and sin
        angles = torch.einsum("...l,d->...ld", position_ids.float(), inv_freq)
        table = torch.cat((angles, angles), dim=-1)
        return table.cos(), table.sin()

    for name, positions in (("prompt (1024,)", torch.arange(seq)), ("decode (8, 1)", torch.full((8, 1), seq - 1))):
        row = []
        for label, fn in (("recompute", recompute), ("cache", cache)):
            m = benchmark.Timer("fn(p)", globals={"fn": fn, "p": positions}, num_threads=threads
                                ).blocked_autorange(min_run_time=0.2)
            row.append(f"{label} {m.median * 1e6:7.1f} µs")
        print(f"{name:>15}: " + "   ".join(row))


cache_versus_recompute()

# %% [markdown]
# On the 2-core machine this chapter was written on (1 thread, head_dim = 128): for a 1024-token
# prompt the lookup took about 87 µs against about 297 µs to recompute (3.4×). For one decoding
# step of 8 sequences the cache was *not* faster (about 9.8 µs against 8.1 µs): at that size both
# are dominated by the fixed cost of dispatching a few operations. The decoding win comes from
# elsewhere: the model looks the rows up once per step and hands the same (cos, sin) to every
# layer, instead of recomputing them in each. Measure before you believe a "cache".
#
# ## 6.4 Summary
#
# * Benchmark like an experiment: warm up, fix the threads, run the same work for every scheme,
#   repeat, report median and spread. `torch.utils.benchmark.Timer` does all of it.
# * Additive tables cost one addition; RoPE a few elementwise passes on $q$ and $k$; a float
#   attention bias costs $O(L^2)$ memory traffic and, on a GPU, the flash backend.
# * The form of a computation can matter more than the scheme: Shaw's direct form is over 20× slower
#   than the efficient one, with 22× the memory (chapter 3).
# * Cache cos/sin once, in float32, in non-persistent buffers; grow it when needed; cast the rows,
#   not the angles.
#
# **Further reading.** PyTorch's *Benchmark Recipe* (`torch.utils.benchmark`); Dao et al. (2022),
# *FlashAttention*; Press et al. (2022), *Train Short, Test Long* (ALiBi); Su et al. (2021),
# *RoFormer*.
