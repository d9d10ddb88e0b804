"""Chapter 8's figure, drawn from the experiment's results (a matplotlib Figure, not pyplot state)."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..lab.labels import label
from ..messages import msg, render

STYLE = {"no positions": ("k", "-"), "learned, resized": ("tab:brown", "-"), "2-D sinusoidal": ("tab:orange", "-"),
         "axial RoPE": ("tab:blue", "-"), "axial RoPE, positions scaled": ("tab:blue", ":")}


def resolution(out):
    """Accuracy against grid size, one line per scheme, the training grid marked."""
    fig = Figure(figsize=(7, 4.2))
    ax = fig.subplots()
    for name, row in out["accuracy"].items():
        color, style = STYLE.get(name, (None, "-"))
        ax.plot(out["grids"], row, marker="o", ms=4, color=color, ls=style, label=label(name))
    ax.plot(out["grids"], out["majority"], color="0.6", ls="--", label=render(msg("always the most frequent class")))
    if "no_position_ceiling" in out:  # results stored before it was recorded have no such row
        ax.plot(out["grids"], out["no_position_ceiling"], color="0.3", ls="-.", lw=0.9,
                label=render(msg("best without positions (+ the marker's own patch)")))
    ax.axvline(out["train_grid"], color="0.6", lw=0.8)
    ax.set_xticks(out["grids"], [f"{g}x{g}" for g in out["grids"]])
    ax.set_xlabel(render(msg("grid of patches at evaluation")))
    ax.set_ylabel(render(msg("accuracy (9 directions)")))
    ax.set_ylim(0, 1.02)
    ax.set_title(render(msg("trained at {grid}x{grid}: where is the marker?", grid=out["train_grid"])))
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
