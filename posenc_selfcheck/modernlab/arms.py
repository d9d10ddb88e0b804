"""The arms of chapter 9's experiment: one list of `LayerPlan`s per arm, from your chapter 9 functions.

    all-RoPE       every layer RoPE (base `rope_base`), plain causal attention: chapter 7's RoPE decoder
    iRoPE          Llama 4: `no_rope_layers(n, interval)` says which layers rotate; they attend within chunks
                   (`chunked_causal_mask`); the others (one in `interval`) are NoPE layers over the whole window, their
                   queries scaled by `nope_layer_temperature` (floor_scale, attn_scale)
    local/global   Gemma 3: layer i is "sliding_attention" unless (i + 1) % pattern == 0 ("full_attention");
                   `layer_rope_inv_freq` gives sliding layers the local base, full layers the global one;
                   sliding layers see a window (`sliding_window_mask`)
    RoPE + sinks   all-RoPE with a learned sink logit per head and layer (GPT-OSS; `attention_with_sinks`)

and the settings evaluated on trained arms without training (`VARIANTS`): the same weights, other plans.
"""

from __future__ import annotations

import dataclasses

from .layers import CHUNKED, WINDOW, WINDOW_FIRST, LayerPlan

ARMS = ("all-RoPE", "iRoPE", "local/global", "RoPE + sinks")
# evaluated without training: {row: (the trained arm it reuses, how its plans change)}
VARIANTS = {
    "iRoPE, no temperature": "iRoPE",
    "local/global, global factor": "local/global",
    "all-RoPE, window L": "all-RoPE",
    "all-RoPE, window L + first token": "all-RoPE",
    "RoPE + sinks, window L": "RoPE + sinks",
}
# what each arm needs of chapter 9 (and chapter 4's apply_rope for every RoPE layer)
NEEDS = {
    "all-RoPE": ("layer_rope_inv_freq",),
    "iRoPE": ("no_rope_layers", "chunked_causal_mask", "nope_layer_temperature", "layer_rope_inv_freq"),
    "local/global": ("layer_rope_inv_freq", "sliding_window_mask"),
    "RoPE + sinks": ("layer_rope_inv_freq", "attention_with_sinks"),
}
EXERCISES = ("nope_layer_temperature", "no_rope_layers", "chunked_causal_mask", "sliding_window_mask",
             "layer_rope_inv_freq", "attention_with_sinks")


def gemma_layer_types(num_layers, pattern):
    """Gemma 3's default layer types: "full_attention" for every `pattern`-th layer, "sliding_attention" else."""
    return ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(num_layers)]


def plans(impl, name, c):
    """The `LayerPlan` of every layer of arm `name` under configuration `c`."""
    head_dim = c.d_model // c.num_heads
    n = c.num_layers
    if name in ("all-RoPE", "RoPE + sinks"):
        # every layer a full-attention RoPE layer at base rope_base, frequencies unscaled
        inv = impl.layer_rope_inv_freq(["full_attention"] * n, head_dim, c.rope_base, c.rope_base, 1.0)
        return [LayerPlan(inv_freq=f, sinks=name == "RoPE + sinks") for f in inv]
    if name == "iRoPE":
        use_rope = impl.no_rope_layers(n, c.nope_interval)  # 1 = RoPE, 0 = NoPE
        inv = impl.layer_rope_inv_freq(["full_attention"] * n, head_dim, c.rope_base, c.rope_base, 1.0)
        return [LayerPlan(inv_freq=f, mask=CHUNKED, span=c.chunk_size) if rope
                else LayerPlan(temperature=(c.floor_scale, c.attn_scale)) for rope, f in zip(use_rope, inv)]
    if name == "local/global":
        types = gemma_layer_types(n, c.global_pattern)
        inv = impl.layer_rope_inv_freq(types, head_dim, c.global_base, c.local_base, 1.0)
        return [LayerPlan(inv_freq=f, mask=WINDOW, span=c.window) if kind == "sliding_attention"
                else LayerPlan(inv_freq=f) for kind, f in zip(types, inv)]
    raise KeyError(name)


def variant_plans(impl, row, trained, c):
    """The plans of an evaluation-only row: `trained` (the arm's plans) changed as the row says."""
    if row == "iRoPE, no temperature":
        return [dataclasses.replace(p, temperature=None) for p in trained]
    if row == "local/global, global factor":  # Gemma 3's linear factor on the global layers only
        types = gemma_layer_types(c.num_layers, c.global_pattern)
        inv = impl.layer_rope_inv_freq(types, c.d_model // c.num_heads, c.global_base, c.local_base,
                                       float(max(c.eval_factors)))
        return [dataclasses.replace(p, inv_freq=f) for p, f in zip(trained, inv)]
    if row in ("all-RoPE, window L", "RoPE + sinks, window L"):  # every layer sees the last L tokens only
        return [dataclasses.replace(p, mask=WINDOW, span=c.train_len) for p in trained]
    if row == "all-RoPE, window L + first token":  # StreamingLLM: the window and the first token
        return [dataclasses.replace(p, mask=WINDOW_FIRST, span=c.train_len) for p in trained]
    raise KeyError(row)

