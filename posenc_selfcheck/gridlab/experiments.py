"""Chapter 8's experiment: train at one grid size, evaluate at smaller and larger grids.

    lab = GridLab(impl, config_from_env())
    lab.train_schemes()   # one encoder per scheme, trained at train_grid x train_grid patches
    lab.resolution()      # accuracy at every grid in eval_grids (and RoPE with positions scaled to the trained range)
    lab.save(folder)      # results.json and the figure

`GridLab.run(folder)` calls these in this order. `config_from_env()` picks the configuration from the environment
variable POSENC_CH8_RUN ("full", the default, or "reduced": the same code, smaller sizes, for CI; "stored": the
full run's results and figure from docs/chapter8/, shown without training, for the book).
"""

from __future__ import annotations

import dataclasses
import platform

import torch

from ..columns import pad
from ..demo import skipped
from ..lab.experiments import Lab, _config, announce, stored_results
from ..lab.labels import label
from ..lab.train import train
from ..messages import msg, nmsg, render
from ..probes_base import unfinished_function
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
    rope_base: float = 100.0  # 10000: frequencies 1, 0.1, 0.01, 0.001 rad per patch, two almost still over 16
    seed: int = 0
    threads: int = 1


FULL = Config("full")
REDUCED = Config("reduced", d_model=32, num_heads=4, train_grid=4, eval_grids=(3, 4, 6), batch_size=8, steps=20,
                 warmup=5, eval_samples=16)
CONFIGS = {"full": FULL, "reduced": REDUCED}
STORED = dataclasses.replace(FULL, name="stored")  # not trained: the full run as stored in docs/chapter8/
ABOUT = {"full": msg("the chapter's numbers, about 150 s of one CPU thread (the measured time is in 8.7)"),
         "reduced": msg("the same code on a smaller model in seconds; its numbers mean nothing")}
SCHEMES = ("no positions", "learned, resized", "2-D sinusoidal", "axial RoPE")
NEEDS = {"no positions": (), "learned, resized": ("resize_position_table_2d",),
         "2-D sinusoidal": ("sincos_2d_table",), "axial RoPE": ("axial_rope_cos_sin", "apply_rope")}
EXERCISES = tuple(dict.fromkeys(n for names in NEEDS.values() for n in names))


def config_from_env(default="full"):
    """The configuration named by POSENC_CH8_RUN when it is set (CI, the book), else `default` ("full" or
    "reduced"); "stored" is the full run's, shown from docs/chapter8/ instead of trained."""
    return _config(ENV, CONFIGS, STORED, default)


