"""The names a learner reads for chapter 9's rows: results.json keys each row by its English name (data, the same in
every language); the tables and the figures' legends show it through these messages."""

from __future__ import annotations

from ..messages import msg, render

LABELS = {
    "all-RoPE": msg("all-RoPE", context="result row"),
    "iRoPE": msg("iRoPE: chunked RoPE layers, one NoPE layer with the temperature", context="result row"),
    "local/global": msg("local/global: sliding RoPE layers (base 10^4), one global (base 10^6)", context="result row"),
    "RoPE + sinks": msg("all-RoPE with sinks", context="result row"),
    "iRoPE, no temperature": msg("iRoPE, no temperature at evaluation", context="result row"),
    "local/global, global factor": msg("local/global, global layer's frequencies / 8 at evaluation",
                                       context="result row"),
    "all-RoPE, window L": msg("all-RoPE, every layer a window of L at evaluation", context="result row"),
    "all-RoPE, window L + first token": msg("all-RoPE, a window of L and the first token at evaluation",
                                            context="result row"),
    "RoPE + sinks, window L": msg("all-RoPE with sinks, a window of L at evaluation", context="result row"),
}
SHORT = {  # the table's first column: a few words
    "all-RoPE": msg("all-RoPE", context="result row"),
    "iRoPE": msg("iRoPE", context="result row"),
    "local/global": msg("local/global", context="result row"),
    "RoPE + sinks": msg("all-RoPE, sinks", context="result row"),
    "iRoPE, no temperature": msg("iRoPE, no temperature", context="result row"),
    "local/global, global factor": msg("local/global, global / 8", context="result row"),
    "all-RoPE, window L": msg("all-RoPE, window L", context="result row"),
    "all-RoPE, window L + first token": msg("all-RoPE, window L + 1st", context="result row"),
    "RoPE + sinks, window L": msg("all-RoPE, sinks, window L", context="result row"),
}


def label(name):
    """The row `name` as the notebook's language says it, in a few words."""
    return render(SHORT.get(name, name))


def legend(name):
    """The row `name` as a figure's legend says it."""
    return render(LABELS.get(name, name))
