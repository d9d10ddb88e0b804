"""Chapter 9's figures, drawn from the experiment's results (matplotlib Figures, as chapter 7's)."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..messages import msg, render
from .labels import label, legend

STYLE = {"all-RoPE": ("tab:blue", "-"), "iRoPE": ("tab:red", "-"), "local/global": ("tab:green", "-"),
         "RoPE + sinks": ("tab:purple", "-"), "iRoPE, no temperature": ("tab:red", ":"),
         "local/global, global factor": ("tab:green", ":"), "all-RoPE, window L": ("tab:blue", "--"),
         "all-RoPE, window L + first token": ("tab:blue", ":"), "RoPE + sinks, window L": ("tab:purple", "--")}


def extrapolation(out, train_len):
    """Loss against evaluation length, one line per arm (dotted and dashed: the same weights evaluated otherwise),
    and the loss at each position of the longest windows."""
    fig = Figure(figsize=(13, 4.6))
    ax0, ax1 = fig.subplots(1, 2)
    for name, losses in out["loss"].items():
        color, style = STYLE.get(name, (None, "-"))
        ax0.plot(out["lengths"], losses, marker="o", ms=4, color=color, ls=style, label=legend(name))
    ax0.set_xscale("log", base=2)
    ax0.set_xticks(out["lengths"], [str(n) for n in out["lengths"]])
    ax0.axvline(train_len, color="0.6", lw=0.8)
    ax0.set_xlabel(render(msg("evaluation length (bytes)")))
    ax0.set_ylabel(render(msg("held-out loss (nats per byte)")))
    ax0.set_title(render(msg("trained at L = {length}, evaluated at 1-{factor} x L", length=train_len,
                             factor=out["lengths"][-1] // train_len)))
    width = train_len // 4
    for name, binned in out["per_position"].items():
        color, style = STYLE.get(name, (None, "-"))
        ax1.plot([width * (i + 0.5) for i in range(len(binned))], binned, color=color, ls=style, label=legend(name))
    ax1.axvline(train_len, color="0.6", lw=0.8)
    ax1.set_xlabel(render(msg("position in a window of {window} (means over {width} positions)",
                              window=out["lengths"][-1], width=width)))
    ax1.set_ylabel(render(msg("loss at that position")))
    ax1.set_title(render(msg("where each arm breaks")))
    ax1.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def first_token(out):
    """Per layer, the attention on the first token (solid) and on the sinks (hatched), at L and at the longest
    length: one group of bars per layer, one bar per arm."""
    names = list(out["first"])
    fig = Figure(figsize=(12, 4.6))
    axes = fig.subplots(1, len(out["lengths"]), sharey=True)
    width = 0.8 / len(names)
    for ax, n, k in zip(axes, out["lengths"], range(len(out["lengths"]))):
        for j, name in enumerate(names):
            first, sink = out["first"][name][k], out["sink"][name][k]
            x = [i + (j - (len(names) - 1) / 2) * width for i in range(len(first))]
            color = STYLE.get(name, (None, "-"))[0]
            ax.bar(x, first, width, color=color, label=label(name))
            if max(sink) > 1e-3:
                ax.bar(x, sink, width, bottom=first, color="none", edgecolor=color, hatch="///",
                       label=render(msg("{arm}: the sinks", arm=label(name))))
        ax.set_xticks(range(len(first)), [render(msg("layer {layer}", layer=i)) for i in range(len(first))])
        ax.set_title(render(msg("windows of {length} bytes", length=n)))
    axes[0].set_ylabel(render(msg("attention on the first token (mean over queries and heads)")))
    axes[-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig
