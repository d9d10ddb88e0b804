"""Chapter 9's experiment (posenc_selfcheck/modernlab): each arm's layers get the masks, frequencies, temperature and
sinks they should, the ci run writes every arm at every length, and docs/chapter9/README.md says what results.json
holds.

The lab ships no solution: it runs whatever implementation of chapter 9's functions it is given. Its tests give it
the one below, written from scratch here and checked against transformers 5.23.0 (Llama 4's, Gemma 3's and GPT-OSS's
code); `python -m posenc_selfcheck.modernlab --impl tests.test_ch09_lab` runs the experiment with it."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from posenc_selfcheck.modernlab import arms, experiments, readme  # noqa: E402
from posenc_selfcheck.modernlab.layers import CHUNKED, WINDOW  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "chapter9"


# ---- chapter 9's functions, from scratch ------------------------------------------------------------------------
def nope_layer_temperature(positions, floor_scale, attn_scale):
    # tau(p) = log(1 + floor((p + 1) / floor_scale)) * attn_scale + 1
    return torch.log1p(torch.floor((positions.float() + 1.0) / floor_scale)) * attn_scale + 1.0  # (L,)


def no_rope_layers(num_hidden_layers, interval):
    # layer i is a NoPE layer (0) when (i + 1) is a multiple of the interval
    return [0 if (i + 1) % interval == 0 else 1 for i in range(num_hidden_layers)]


def _grid(seq_len, past):
    query = torch.arange(past, past + seq_len)[:, None]  # (L, 1): the new tokens follow the cached ones
    key = torch.arange(past + seq_len)[None, :]  # (1, S)
    return query, key


def chunked_causal_mask(seq_len, chunk_size, past=0):
    query, key = _grid(seq_len, past)
    return (key <= query) & (key // chunk_size == query // chunk_size)  # (L, S)


def sliding_window_mask(seq_len, window, past=0):
    query, key = _grid(seq_len, past)
    return (key <= query) & (query - key < window)  # (L, S)


def layer_rope_inv_freq(layer_types, head_dim, global_base, local_base, global_factor):
    exponents = torch.arange(0, head_dim, 2).float() / head_dim  # 2i / d

    def inv_freq(base):
        return 1.0 / base ** exponents  # (d/2,)

    return [inv_freq(local_base) if kind == "sliding_attention" else inv_freq(global_base) / global_factor
            for kind in layer_types]


def attention_with_sinks(q, k, v, sinks, mask, scaling):
    logits = q @ k.transpose(-2, -1) * scaling  # (B, H, L, S)
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    sink = sinks.view(1, -1, 1, 1).expand(*logits.shape[:-1], 1)  # (B, H, L, 1)
    probs = torch.cat((logits, sink), dim=-1).softmax(-1)[..., :-1]  # the sink's share is dropped
    return probs @ v  # (B, H, L, D)


SCRATCH = types.SimpleNamespace(**{name: globals()[name] for name in arms.EXERCISES})


def impl():
    from posenc_ref import TinyDecoder, apply_rope

    return types.SimpleNamespace(**vars(SCRATCH), apply_rope=apply_rope, TinyDecoder=TinyDecoder)


# ---- the scratch implementation against transformers ------------------------------------------------------------
def test_scratch_matches_transformers():
    from transformers import Llama4TextConfig
    from transformers.masking_utils import and_masks, causal_mask_function, chunked_overlay, sliding_window_overlay
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    assert no_rope_layers(8, 4) == Llama4TextConfig(num_hidden_layers=8).no_rope_layers
    zero = torch.zeros(1, dtype=torch.long)
    for ours, theirs in ((chunked_causal_mask(7, 3, past=5), and_masks(chunked_overlay(3, zero), causal_mask_function)),
                         (sliding_window_mask(7, 3, past=5), and_masks(sliding_window_overlay(3), causal_mask_function))):
        expected = torch.tensor([[bool(theirs(0, 0, q, k)) for k in range(12)] for q in range(5, 12)])
        assert torch.equal(ours, expected)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))
    sinks, mask = torch.randn(3, generator=g), torch.ones(5, 5, dtype=torch.bool).tril()
    module = types.SimpleNamespace(sinks=sinks, num_key_value_groups=1, training=False)
    additive = torch.zeros(5, 5).masked_fill(~mask, float("-inf"))
    theirs, _ = eager_attention_forward(module, q, k, v, additive, scaling=0.5)  # (B, L, H, D)
    assert torch.allclose(attention_with_sinks(q, k, v, sinks, mask, 0.5), theirs.transpose(1, 2), atol=1e-6)
