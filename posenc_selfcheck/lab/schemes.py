"""Position schemes for chapter 7, built from *your* code of chapters 1-5.

A scheme is a small module with three hooks, one for each place a position can enter attention
(labml_nn's pattern: one attention core, each scheme a small piece beside it):

    embed(x, position_ids)              input: x + a vector per position (sinusoidal, learned absolute)
    rotate(t, position_ids)             queries and keys, per head, before the scores (RoPE)
    bias(q_positions, k_positions)      a float (H, Lq, Lk) added to the scaled scores (relative, T5, ALiBi)

`PositionScheme` itself is the identity everywhere: no positions at all (NoPE). Every other class here
overrides the hooks it needs and calls the learner's functions for the actual work; `impl` is any
object with those functions as attributes (see `posenc_selfcheck.mine.load_exercises`).
"""

from __future__ import annotations

import torch
from torch import nn

from ..messages import msg


class MissingExercise(RuntimeError):
    """A scheme needs an exercise of an earlier chapter that is not available; `args[0]` says which (a message)."""


def _need(impl, name):
    obj = getattr(impl, name, None)
    if obj is None:
        problem = getattr(impl, "problems", {}).get(name)
        raise MissingExercise(problem or msg("`{name}` is not available", name=name))
    return obj


class PositionScheme(nn.Module):
    """No positions (NoPE): every hook leaves its input alone."""

    name = "NoPE"

    def embed(self, x, position_ids):
        """x (B, L, d_model), position_ids (L,) -> (B, L, d_model). Called once, on the token embeddings."""
        return x

    def rotate(self, t, position_ids):
        """t (B, H, L, d_head) queries or keys, position_ids (L,) -> (B, H, L, d_head)."""
        return t

    def bias(self, q_positions, k_positions):
        """q_positions (Lq,), k_positions (Lk,) -> (H, Lq, Lk) added to q·k/sqrt(d_head), or None."""
        return None


class Sinusoidal(PositionScheme):
    """Vaswani et al. (2017): x + PE[p], the table of chapter 1 (`sinusoidal_table`)."""

    name = "sinusoidal"

    def __init__(self, impl, d_model):
        super().__init__()
        self.table_fn, self.d_model = _need(impl, "sinusoidal_table"), d_model
        self._table = torch.zeros(0, d_model)

    def embed(self, x, position_ids):
        need = int(position_ids.max()) + 1
        if self._table.shape[0] < need:  # grow the table; it is a function of the position only
            self._table = self.table_fn(max(need, 2 * self._table.shape[0]), self.d_model)
        return x + self._table.to(x.device, x.dtype)[position_ids]  # (B, L, d)


class LearnedAbsolute(PositionScheme):
    """x + E[p] with a trained table (chapter 2's `LearnablePositionalEncoding`).

    The table has `max_len` rows, more than training uses: rows past the training length keep their
    initial values. `stretch(train_len)` instead evaluates longer inputs with the first `train_len` rows
    resized to the input length (chapter 2's `resize_position_table`, as vision models do)."""

    name = "learned"

    def __init__(self, impl, d_model, max_len):
        super().__init__()
        self.pe = _need(impl, "LearnablePositionalEncoding")(d_model, max_len)
        self.impl, self.stretch_from = impl, None

    def stretch(self, train_len):
        """Resize the trained rows to each input's length from now on (None: back to plain lookups)."""
        if train_len is not None:
            _need(self.impl, "resize_position_table")
        self.stretch_from = train_len

    def embed(self, x, position_ids):
        if self.stretch_from is None:
            return self.pe(x, position_ids)
        length = int(position_ids.max()) + 1
        trained = self.pe.position_embeddings.weight[:self.stretch_from]  # (L_train, d)
        table = self.impl.resize_position_table(trained, max(length, self.stretch_from))  # (L, d)
        return x + table.to(x.dtype)[position_ids]


