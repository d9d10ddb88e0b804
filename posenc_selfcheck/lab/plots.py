"""Chapter 7's figures, drawn from the experiments' results (matplotlib Figures, not pyplot state: a notebook
shows the one a cell returns, and the command line saves them).

A Figure made without pyplot has no picture of its own for IPython: the inline backend teaches IPython to draw
Figures only once pyplot is imported, and until then a returned Figure reaches the notebook as the text
`<Figure size 1200x430 with 2 Axes>`. `show_in_notebooks()` (called when the lab is imported) teaches it here.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

from ..messages import msg, render
from . import analysis
from .labels import label

DPI = 100  # the notebook's pictures; the command line saves at 110 (Lab.save)


def png(figure):
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return buffer.getvalue()


def show_in_notebooks():
    """In an IPython kernel, display every matplotlib Figure a cell returns as a PNG (nothing elsewhere)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, png)

STYLE = {"NoPE": ("k", "-"), "sinusoidal": ("tab:orange", "-"), "learned": ("tab:brown", "-"),
         "learned, table resized": ("tab:brown", ":"), "relative": ("tab:purple", "-"), "T5": ("tab:pink", "-"),
         "ALiBi": ("tab:green", "-"), "RoPE": ("tab:blue", "-"), "default": ("tab:blue", "-"),
         "linear": ("tab:red", "-"), "dynamic": ("tab:olive", "-"), "yarn": ("tab:cyan", "-")}


def _line(ax, x, y, name, **kw):
    color, style = STYLE.get(name, (None, "-"))
    ax.plot(x, y, marker="o", ms=4, color=color, ls=style, label=label(name), **kw)


def extrapolation(out, train_len):
    """Loss against evaluation length, one line per scheme (Press et al. 2022, Figure 1), and the loss at each
    position of the longest windows."""
    fig = Figure(figsize=(12, 4.3))
    ax0, ax1 = fig.subplots(1, 2)
    for name, losses in out["loss"].items():
        _line(ax0, out["lengths"], losses, name)
    ax0.set_xscale("log", base=2)
    ax0.set_xticks(out["lengths"], [str(n) for n in out["lengths"]])
    ax0.axvline(train_len, color="0.6", lw=0.8)
    ax0.set_xlabel(render(msg("evaluation length (bytes)")))
    ax0.set_ylabel(render(msg("held-out loss (nats per byte)")))
    ax0.set_title(render(msg("trained at L = {length}, evaluated at 1-{factor} x L", length=train_len,
                             factor=out["lengths"][-1] // train_len)))
    ax0.legend(fontsize=8)
    width = train_len // 4
    for name, binned in out["per_position"].items():
        color, style = STYLE.get(name, (None, "-"))
        ax1.plot([width * (i + 0.5) for i in range(len(binned))], binned, color=color, ls=style, label=label(name))
    ax1.axvline(train_len, color="0.6", lw=0.8)
    ax1.text(train_len, ax1.get_ylim()[1], " L", va="top", fontsize=8)
    ax1.set_xlabel(render(msg("position in a window of {window} (means over {width} positions)",
                              window=out["lengths"][-1], width=width)))
    ax1.set_ylabel(render(msg("loss at that position")))
    ax1.set_title(render(msg("where each scheme breaks")))
    fig.tight_layout()
    return fig


def rope_scaling(out, train_len):
    """Loss of the RoPE model at 1x, the fine-tuning length and s x L, per frequency scaling: as trained
    (left) and after the short fine-tune (right)."""
    fig = Figure(figsize=(11, 4))
    axes = fig.subplots(1, 2, sharey=True)
    titles = (msg("RoPE, scale factor {factor:g}: as trained", factor=out["factor"]),
              msg("RoPE, scale factor {factor:g}: after {steps} steps at L = {length}", factor=out["factor"],
                  steps=out["finetune_steps"], length=out["finetune_len"]))
    for ax, key, title in zip(axes, ("no_finetune", "finetuned"), titles):
        for name, losses in out[key].items():
            _line(ax, out["lengths"], losses, name)
        ax.set_xscale("log", base=2)
        ax.set_xticks(out["lengths"], [str(n) for n in out["lengths"]])
        ax.axvline(train_len, color="0.6", lw=0.8)
        ax.set_xlabel(render(msg("evaluation length (bytes)")))
        ax.set_title(render(title))
    axes[0].set_ylabel(render(msg("held-out loss (nats per byte)")))
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def attention_maps(maps, train_len, layer=-1):
    """One row per model, one column per head: the attention probabilities of `layer` on one window."""
    names = list(maps)
    heads = maps[names[0]][layer].shape[0]
    fig = Figure(figsize=(2.6 * heads, 2.6 * len(names)))
    axes = fig.subplots(len(names), heads, squeeze=False)
    for row, name in enumerate(names):
        weights = maps[name][layer]  # (H, T, T)
        for h in range(heads):
            ax = axes[row][h]
            ax.imshow(weights[h].sqrt().numpy(), cmap="magma", vmin=0, vmax=1)  # sqrt: faint weights visible
            ax.axvline(train_len - 0.5, color="w", lw=0.5, ls=":")
            ax.axhline(train_len - 0.5, color="w", lw=0.5, ls=":")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                ax.set_title(render(msg("head {head}", head=h)), fontsize=9)
            if h == 0:
                ax.set_ylabel(render(msg("{scheme}\nquery position", scheme=label(name))), fontsize=9)
            if row == len(names) - 1:
                ax.set_xlabel(render(msg("key position")), fontsize=9)
    fig.suptitle(render(msg("attention (square root of the weight) in the last layer, a window of {window} = 2 x L; "
                            "dotted: L = {length}", window=weights.shape[-1], length=train_len)), fontsize=10)
    fig.tight_layout()
    return fig


def position_probe(out, train_len):
    """R² of the position probe per layer, and the mean predicted position against the true one."""
    fig = Figure(figsize=(11, 3.8))
    ax0, ax1 = fig.subplots(1, 2)
    for probed, color in (("causal", "0.5"), ("causal_bos", "k"), ("bidirectional_bos", "tab:red")):
        layers = out[probed]
        name = render(msg("NoPE, {setting}", setting=analysis.PROBED[probed]))
        ax0.plot(range(len(layers)), [p["r2"] for p in layers], "o-", color=color, label=name)
        ax1.plot(range(train_len), layers[-1]["mean_prediction"], color=color, label=name)
    layers = len(out["causal"])
    ax0.set_xticks(range(layers), [render(msg("embeddings"))]
                   + [render(msg("after layer {layer}", layer=n)) for n in range(layers - 1)])
    ax0.set_ylabel(render(msg("R² of a linear probe for the position")))
    ax0.axhline(0, color="0.6", lw=0.8)
    ax0.legend(fontsize=8)
    ax1.plot([0, train_len - 1], [0, train_len - 1], color="0.6", lw=0.8, ls=":", label=render(msg("perfect")))
    ax1.set_xlabel(render(msg("true position")))
    ax1.set_ylabel(render(msg("predicted position (mean, last layer)")))
    fig.tight_layout()
    return fig