class GridLab:
    STEPS = ("train_schemes", "resolution")

    def __init__(self, impl, config=None):
        self.impl, self.config = impl, config or config_from_env()
        self.models, self.figures = {}, {}
        self.results = {"config": dataclasses.asdict(self.config), "machine": {
            "python": platform.python_version(), "torch": torch.__version__, "threads": self.config.threads}}
        c = self.config
        self.stored = c.name == STORED.name
        if self.stored:  # every step shows what the full run measured, and trains nothing
            self.results = stored_results(8)
            print(render(msg("the full run's stored results and figure (docs/chapter8/, measured by `{command}`), "
                             "shown without training; unset {env} to train here", command=self.results["command"],
                             env=ENV)))
            return
        announce(c.name, ABOUT, CONFIGS, ENV)

    def available(self):
        """The schemes whose exercises `impl` provides (the others are left out, and said so)."""
        names = [s for s in SCHEMES if all(getattr(self.impl, n, None) is not None for n in NEEDS[s])]
        for s in SCHEMES:
            if s not in names:
                print(render(msg("{scheme}: left out (needs {exercises})", scheme=label(s),
                                 exercises=", ".join(NEEDS[s]))))
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

    def new_model(self, name):
        """A fresh encoder with scheme `name`: the same initial weights outside the scheme for every scheme."""
        c = self.config
        torch.manual_seed(c.seed)  # the scheme's own initialisation (the learned table draws here)
        scheme = self.scheme(name)
        torch.manual_seed(c.seed)  # the same initial weights outside the scheme, whatever the scheme drew
        return GridEncoder(c.d_model, c.num_layers, c.num_heads, scheme)

    def ready(self, names):
        """The schemes whose exercises run (one forward pass each, at a grid other than the training grid, where the
        learned table is resized); the others are skipped in one line."""
        c, ready, waiting = self.config, [], []
        kinds = data.sample(1, c.train_grid + 1, torch.Generator().manual_seed(c.seed))[0]
        for name in names:
            try:
                with torch.no_grad():
                    self.new_model(name)(kinds)
                ready.append(name)
            except NotImplementedError as exc:
                exercise = unfinished_function(exc)
                if exercise is None:
                    raise
                waiting.append(exercise)
        if waiting and ready == ["no positions"]:  # a baseline alone compares nothing
            exercise = waiting[0]
            print(render(skipped("train_schemes", exercise)))
            return []
        for name, exercise in zip([n for n in names if n not in ready], waiting):
            print(render(skipped(name, exercise)))
        return ready

    def train_schemes(self, names=None):
        """One encoder per scheme, the same batches in the same order for each, from the same initial weights."""
        c = self.config
        if self.stored:
            trained, seconds = self.results["training"], self.results["seconds_per_step"]["train_schemes"]
            print(render(nmsg("stored: {n} encoder trained at {grid}x{grid} ({names}) in {seconds:.0f} s",
                              "stored: {n} encoders trained at {grid}x{grid} ({names}) in {seconds:.0f} s",
                              n=len(trained), grid=c.train_grid, names=", ".join(map(label, trained)),
                              seconds=seconds)))
            return
        torch.set_num_threads(c.threads)
        out = self.results.setdefault("training", {})
        for name in self.ready(names or self.available()):
            model = self.new_model(name)
            sample = lambda generator: data.sample(c.batch_size, c.train_grid, generator)  # noqa: E731
            log = train(model, sample, c.steps, c.lr, warmup=c.warmup, label=label(name), seed=c.seed, weight_decay=0.0)
            self.models[name] = model
            out[name] = {"final_loss": round(log["loss_curve"][-1], 4), "seconds": round(log["seconds"], 1),
                         "ms_per_step": round(log["ms_per_step"], 2)}

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
        """Accuracy of every trained model at every grid of eval_grids, with the majority-class baseline and the
        best a model without positions can reach (the majority class, and the marker's own patch)."""
        c = self.config
        if self.stored:
            return self._report(self.results["resolution"])
        if not self.models:
            print(render(msg("no trained models yet: run train_schemes() first")))
            return None
        out = {"grids": list(c.eval_grids), "train_grid": c.train_grid, "accuracy": {},
               "majority": [round(data.majority_accuracy(g), 4) for g in c.eval_grids],
               "no_position_ceiling": [round(data.no_position_ceiling(g), 4) for g in c.eval_grids]}
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
        return self._report(out)

    def _report(self, out):
        _print_table(out)
        self.figures["resolution"] = plots.resolution(out)
        return self.figures["resolution"]

    # results.json and the figures into a folder; every step in order, timed (the same as chapter 7's)
    save = Lab.save
    run = Lab.run


def _print_table(out):
    grids = out["grids"]
    print(pad(render(msg("accuracy at G x G")), 32) + "".join(f"{g:>8}" for g in grids))
    for name, row in out["accuracy"].items():
        print(pad(label(name), 32) + "".join(f"{a:>8.3f}" for a in row))
    print(pad(render(msg("always the most frequent class")), 32) + "".join(f"{a:>8.3f}" for a in out["majority"]))
    print(pad(render(msg("best without positions")), 32) + "".join(f"{a:>8.3f}" for a in out["no_position_ceiling"]))
