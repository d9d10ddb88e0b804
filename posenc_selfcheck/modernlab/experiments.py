"""Chapter 9's experiment: chapter 7's decoder, 4 layers, with the layer patterns of today's models.

    lab = ModernLab(impl, config_from_env())
    lab.train_arms()       # one decoder per arm (arms.ARMS), trained at train_len on the same batches
    lab.extrapolation()    # loss at 1-8 x train_len, per arm and per evaluation-only variant (arms.VARIANTS)
    lab.first_token()      # attention mass on the first token (and on the sink), per layer, at L and 8 L
    lab.save(folder)       # results.json and the figures

`ModernLab.run(folder)` calls these in this order. `config_from_env()` reads POSENC_CH9_RUN: "full" (the stored
results of docs/chapter9/), "reduced" (what a learner runs: minutes), "ci" (seconds: proves the pipeline only), or
"stored" (the full run's results from docs/chapter9/, shown without training). `impl` holds chapter 9's six
functions, chapter 4's `apply_rope` and chapter 7's `TinyDecoder`.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
import time
from pathlib import Path

import torch

from ..columns import pad
from ..lab import data, train
from ..lab.experiments import _bins, _config, announce, stored_results
from ..lab.schemes import PositionScheme
from ..messages import msg, nmsg, render
from . import plots
from .arms import ARMS, VARIANTS, plans, variant_plans
from .labels import label
from .layers import LayerAttention

ENV = "POSENC_CH9_RUN"


@dataclasses.dataclass(frozen=True)
class Config:
    name: str
    d_model: int = 64  # chapter 7's decoder, with twice its layers
    num_layers: int = 4  # one NoPE layer in four (iRoPE), three local layers per global one (local/global)
    num_heads: int = 4  # d_head = 16
    train_len: int = 64  # L
    batch_size: int = 32
    steps: int = 1000  # training steps per arm (chapter 7: 1500 steps of a 2-layer decoder)
    lr: float = 3e-3
    warmup: int = 100
    eval_factors: tuple = (1, 2, 4, 8)  # evaluation lengths in multiples of L
    eval_tokens: int = 32768  # held-out bytes scored at every length
    rope_base: float = 10000.0  # all-RoPE, RoPE + sinks and iRoPE's RoPE layers
    nope_interval: int = 4  # iRoPE: no_rope_layers(num_layers, 4) -> [1, 1, 1, 0], as Llama 4's default
    chunk_size: int = 16  # iRoPE's RoPE layers attend within chunks of L / 4 (Llama 4: 8192)
    floor_scale: float = 64.0  # the temperature's floor_scale, scaled to L (Llama 4: 8192, with chunks of 8192)
    attn_scale: float = 0.1  # Llama 4's default
    global_pattern: int = 4  # local/global: every 4th layer is global (Gemma 3: every 6th)
    window: int = 16  # the sliding layers' window, L / 4 (Gemma 3: 1024 at 32k)
    local_base: float = 10000.0  # Gemma 3's local base
    global_base: float = 1000000.0  # Gemma 3's global base
    attention_windows: int = 8  # held-out windows whose attention the first-token analysis averages
    seed: int = 0
    threads: int = 1


FULL = Config("full")
# a learner's run: the same model and arms, fewer steps and fewer held-out bytes (minutes on one thread; a second
# thread gains little on a model this small, and loses much on a busy machine)
REDUCED = Config("reduced", steps=250, warmup=25, eval_tokens=4096, attention_windows=4)
# CI and the book's executed notebook: proves the pipeline, its numbers mean nothing
CI = Config("ci", d_model=32, num_heads=2, train_len=16, batch_size=8, steps=12, warmup=4, eval_tokens=256,
            chunk_size=4, floor_scale=16.0, window=4, attention_windows=2)
CONFIGS = {"full": FULL, "reduced": REDUCED, "ci": CI}
STORED = dataclasses.replace(FULL, name="stored")
ABOUT = {"full": msg("the chapter's numbers, about {minutes} minutes on one CPU thread", minutes=9),
         "reduced": msg("a smaller run of the same models, a few minutes on one CPU thread"),
         "ci": msg("the same code on a tiny model in seconds; its numbers mean nothing")}


def config_from_env(default="reduced"):
    """The configuration POSENC_CH9_RUN names ("full", "reduced", "ci" or "stored"), else `default`."""
    return _config(ENV, CONFIGS, STORED, default)


class ModernLab:
    STEPS = ("train_arms", "extrapolation", "first_token")

    def __init__(self, impl, config=None):
        self.impl, self.config = impl, config or config_from_env()
        c = self.config
        self.models, self.figures = {}, {}
        if c.name == STORED.name:  # every step shows what the full run measured, and trains nothing
            self.stored = True
            self.results = stored_results(9)
            print(render(msg("the full run's stored results and figures (docs/chapter9/, measured in {seconds:.0f} s "
                             "by `{command}`), shown without training; unset {env} to train here",
                             seconds=self.results["seconds"], command=self.results["command"], env=ENV)))
            return
        self.stored = False
        torch.set_num_threads(c.threads)
        self.corpus = data.load_corpus()
        self.results = {"run": c.name, "config": dataclasses.asdict(c), "corpus": str(self.corpus.describe()),
                        "torch": str(torch.__version__), "python": platform.python_version(),
                        "threads": torch.get_num_threads(), "machine": platform.machine()}
        announce(c.name, ABOUT, CONFIGS, ENV)
        print(render(msg("{run} run: d_model={d_model}, {layers} layers, {heads} heads, trained on {steps} batches of "
                         "{batch} x {length} bytes; torch threads: {threads}", run=c.name, d_model=c.d_model,
                         layers=c.num_layers, heads=c.num_heads, steps=c.steps, batch=c.batch_size,
                         length=c.train_len, threads=torch.get_num_threads())))
        print(render(msg("text: {corpus}", corpus=self.corpus.describe())))

    # ---- building blocks ---------------------------------------------------------------------
    def new_model(self, name):
        """Chapter 7's TinyDecoder without positions of its own, each layer's attention following arm `name`'s plan;
        every arm starts from the same weights (the sinks, where there are some, are the arm's own)."""
        c = self.config
        torch.manual_seed(c.seed)
        model = self.impl.TinyDecoder(data.VOCAB_SIZE, c.d_model, c.num_layers, c.num_heads, PositionScheme())
        for block, plan in zip(model.layers, plans(self.impl, name, c)):
            block.attn = LayerAttention(block.attn, self.impl, plan)
        return train.initialize(model, c.seed)

    @staticmethod
    def set_plans(model, layer_plans):
        for block, plan in zip(model.layers, layer_plans):
            block.attn.plan = plan

    def lengths(self):
        return [f * self.config.train_len for f in self.config.eval_factors]

    def evaluate(self, model, length):
        longest = max(self.lengths())
        n_tokens = max(longest, self.config.eval_tokens // longest * longest)  # the same bytes at every length
        inputs, targets = data.eval_windows(self.corpus.held_out, length, n_tokens)
        return train.evaluate(model, inputs, targets)

    # ---- training ----------------------------------------------------------------------------
    def train_arms(self, names=ARMS):
        """One model per arm at train_len, on the same batches in the same order."""
        c = self.config
        if self.stored:
            trained, seconds = self.results["training"], self.results["seconds_per_step"]["train_arms"]
            print(render(nmsg("stored: {n} model trained at L={length} ({names}) in {seconds:.0f} s",
                              "stored: {n} models trained at L={length} ({names}) in {seconds:.0f} s", n=len(trained),
                              length=c.train_len, names=", ".join(map(label, trained)), seconds=seconds)))
            return
        self.results["arms"] = {name: [p.describe() for p in plans(self.impl, name, c)] for name in names}
        self.results["training"] = {}
        for name in names:
            model = self.new_model(name)

            def sample(generator):
                return data.random_windows(self.corpus.train, c.batch_size, c.train_len, generator)

            log = train.train(model, sample, c.steps, c.lr, c.warmup, label=f"{label(name)} (L={c.train_len})",
                              seed=c.seed)
            self.results["training"][name] = {**log, "parameters": sum(p.numel() for p in model.parameters())}
            self.models[name] = model

    # ---- 1. train short, test long -----------------------------------------------------------
    def extrapolation(self):
        """Loss at every evaluation length: each arm as trained, then each evaluation-only variant."""
        if self.stored:
            return self._report_extrapolation(self.results["extrapolation"])
        if not self.models:
            print(render(msg("no trained models yet: run train_arms() first")))
            return None
        c = self.config
        out = {"lengths": self.lengths(), "loss": {}, "per_position": {}}
        # each arm as trained, then each variant on its arm's weights
        rows = [(name, name) for name in self.models] + [(r, a) for r, a in VARIANTS.items() if a in self.models]
        progress = train.Progress(render(msg("evaluating")), len(rows))
        for done, (row, arm) in enumerate(rows, 1):
            model = self.models[arm]
            trained = [block.attn.plan for block in model.layers]
            if row != arm:
                self.set_plans(model, variant_plans(self.impl, row, trained, c))
            try:
                results = [self.evaluate(model, n) for n in out["lengths"]]
            finally:
                self.set_plans(model, trained)
            out["loss"][row] = [r["loss"] for r in results]
            out["per_position"][row] = _bins(results[-1]["per_position"], c.train_len // 4)
            progress.update(done, out["loss"][row][-1])
        self.results["extrapolation"] = out
        return self._report_extrapolation(out)

    def _report_extrapolation(self, out):
        _print_table(msg("mean loss (nats per byte) at each evaluation length"), out["lengths"], out["loss"])
        self.figures["extrapolation"] = plots.extrapolation(out, self.config.train_len)
        return self.figures["extrapolation"]

    # ---- 2. where attention goes -------------------------------------------------------------
    @torch.no_grad()
    def first_token(self):
        """Per layer, the mean attention probability on the window's first token (queries 1 ..), and for the
        arm with sinks the mass its sinks take (1 - the sum over the keys), at L and at the longest length."""
        if self.stored:
            return self._report_first_token(self.results["first_token"])
        if not self.models:
            print(render(msg("no trained models yet: run train_arms() first")))
            return None
        c = self.config
        lengths = [c.train_len, max(self.lengths())]
        out = {"lengths": lengths, "windows": c.attention_windows, "first": {}, "sink": {}}
        for name, model in self.models.items():
            out["first"][name], out["sink"][name] = [], []
            for n in lengths:
                windows = self.corpus.held_out[: c.attention_windows * n].view(c.attention_windows, n)  # (W, n)
                probs = record_attention(model, windows)  # per layer (W, H, n, n)
                out["first"][name].append([p[:, :, 1:, 0].mean().item() for p in probs])
                out["sink"][name].append([(1 - p[:, :, 1:].sum(-1)).mean().item() for p in probs])
        self.results["first_token"] = out
        return self._report_first_token(out)

    def _report_first_token(self, out):
        for name in out["first"]:
            for n, first, sink in zip(out["lengths"], out["first"][name], out["sink"][name]):
                first = ", ".join(f"{v:.2f}" for v in first)
                if max(sink) > 1e-3:  # an arm with sinks
                    sinks = ", ".join(f"{v:.2f}" for v in sink)
                    line = msg("{arm} at L={length}: attention on the first token per layer {first}; on the sinks "
                               "{sink}", arm=label(name), length=n, first=first, sink=sinks)
                else:
                    line = msg("{arm} at L={length}: attention on the first token per layer {first}", arm=label(name),
                               length=n, first=first)
                print(render(line))
        self.figures["first_token"] = plots.first_token(out)
        return self.figures["first_token"]

    # ---- everything --------------------------------------------------------------------------
    def save(self, folder):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "results.json").write_text(json.dumps(self.results, indent=1) + "\n")
        self.save_figures(folder)
        print(render(nmsg("wrote {path} and {n} figure", "wrote {path} and {n} figures", n=len(self.figures),
                          path=str(folder / "results.json"))))

    def save_figures(self, folder):
        """One PNG per figure (a stored run redraws the full run's figures from its results.json)."""
        for name, figure in self.figures.items():
            figure.savefig(Path(folder) / f"{name}.png", dpi=110, bbox_inches="tight")

    def run(self, folder=None, command=None):
        if self.stored:  # the full run's results and figures, step by step, with its own times
            for step in self.STEPS:
                getattr(self, step)()
            return self.results
        # wall time, and this process's CPU time: on a machine shared with other jobs the two differ
        start, cpu_start = time.perf_counter(), time.process_time()
        self.results["seconds_per_step"], self.results["cpu_seconds_per_step"] = {}, {}
        for step in self.STEPS:
            tick, cpu_tick = time.perf_counter(), time.process_time()
            getattr(self, step)()
            self.results["seconds_per_step"][step] = round(time.perf_counter() - tick, 1)
            self.results["cpu_seconds_per_step"][step] = round(time.process_time() - cpu_tick, 1)
        self.results["seconds"] = round(time.perf_counter() - start, 1)
        self.results["cpu_seconds"] = round(time.process_time() - cpu_start, 1)
        self.results["command"] = command or " ".join(["python"] + sys.argv)
        if folder is not None:
            self.save(folder)
        print(render(msg("{run} run: {seconds:.0f} s ({cpu:.0f} s of CPU time)", run=self.config.name,
                         seconds=self.results["seconds"], cpu=self.results["cpu_seconds"])))
        return self.results


def record_attention(model, tokens):
    """[per layer (B, H, L, L)]: the attention probabilities of one forward pass (LayerAttention.record)."""
    records = []
    for block in model.layers:
        block.attn.record = records
    try:
        model(tokens)
    finally:
        for block in model.layers:
            block.attn.record = None
    return records



def _print_table(title, lengths, rows):
    """`title` (a message), then one row per arm or variant of its values at each length."""
    print(render(title))
    print(" " * 28 + "".join(f"{'L=' + str(n):>8}" for n in lengths))
    for name, values in rows.items():
        print(pad(label(name), 28, ">") + "".join(f"{v:8.3f}" for v in values))
