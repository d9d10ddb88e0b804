"""The names a learner reads for the rows of chapters 7's and 8's results (and chapter 9's rows of chapter 7's
comparison): results.json keys each row by its English name (data, the same in every language); the table and the
figure's legend show it through these messages. A scheme's own name (ALiBi, RoPE, T5, a RoPE variant) reads the
same in every language and has no entry."""

from __future__ import annotations

from ..messages import msg, render

LABELS = {
    "learned, table resized": msg("learned, table resized", context="result row"),
    "no positions": msg("no positions", context="result row"),
    "learned, resized": msg("learned, resized", context="result row"),
    "2-D sinusoidal": msg("2-D sinusoidal", context="result row"),
    "axial RoPE": msg("axial RoPE", context="result row"),
    "axial RoPE, positions scaled": msg("axial RoPE, positions scaled", context="result row"),
    "learned 2-D, resized": msg("learned 2-D, resized", context="result row"),
    "axial 2-D RoPE": msg("axial 2-D RoPE", context="result row"),
    "MLA, decoupled RoPE": msg("MLA, decoupled RoPE", context="result row"),
    "NoPE layers + temperature": msg("NoPE layers + temperature", context="result row"),
    "local + global RoPE bases": msg("local + global RoPE bases", context="result row"),
    "attention sinks": msg("attention sinks", context="result row"),
    "learned": msg("learned", context="result row"),
    "sinusoidal": msg("sinusoidal", context="result row"),
    "relative": msg("relative", context="result row"),
    "default": msg("default", context="result row"),
}


def label(name):
    """The row `name` as the notebook's language says it."""
    return render(LABELS.get(name, name))