class RelativeBias(PositionScheme):
    """A learned bias per head and clipped distance clip(j - i, -K, K) (chapter 3's `RelativePositionBias`)."""

    name = "relative"

    def __init__(self, impl, num_heads, max_distance):
        super().__init__()
        self.table = _need(impl, "RelativePositionBias")(num_heads, max_distance)

    def bias(self, q_positions, k_positions):
        # the module aligns queries to the end of the keys, as the attention block does
        return self.table(len(q_positions), len(k_positions))[0]  # (H, Lq, Lk)


class T5Bias(PositionScheme):
    """T5's learned bias per head and log-spaced bucket of the distance (chapter 3's `t5_bucket`), causal."""

    name = "T5"

    def __init__(self, impl, num_heads, num_buckets=32, max_distance=128):
        super().__init__()
        if max_distance <= num_buckets // 2:  # the causal form's exact buckets reach num_buckets / 2
            raise ValueError(f"max_distance={max_distance} must exceed num_buckets / 2 = {num_buckets // 2}")
        self.bucket = _need(impl, "t5_bucket")
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.table = nn.Embedding(num_buckets, num_heads)  # (buckets, H)
        nn.init.trunc_normal_(self.table.weight, std=0.02)

    def bias(self, q_positions, k_positions):
        relative = k_positions[None, :] - q_positions[:, None]  # (Lq, Lk): j - i
        buckets = self.bucket(relative, bidirectional=False, num_buckets=self.num_buckets,
                              max_distance=self.max_distance)
        return self.table(buckets.to(self.table.weight.device)).permute(2, 0, 1)  # (H, Lq, Lk)


class ALiBi(PositionScheme):
    """Press et al. (2022): -m_h |j - i| with fixed slopes (chapter 3's `alibi_bias`)."""

    name = "ALiBi"

    def __init__(self, impl, num_heads):
        super().__init__()
        self.alibi_bias, self.num_heads = _need(impl, "alibi_bias"), num_heads

    def bias(self, q_positions, k_positions):
        return self.alibi_bias(self.num_heads, len(q_positions), len(k_positions))[0].to(q_positions.device)


class RoPE(PositionScheme):
    """Su et al. (2021): rotate q and k by p·theta_i (chapter 4's `rope_cos_sin`, `apply_rope`).

    `set_frequencies` switches to chapter 5's scaled frequencies (`scaled_rope_inv_freq`): the trained
    weights stay, only the angles change. cos and sin are multiplied by the attention factor (YaRN)."""

    name = "RoPE"

    def __init__(self, impl, head_dim, base=10000.0):
        super().__init__()
        self.impl, self.head_dim, self.base = impl, head_dim, base
        self.apply_rope = _need(impl, "apply_rope")
        _need(impl, "rope_cos_sin")
        self.scaling = {"rope_type": "default"}
        self._cached = (None, None)

    def set_frequencies(self, rope_type="default", factor=1.0, original_max_position_embeddings=None):
        """Frequencies of chapter 5 for every later call; "default" goes back to chapter 4's."""
        if rope_type != "default":
            _need(self.impl, "scaled_rope_inv_freq")
        self.scaling = {"rope_type": rope_type, "factor": factor,
                        "original_max_position_embeddings": original_max_position_embeddings}
        self._cached = (None, None)

    def _tables(self, position_ids):
        if self.scaling["rope_type"] == "default":
            return self.impl.rope_cos_sin(position_ids, self.head_dim, self.base)
        seq_len = int(position_ids.max()) + 1  # dynamic scaling follows the current length
        inv_freq, attention_factor = self.impl.scaled_rope_inv_freq(self.head_dim, self.base, seq_len=seq_len,
                                                                    **self.scaling)
        angles = position_ids[:, None].float() * inv_freq.to(position_ids.device)  # (L, d/2)
        emb = torch.cat((angles, angles), dim=-1)  # (L, d) half layout
        return emb.cos() * attention_factor, emb.sin() * attention_factor

    def rotate(self, t, position_ids):
        # queries and keys of every layer share one position_ids tensor: build the tables once for it
        if self._cached[0] is not position_ids:
            self._cached = (position_ids, self._tables(position_ids))
        cos, sin = self._cached[1]
        return self.apply_rope(t, cos, sin)
