"""Looking inside trained models: attention weights (recorded from F.scaled_dot_product_attention) and
hidden states (forward hooks on the decoder's layers), and a linear probe that reads positions from them."""

from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F

from ..messages import msg

# the decoders the position probe reads, as the figures and the log name them
PROBED = {"causal": msg("causal, windows start anywhere"), "causal_bos": msg("causal, windows start with BOS"),
          "bidirectional_bos": msg("no causal mask, windows start with BOS")}


def _weights(q, k, attn_mask=None, is_causal=False, scale=None):
    """The attention probabilities SDPA computes: softmax(q kᵀ · scale + mask), in float32."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q.float() @ k.float().transpose(-2, -1)) * scale  # (B, H, Lq, Lk)
    if is_causal:  # SDPA's is_causal aligns queries to the start of the keys
        allowed = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool \
            else scores + attn_mask.float()
    return scores.softmax(-1)


@contextlib.contextmanager
def recording_attention():
    """Within the block, every call of F.scaled_dot_product_attention also appends its probabilities
    (B, H, Lq, Lk) to the yielded list, in call order (layer by layer). Results are unchanged."""
    records, original = [], F.scaled_dot_product_attention

    def recorder(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kwargs):
        records.append(_weights(query, key, attn_mask, is_causal, scale).detach())
        return original(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                        scale=scale, **kwargs)

    F.scaled_dot_product_attention = recorder
    try:
        yield records
    finally:
        F.scaled_dot_product_attention = original


class NoAttentionSeen(RuntimeError):
    """The model never called F.scaled_dot_product_attention; `args[0]` says so (a message)."""


@torch.no_grad()
def attention_weights(model, tokens):
    """[per layer (B, H, L, L)] for one forward pass; raises when the model never calls
    F.scaled_dot_product_attention."""
    with recording_attention() as records:
        model(tokens)
    if not records:
        raise NoAttentionSeen(msg("no call of F.scaled_dot_product_attention was seen: the attention maps need your "
                                  "PositionalAttention to call it as F.scaled_dot_product_attention(...)"))
    return records


def mean_distance(weights):
    """Per head, the mean distance i - j between a query and the keys it attends to: (H,)."""
    length = weights.shape[-1]
    i = torch.arange(length)
    distance = (i[:, None] - i[None, :]).clamp(min=0).float()  # (L, L)
    return (weights * distance).sum(-1).mean(dim=(0, 2))  # (H,)


@torch.no_grad()
def hidden_states(model, tokens):
    """[the input of layer 0, then the output of every layer], each (B, L, d), via forward hooks on model.layers."""
    states = []

    def keep_input(module, args):
        states.append(args[0].detach())

    def keep_output(module, args, output):
        states.append((output[0] if isinstance(output, (tuple, list)) else output).detach())

    handles = [model.layers[0].register_forward_pre_hook(keep_input)]
    handles += [layer.register_forward_hook(keep_output) for layer in model.layers]
    try:
        model(tokens)
    finally:
        for handle in handles:
            handle.remove()
    return states


def position_probe(train_states, test_states, ridge=1e-3):
    """A linear map from a hidden state to its position, fitted by ridge regression on `train_states`
    (N, L, d) and scored on `test_states`: R², the mean absolute error in positions, and the mean prediction
    at each position (L,)."""
    n, length, d = train_states.shape
    positions = torch.arange(length, dtype=torch.float64)

    def design(states):  # (N L, d + 1): features and a constant
        x = states.double().reshape(-1, d)
        return torch.cat((x, torch.ones(len(x), 1, dtype=torch.float64)), dim=1)

    x, y = design(train_states), positions.repeat(n)  # (N L, d + 1), (N L,)
    x_mean, x_std = x[:, :-1].mean(0), x[:, :-1].std(0) + 1e-8
    x[:, :-1] = (x[:, :-1] - x_mean) / x_std
    # w = (XᵀX + λ N I)⁻¹ Xᵀy
    gram = x.T @ x + ridge * len(x) * torch.eye(d + 1, dtype=torch.float64)
    w = torch.linalg.solve(gram, x.T @ y)
    xt = design(test_states)
    xt[:, :-1] = (xt[:, :-1] - x_mean) / x_std
    predicted = (xt @ w).reshape(-1, length)  # (N_test, L)
    truth = positions.expand_as(predicted)
    r2 = 1 - ((predicted - truth) ** 2).sum() / ((truth - truth.mean()) ** 2).sum()
    return {"r2": r2.item(), "mae": (predicted - truth).abs().mean().item(),
            "mean_prediction": predicted.mean(0).tolist()}
