"""Chapter 8's experiment: train at one grid size, evaluate at smaller and larger grids.

    lab = GridLab(impl, config_from_env())
    lab.train_schemes()   # one encoder per scheme, trained at train_grid x train_grid patches
    lab.resolution()      # accuracy at every grid in eval_grids (and RoPE with positions scaled to the trained range)
    lab.save(folder)      # results.json and the figure

`GridLab.run(folder)` calls these in this order. `config_from_env()` picks the configuration from the environment
variable POSENC_CH8_RUN ("full", the default, or "reduced": the same code, smaller sizes, for CI).
"""

from __future__ import annotations

import dataclasses
import os
import platform

import torch

from ..lab.experiments import Lab
from ..lab.train import train
from . import data, plots
from .model import AxialRoPE, GridEncoder, LearnedTable, NoPositions, Sincos2d

ENV = "POSENC_CH8_RUN"


@dataclasses.dataclass(frozen=True)
class Config:
    name: str
    d_model: int = 64
    num_layers: int = 2
    num_heads: int = 4  # head_dim 16: 4 frequencies per axis for the axial RoPE
    train_grid: int = 8  # G0: every scheme trains on 8 x 8 patches
    eval_grids: tuple = (4, 6, 8, 12, 16)
    batch_size: int = 32
    steps: int = 1000
    lr: float = 2e-3
    warmup: int = 100
    eval_samples: int = 512  # grids scored at every size
    rope_base: float = 100.0  # 10000 leaves 3 of 4 frequencies almost still across 16 patches
    seed: int = 0
    threads: int = 1


FULL = Config("full")
REDUCED = Config("reduced", d_model=32, num_heads=4, train_grid=4, eval_grids=(3, 4, 6), batch_size=8, steps=20,
                 warmup=5, eval_samples=16)
CONFIGS = {"full": FULL, "reduced": REDUCED}
SCHEMES = ("no positions", "learned, resized", "2-D sinusoidal", "axial RoPE")
NEEDS = {"no positions": (), "learned, resized": ("resize_position_table_2d",),
         "2-D sinusoidal": ("sincos_2d_table",), "axial RoPE": ("axial_rope_cos_sin", "apply_rope")}
EXERCISES = tuple(dict.fromkeys(n for names in NEEDS.values() for n in names))


def config_from_env():
    """FULL, or REDUCED when POSENC_CH8_RUN=reduced."""
    name = os.environ.get(ENV, "full")
    if name not in CONFIGS:
        raise ValueError(f"{ENV}={name!r}: choose one of {', '.join(CONFIGS)}")
    return CONFIGS[name]


class GridLab:
    STEPS = ("train_schemes", "resolution")

    def __init__(self, impl, config=None):
        self.impl, self.config = impl, config or config_from_env()
        self.models, self.figures = {}, {}
        self.results = {"config": dataclasses.asdict(self.config), "machine": {
            "python": platform.python_version(), "torch": torch.__version__, "threads": self.config.threads}}

    def available(self):
        """The schemes whose exercises `impl` provides (the others are left out, and said so)."""
        names = [s for s in SCHEMES if all(getattr(self.impl, n, None) is not None for n in NEEDS[s])]
        for s in SCHEMES:
            if s not in names:
                print(f"{s}: left out (needs {', '.join(NEEDS[s])})")
        return names

    def scheme(self, name):
        c = self.config
        if name == "learned, resized":
            return LearnedTable(self.impl, c.d_model, c.train_grid)
        if name == "2-D sinusoidal":
            return Sincos2d(self.impl, c.d_model)
        if name == "axial RoPE":
            return AxialRoPE(self.impl, c.d_model // c.num_heads, base=c.rope_base)
        return NoPositions()

    def train_schemes(self, names=None):
        """One encoder per scheme, the same batches in the same order for each, from the same initial weights."""
        c = self.config
        torch.set_num_threads(c.threads)
        out = self.results.setdefault("training", {})
        for name in names or self.available():
            torch.manual_seed(c.seed)  # the same initial weights outside the scheme
            model = GridEncoder(c.d_model, c.num_layers, c.num_heads, self.scheme(name))
            sample = lambda generator: data.sample(c.batch_size, c.train_grid, generator)  # noqa: E731
            log = train(model, sample, c.steps, c.lr, warmup=c.warmup, label=name, seed=c.seed, weight_decay=0.0)
            self.models[name] = model
            out[name] = {"final_loss": round(log["loss_curve"][-1], 4), "seconds": round(log["seconds"], 1),
                         "ms_per_step": round(log["ms_per_step"], 2)}
        return out

    @torch.no_grad()
    def accuracy(self, model, grid):
        generator = torch.Generator().manual_seed(self.config.seed + 1000 + grid)
        correct = total = 0
        for start in range(0, self.config.eval_samples, 64):
            kinds, labels = data.sample(min(64, self.config.eval_samples - start), grid, generator)
            correct += int((model(kinds).argmax(-1) == labels).sum())
            total += labels.numel()
        return correct / total

    def resolution(self):
        """Accuracy of every trained model at every grid of eval_grids, with the majority-class baseline."""
        c = self.config
        out = {"grids": list(c.eval_grids), "train_grid": c.train_grid, "accuracy": {},
               "majority": [round(data.majority_accuracy(g), 4) for g in c.eval_grids]}
        for name, model in self.models.items():
            out["accuracy"][name] = [round(self.accuracy(model, g), 4) for g in c.eval_grids]
        if "axial RoPE" in self.models:  # positions scaled by G0 / G: the larger grid inside the trained angles
            scheme = self.models["axial RoPE"].scheme
            row = []
            for g in c.eval_grids:
                scheme.scale = c.train_grid / g
                row.append(round(self.accuracy(self.models["axial RoPE"], g), 4))
            scheme.scale = 1.0
            out["accuracy"]["axial RoPE, positions scaled"] = row
        self.results["resolution"] = out
        _print_table(out)
        self.figures["resolution"] = plots.resolution(out)
        return self.figures["resolution"]

    # results.json and the figures into a folder; every step in order, timed (the same as chapter 7's)
    save = Lab.save
    run = Lab.run


def _print_table(out):
    grids = out["grids"]
    print(f"{'accuracy at G x G':<32}" + "".join(f"{g:>8}" for g in grids))
    for name, row in out["accuracy"].items():
        print(f"{name:<32}" + "".join(f"{a:>8.3f}" for a in row))
    print(f"{'always the most frequent class':<32}" + "".join(f"{a:>8.3f}" for a in out["majority"]))
