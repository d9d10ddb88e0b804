"""Chapter 7's experiments, one method per experiment, the same for the notebook and the command line.

    lab = Lab(TinyDecoder, impl, config_from_env())
    lab.train_schemes()      # every scheme, trained at train_len
    lab.extrapolation()      # 1. loss at 1x, 2x, 4x, 8x train_len (Press et al.'s Figure 1)
    lab.rope_scaling()       # 2. RoPE at 4x with chapter 5's frequencies, without and with a short fine-tune
    lab.attention_maps()     # 3. what the heads attend to
    lab.position_probe()     # 4. a linear probe reads positions from NoPE's hidden states
    lab.comparison()         # 5. the table of every scheme, with this run's numbers
    lab.save(folder)         # results.json and the figures

`Lab.run(folder)` calls exactly these, in this order (`Lab.STEPS`). The notebook calls them one cell at a
time; `python -m posenc_selfcheck.lab` calls `run`. `config_from_env()` picks the configuration from the
environment variable POSENC_CH7_RUN ("full", the default, or "reduced": same code, smaller sizes).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from ..columns import pad
from ..messages import msg, nmsg, render, verbatim
from . import analysis, data, plots, train
from .labels import label
from .schemes import ALiBi, LearnedAbsolute, MissingExercise, PositionScheme, RelativeBias, RoPE, Sinusoidal, T5Bias

ENV = "POSENC_CH7_RUN"


@dataclasses.dataclass(frozen=True)
class Config:
    name: str
    d_model: int = 64  # width of the residual stream
    num_layers: int = 2
    num_heads: int = 4  # head_dim = d_model / num_heads
    train_len: int = 64  # L: every scheme trains on windows of L bytes
    batch_size: int = 32
    steps: int = 1500  # training steps per scheme
    lr: float = 3e-3  # AdamW peak learning rate (linear warm-up, cosine to a tenth)
    warmup: int = 100
    eval_factors: tuple = (1, 2, 4, 8)  # evaluation lengths, in multiples of L
    eval_tokens: int = 32768  # held-out bytes scored at every length
    relative_max_distance: int = 16  # K of the clipped relative bias
    t5_buckets: int = 32
    t5_max_distance: int = 64  # T5 uses 128 at a training length of 512; here every bucket is seen in training
    rope_factor: float = 4.0  # chapter 5's scale factor s: the target length is s L
    finetune_factor: int = 2  # fine-tune at this multiple of L (Chen et al. fine-tune at the target length)
    finetune_steps: int = 200
    finetune_lr: float = 1e-3
    mlm_steps: int = 1000  # the bidirectional NoPE model of the probe (masked-token objective)
    probe_sequences: int = 256  # windows of L for the position probe (half to fit, half to score)
    seed: int = 0
    threads: int = 1  # small models gain little from a second thread, and lose much on a busy machine


FULL = Config("full")
# The same experiments, small enough for CI: the solution notebook runs this one under nbval.
REDUCED = Config("reduced", d_model=32, num_heads=4, train_len=32, batch_size=16, steps=40, warmup=10,
                 eval_tokens=2048, relative_max_distance=8, t5_max_distance=32, finetune_steps=10, mlm_steps=30,
                 probe_sequences=32)
CONFIGS = {"full": FULL, "reduced": REDUCED}
# Not a configuration to train: POSENC_CH7_RUN=stored shows the full run's stored results and figures
# (docs/chapter7/) step by step, without training (what the book shows).
STORED = dataclasses.replace(FULL, name="stored")


ABOUT = {"full": msg("the chapter's numbers, about 8 minutes on one CPU thread"),
         "reduced": msg("the same code on a smaller model in seconds; its numbers mean nothing")}


def announce(name, about, configs, env):
    """The line that says which run this is, and how to choose the other one."""
    other = next(n for n in configs if n != name)
    print(render(msg("{run} run ({about}); for the {other} one: RUN = {quoted} in the cell, or {env}={other} in the "
                     "environment", run=name, about=about.get(name, msg("a custom configuration")), other=other,
                     quoted=repr(other), env=env)))


def config_from_env(default="full"):
    """The configuration named by POSENC_CH7_RUN when it is set (CI, the book), else `default` ("full" or
    "reduced"); "stored" is the full run's, shown from docs/chapter7/ instead of trained."""
    return _config(ENV, CONFIGS, STORED, default)


def _config(env, configs, stored, default):
    name = os.environ.get(env, default)
    if name == stored.name:
        return stored
    if name not in configs:
        raise ValueError(f"{env}={name!r}: choose one of {', '.join([*configs, stored.name])}")
    return configs[name]


def stored_results(chapter):
    """The full run's results.json in docs/chapterN/ of the course's repository (what a stored run shows)."""
    path = Path(__file__).resolve().parents[2] / "docs" / f"chapter{chapter}" / "results.json"
    if not path.exists():
        raise FileNotFoundError(f"a stored run shows {path}, which only the course's repository has")
    return json.loads(path.read_text())


def stored_figure(chapter, name):
    """A figure of the full run as stored (docs/chapterN/NAME.png): an image a notebook shows."""
    from IPython.display import Image

    return Image(filename=str(Path(__file__).resolve().parents[2] / "docs" / f"chapter{chapter}" / f"{name}.png"))


SCHEMES = ("NoPE", "sinusoidal", "learned", "relative", "T5", "ALiBi", "RoPE")
NEEDS = {  # the exercises of chapters 1-5 each scheme is built from
    "NoPE": (), "sinusoidal": ("sinusoidal_table",), "learned": ("LearnablePositionalEncoding",),
    "relative": ("RelativePositionBias",), "T5": ("t5_bucket",), "ALiBi": ("alibi_bias",),
    "RoPE": ("rope_cos_sin", "apply_rope"),
}
EXERCISES = tuple(dict.fromkeys(n for names in NEEDS.values() for n in names)) + (
    "resize_position_table", "scaled_rope_inv_freq")
ROPE_VARIANTS = ("default", "linear", "dynamic", "yarn")
MASK_ID = data.VOCAB_SIZE  # the masked-token objective's [MASK]: one id past the bytes


class Lab:
    STEPS = ("train_schemes", "extrapolation", "rope_scaling", "attention_maps", "position_probe", "comparison")

    def __init__(self, model_cls, impl, config=None):
        self.model_cls, self.impl = model_cls, impl
        self.config = config or config_from_env()
        torch.set_num_threads(self.config.threads)
        self.corpus = data.load_corpus()
        self.models, self.figures, self.skipped = {}, {}, {}
        self.results = {
            "config": dataclasses.asdict(self.config), "corpus": str(self.corpus.describe()),
            "torch": str(torch.__version__), "python": platform.python_version(), "threads": torch.get_num_threads(),
            "machine": platform.machine(), "steps": list(self.STEPS),
        }
        c = self.config
        self.stored = c.name == STORED.name
        if self.stored:  # every step shows what the full run measured, and trains nothing
            self.results = stored_results(7)
            print(render(msg("the full run's stored results and figures (docs/chapter7/, measured in {seconds:.0f} s "
                             "by `{command}`), shown without training; unset {env} to train here",
                             seconds=self.results["seconds"], command=self.results["command"], env=ENV)))
            return
        announce(c.name, ABOUT, CONFIGS, ENV)
        print(render(msg("{run} run: d_model={d_model}, {layers} layers, {heads} heads, trained on {steps} batches of "
                         "{batch} x {length} bytes; torch threads: {threads}", run=c.name, d_model=c.d_model,
                         layers=c.num_layers, heads=c.num_heads, steps=c.steps, batch=c.batch_size,
                         length=c.train_len, threads=torch.get_num_threads())))
        print(render(msg("text: {corpus}", corpus=self.corpus.describe())))

    # ---- building blocks ---------------------------------------------------------------------
    def scheme(self, name):
        c, impl = self.config, self.impl
        head_dim = c.d_model // c.num_heads
        build = {
            "NoPE": lambda: PositionScheme(),
            "sinusoidal": lambda: Sinusoidal(impl, c.d_model),
            "learned": lambda: LearnedAbsolute(impl, c.d_model, max(c.eval_factors) * c.train_len),
            "relative": lambda: RelativeBias(impl, c.num_heads, c.relative_max_distance),
            "T5": lambda: T5Bias(impl, c.num_heads, c.t5_buckets, c.t5_max_distance),
            "ALiBi": lambda: ALiBi(impl, c.num_heads),
            "RoPE": lambda: RoPE(impl, head_dim),
        }
        return build[name]()

    def new_model(self, name, causal=True, vocab_size=data.VOCAB_SIZE):
        """A freshly initialised model with scheme `name` (the same initial weights outside the scheme for all)."""
        c = self.config
        torch.manual_seed(c.seed)  # the scheme's own initialisation
        scheme = self.scheme(name)
        if causal:
            model = self.model_cls(vocab_size, c.d_model, c.num_layers, c.num_heads, scheme)
        else:
            model = self.model_cls(vocab_size, c.d_model, c.num_layers, c.num_heads, scheme, causal=False)
        return train.initialize(model, c.seed)

    def sampler(self, length):
        return lambda generator: data.random_windows(self.corpus.train, self.config.batch_size, length, generator)

    def evaluate(self, model, length):
        inputs, targets = data.eval_windows(self.corpus.held_out, length, self.eval_tokens())
        return train.evaluate(model, inputs, targets)

    def eval_tokens(self):
        longest = max(self.config.eval_factors) * self.config.train_len
        return max(longest, self.config.eval_tokens // longest * longest)

    def lengths(self):
        return [f * self.config.train_len for f in self.config.eval_factors]

    # ---- training ----------------------------------------------------------------------------
    def train_schemes(self, names=SCHEMES):
        """Train one model per scheme at train_len, on the same batches in the same order."""
        c = self.config
        if self.stored:
            trained, seconds = self.results["training"], self.results["seconds_per_step"]["train_schemes"]
            print(render(nmsg("stored: {n} model trained at L={length} ({names}) in {seconds:.0f} s",
                              "stored: {n} models trained at L={length} ({names}) in {seconds:.0f} s", n=len(trained),
                              length=c.train_len, names=", ".join(map(label, trained)), seconds=seconds)))
            return
        self.results["training"] = {}
        for name in names:
            try:
                model = self.new_model(name)
            except MissingExercise as exc:
                self.skipped[name] = str(exc.args[0])
                print(render(msg("{scheme}: skipped. {reason}", scheme=label(name), reason=exc.args[0])))
                continue
            except NotImplementedError:
                print(render(msg("TinyDecoder is not finished yet: finish exercises 7.1 and 7.2, then run this cell "
                                 "again")))
                return
            log = train.train(model, self.sampler(c.train_len), c.steps, c.lr, c.warmup,
                              label=f"{label(name)} (L={c.train_len})", seed=c.seed)
            scheme_params = sum(p.numel() for p in model.scheme.parameters())
            self.results["training"][name] = {**log, "scheme_parameters": scheme_params,
                                              "parameters": sum(p.numel() for p in model.parameters())}
            self.models[name] = model

    # ---- 1. train short, test long -----------------------------------------------------------
    def extrapolation(self):
        """Loss at every evaluation length, one line per scheme; learned also with its table resized."""
        if self.stored:
            return self._report_extrapolation(self.results["extrapolation"])
        if not self.models:
            print(render(msg("no trained models yet: run train_schemes() first")))
            return None
        out = {"lengths": self.lengths(), "loss": {}, "per_position": {}}
        for name, model in self.models.items():
            results = [self.evaluate(model, length) for length in out["lengths"]]
            out["loss"][name] = [r["loss"] for r in results]
            out["per_position"][name] = _bins(results[-1]["per_position"], self.config.train_len // 4)
        learned = self.models.get("learned")
        if learned is not None and getattr(self.impl, "resize_position_table", None) is not None:
            learned.scheme.stretch(self.config.train_len)
            out["loss"]["learned, table resized"] = [self.evaluate(learned, n)["loss"] for n in out["lengths"]]
            learned.scheme.stretch(None)
        self.results["extrapolation"] = out
        return self._report_extrapolation(out)

    def _report_extrapolation(self, out):
        _print_table(msg("mean loss (nats per byte) at each evaluation length"), out["lengths"], out["loss"])
        self.figures["extrapolation"] = plots.extrapolation(out, self.config.train_len)
        return self.figures["extrapolation"]

    # ---- 2. extending RoPE -------------------------------------------------------------------
    def rope_scaling(self):
        """The RoPE model with chapter 5's frequencies at factor s, as trained and after a short fine-tune at
        finetune_factor x train_len with those frequencies."""
        c = self.config
        if self.stored:
            return self._report_rope_scaling(self.results["rope_scaling"])
        if "RoPE" not in self.models:
            print(render(msg("RoPE was not trained: nothing to extend")))
            return None
        if getattr(self.impl, "scaled_rope_inv_freq", None) is None:
            problem = getattr(self.impl, "problems", {}).get("scaled_rope_inv_freq", "")  # a message
            print(render(msg("chapter 5's scaled_rope_inv_freq is missing: only the default frequencies can be shown. "
                             "{problem}", problem=problem)))
        base = self.models["RoPE"]
        lengths = [c.train_len * f for f in (1, c.finetune_factor, int(c.rope_factor))]
        out = {"lengths": lengths, "factor": c.rope_factor, "finetune_len": c.finetune_factor * c.train_len,
               "finetune_steps": c.finetune_steps, "no_finetune": {}, "finetuned": {}}
        for variant in ROPE_VARIANTS:
            if variant != "default" and getattr(self.impl, "scaled_rope_inv_freq", None) is None:
                continue
            scaling = {} if variant == "default" else {"rope_type": variant, "factor": c.rope_factor,
                                                       "original_max_position_embeddings": c.train_len}
            base.scheme.set_frequencies(**scaling)
            out["no_finetune"][variant] = [self.evaluate(base, n)["loss"] for n in lengths]
            base.scheme.set_frequencies()
            tuned = self.new_model("RoPE")
            tuned.load_state_dict(base.state_dict())
            tuned.scheme.set_frequencies(**scaling)
            train.train(tuned, self.sampler(c.finetune_factor * c.train_len), c.finetune_steps, c.finetune_lr,
                        warmup=max(1, c.finetune_steps // 10),
                        label=render(msg("fine-tune {variant} (L={length})", variant=variant,
                                         length=out["finetune_len"])),
                        seed=c.seed + 1)
            out["finetuned"][variant] = [self.evaluate(tuned, n)["loss"] for n in lengths]
        self.results["rope_scaling"] = out
        return self._report_rope_scaling(out)

    def _report_rope_scaling(self, out):
        c = self.config
        _print_table(msg("RoPE, scale factor {factor:g}: as trained", factor=out["factor"]), out["lengths"],
                     out["no_finetune"])
        _print_table(msg("after {steps} steps at L={length}", steps=out["finetune_steps"], length=out["finetune_len"]),
                     out["lengths"], out["finetuned"])
        self.figures["rope_scaling"] = plots.rope_scaling(out, c.train_len)
        return self.figures["rope_scaling"]

    # ---- 3. what the heads do ----------------------------------------------------------------
    def attention_maps(self, names=("ALiBi", "RoPE", "NoPE")):
        """Attention probabilities of one held-out window of 2 x train_len, and the mean distance each head
        looks back, at train_len and at the longest evaluation length."""
        c = self.config
        if self.stored:  # the maps themselves are not stored: the figure is
            out = self.results["attention"]
            for name, distances in out["mean_distance"].items():
                _print_distances(name, distances, out["lengths"])
            return stored_figure(7, "attention_maps")
        names = [n for n in names if n in self.models]
        if not names:
            print(render(msg("no trained models yet: run train_schemes() first")))
            return None
        window = self.corpus.held_out[: 2 * c.train_len][None]  # (1, 2L)
        longest = self.corpus.held_out[: max(self.lengths())][None]
        out = {"window": 2 * c.train_len, "lengths": [c.train_len, longest.shape[1]], "mean_distance": {}}
        maps = {}
        for name in names:
            model = self.models[name]
            try:
                maps[name] = [w[0] for w in analysis.attention_weights(model, window)]  # per layer (H, 2L, 2L)
                short = analysis.attention_weights(model, window[:, :c.train_len])
                long = analysis.attention_weights(model, longest)
            except RuntimeError as exc:  # the learner's own error: as it was raised
                problem = exc.args[0] if isinstance(exc, analysis.NoAttentionSeen) else verbatim(exc)
                print(render(msg("{scheme}: {problem}", scheme=label(name), problem=problem)))
                continue
            # [at train_len, at the longest length], each [per layer [per head]]
            distances = [[analysis.mean_distance(w).tolist() for w in records] for records in (short, long)]
            out["mean_distance"][name] = distances
            _print_distances(name, distances, out["lengths"])
        self.results["attention"] = out
        if maps:
            self.figures["attention_maps"] = plots.attention_maps(maps, c.train_len)
            return self.figures["attention_maps"]
        return None

    # ---- 4. NoPE knows where it is -----------------------------------------------------------
    def position_probe(self):
        """Fit a linear probe from each layer's hidden states to the position, for three NoPE models: the causal
        one of experiment 1 (windows start anywhere in the text), a causal one whose windows all start with a
        BOS byte, and one trained without the causal mask (masked-token objective, BOS windows)."""
        c = self.config
        if self.stored:
            return self._report_probe(self.results["probe"])
        if "NoPE" not in self.models:
            print(render(msg("NoPE was not trained: nothing to probe")))
            return None
        if data.BOS in self.corpus.train or data.BOS in self.corpus.held_out:
            raise RuntimeError(f"byte {data.BOS} occurs in the text: it cannot mark the start of a window")
        sample = self.sampler(c.train_len)

        def sample_bos(generator):
            return data.with_bos(*sample(generator))

        causal_bos = self.new_model("NoPE")
        train.train(causal_bos, sample_bos, c.steps, c.lr, c.warmup, label=render(msg("NoPE, BOS first")), seed=c.seed)
        bidirectional = self.new_model("NoPE", causal=False, vocab_size=data.VOCAB_SIZE + 1)
        log = train.train(bidirectional, sample_bos, c.mlm_steps, c.lr, c.warmup,
                          label=render(msg("NoPE, no causal mask")),
                          objective="mlm", mask_id=MASK_ID, seed=c.seed)
        n = c.probe_sequences
        windows = self.corpus.held_out[: n * c.train_len].view(n, c.train_len)  # (N, L)
        bos_windows = data.with_bos(windows, windows)[0]
        out = {"sequences": n, "bidirectional_objective": "masked tokens (15%)",
               "bidirectional_loss_curve": log["loss_curve"]}
        for probed, model, inputs in (("causal", self.models["NoPE"], windows), ("causal_bos", causal_bos, bos_windows),
                                      ("bidirectional_bos", bidirectional, bos_windows)):
            states = analysis.hidden_states(model, inputs)  # [(N, L, d)] input of layer 0, then every layer
            out[probed] = [analysis.position_probe(s[: n // 2], s[n // 2:]) for s in states]
        self.results["probe"] = out
        return self._report_probe(out)

    def _report_probe(self, out):
        for probed, setting in analysis.PROBED.items():
            print(render(msg("{setting}: R² embeddings, then after each layer: {r2}; mean error in positions (last "
                             "layer) {error:.1f}", setting=pad(render(setting), 34, ">"),
                             r2=", ".join(f"{p['r2']:5.2f}" for p in out[probed]), error=out[probed][-1]["mae"])))
        self.figures["position_probe"] = plots.position_probe(out, self.config.train_len)
        return self.figures["position_probe"]

    # ---- 5. every scheme, side by side -------------------------------------------------------
    def comparison(self):
        """The table of every scheme in the course, with this run's measurements where there are some."""
        rows = comparison_rows(self.results)
        self.results["comparison"] = rows  # (a stored run's rows are those of its stored results)
        text = markdown_table(rows)
        try:
            from IPython import get_ipython
            from IPython.display import Markdown, display

            if get_ipython() is not None:
                display(Markdown(text))
                return None
        except ImportError:
            pass
        print(text)

    # ---- everything --------------------------------------------------------------------------
    def save(self, folder):
        """results.json and one PNG per figure into `folder`."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "results.json").write_text(json.dumps(self.results, indent=1) + "\n")
        for name, figure in self.figures.items():
            figure.savefig(folder / f"{name}.png", dpi=110, bbox_inches="tight")
        print(render(nmsg("wrote {path} and {n} figure", "wrote {path} and {n} figures", n=len(self.figures),
                          path=str(folder / "results.json"))))

    def run(self, folder=None, command=None):
        start = time.perf_counter()
        self.results["seconds_per_step"] = {}
        for step in self.STEPS:
            tick = time.perf_counter()
            getattr(self, step)()
            self.results["seconds_per_step"][step] = round(time.perf_counter() - tick, 1)
        self.results["seconds"] = round(time.perf_counter() - start, 1)
        self.results["command"] = command or " ".join(["python"] + sys.argv)
        if folder is not None:
            self.save(folder)
        print(render(msg("{run} run: {seconds:.0f} s", run=self.config.name, seconds=self.results["seconds"])))
        return self.results


def _print_distances(name, distances, lengths):
    """One model's mean distance looked back per head of the last layer, at the two lengths."""
    print(render(msg("{scheme}: mean distance looked back per head (last layer), at L={short}: {at_short}; at "
                     "L={long}: {at_long}", scheme=pad(label(name), 10, ">"), short=lengths[0], long=lengths[1],
                     at_short=", ".join(f"{v:5.1f}" for v in distances[0][-1]),
                     at_long=", ".join(f"{v:5.1f}" for v in distances[1][-1]))))


def _bins(values, width):
    """Means of consecutive groups of `width` values."""
    return [sum(values[i:i + width]) / len(values[i:i + width]) for i in range(0, len(values), width)]


def _print_table(title, lengths, rows):
    """`title` (a message), then one row per scheme of its values at each length."""
    print(render(title))
    print(" " * 24 + "".join(f"{'L=' + str(n):>9}" for n in lengths))
    for name, values in rows.items():
        print(pad(label(name), 24, ">") + "".join(f"{v:9.3f}" for v in values))


# ---- 5. the table ----------------------------------------------------------------------------
FACTS = {  # where it acts, what it learns, what chapter 6 measured, who uses it (checked facts only); a cell in words
    # is a message (context "comparison"), rendered where the table is shown, and results.json keeps its English
    "NoPE": (msg("nowhere (the causal mask only)", context="comparison"), "0",
             msg("nothing to add", context="comparison"),
             msg("research models (Haviv et al. 2022; Kazemnejad et al. 2023)", context="comparison")),
    "sinusoidal": (msg("input, once", context="comparison"), "0",
                   msg("one (L, d) addition: lost in the noise (ch. 6)", context="comparison"),
                   msg("the original Transformer (Vaswani et al. 2017)", context="comparison")),
    "learned": (msg("input, once", context="comparison"), "max_len x d",
                msg("one addition (ch. 6)", context="comparison"),
                msg("BERT, GPT-2, ViT and DeiT", context="comparison")),
    "relative": (msg("logits", context="comparison"), msg("(2K+1) x heads", context="comparison"),
                 msg("a float (H, L, L) attn_mask: 1.4-1.7x slower attention on CPU, no flash kernel on GPU (ch. 6)",
                     context="comparison"),
                 msg("Shaw et al. 2018 (with key and value vectors); Swin's per-head table", context="comparison")),
    "T5": (msg("logits", context="comparison"), msg("buckets x heads", context="comparison"),
           msg("as relative, plus the bucketing", context="comparison"), "T5, mT5, Flan-T5"),
    "ALiBi": (msg("logits", context="comparison"), "0", msg("as relative (a float attn_mask)", context="comparison"),
              "BLOOM, MPT"),
    "RoPE": (msg("queries and keys", context="comparison"), "0",
             msg("elementwise on q and k: 1.0-1.4x (ch. 6); keeps the flash kernel", context="comparison"),
             "LLaMA 1-3, GPT-NeoX, GPT-J, Mistral, Qwen, PaLM"),
    "RoPE + linear": (msg("queries and keys", context="comparison"), "0", msg("as RoPE", context="comparison"),
                      msg("position interpolation (Chen et al. 2023)", context="comparison")),
    "RoPE + dynamic": (msg("queries and keys", context="comparison"), "0",
                       msg("as RoPE, frequencies recomputed as inputs grow", context="comparison"),
                       msg("transformers' dynamic NTK scaling, no fine-tuning", context="comparison")),
    "RoPE + YaRN": (msg("queries and keys", context="comparison"), "0", msg("as RoPE", context="comparison"),
                    msg("YaRN (Peng et al. 2023); DeepSeek-V2, Qwen2's long-context setting", context="comparison")),
    "RoPE + llama3": (msg("queries and keys", context="comparison"), "0", msg("as RoPE", context="comparison"),
                      msg("Llama 3.1 (not measured here)", context="comparison")),
    # chapter 9: today's large models (read in transformers 5.23, not trained here)
    "MLA, decoupled RoPE": (msg("a slice of q and one key shared by all heads", context="comparison"), "0",
                            msg("as RoPE on qk_rope_head_dim coordinates; the cache holds kv_lora_rank + "
                                "qk_rope_head_dim numbers per token", context="comparison"),
                            msg("DeepSeek-V2, V3 and V3.2 (ch. 9)", context="comparison")),
    "NoPE layers + temperature": (msg("queries of every fourth layer (a scale)", context="comparison"), "0",
                                  msg("one multiplication of q", context="comparison"),
                                  msg("Llama 4, its RoPE layers chunked; SmolLM3's no_rope_layers (ch. 9)",
                                      context="comparison")),
    "local + global RoPE bases": (msg("queries and keys", context="comparison"), "0",
                                  msg("as RoPE; a sliding window on the local layers", context="comparison"),
                                  msg("Gemma 3: base 10^4 local, 10^6 global with linear scaling (ch. 9)",
                                      context="comparison")),
    "attention sinks": (msg("logits (one more column)", context="comparison"), "H",
                        msg("one more column in each softmax", context="comparison"),
                        msg("gpt-oss, with YaRN and alternating windows (ch. 9)", context="comparison")),
    # chapter 8: positions on a grid (measured in chapter 8's experiment, not here)
    "learned 2-D, resized": (msg("input, once", context="comparison"), "H·W x d",
                             msg("one addition; a bicubic resize per new resolution", context="comparison"),
                             msg("ViT, DeiT (timm's resample_abs_pos_embed at a new image size; ch. 8)",
                                 context="comparison")),
    "2-D sinusoidal": (msg("input, once", context="comparison"), "0", msg("one addition", context="comparison"),
                       msg("MAE (ViTMAE in transformers; ch. 8)", context="comparison")),
    "axial 2-D RoPE": (msg("queries and keys", context="comparison"), "0", msg("as RoPE", context="comparison"),
                       msg("the vision towers of Qwen2-VL, Qwen2.5-VL and Qwen3-VL (ch. 8)", context="comparison")),
    "M-RoPE": (msg("queries and keys", context="comparison"), "0",
               msg("as RoPE, three ids per token", context="comparison"),
               msg("the language models of Qwen2-VL and Qwen2.5-VL; interleaved in Qwen3-VL (ch. 8)",
                   context="comparison")),
}


def comparison_rows(results):
    """One row per scheme: the facts above and this run's numbers (None where this run has none)."""
    ext = results.get("extrapolation", {})
    lengths, losses = ext.get("lengths", []), ext.get("loss", {})
    training = results.get("training", {})
    rope = results.get("rope_scaling", {})
    nope_ms = training.get("NoPE", {}).get("ms_per_step")
    rows = []
    for name, (where, learns, cost, used_by) in FACTS.items():
        row = {"scheme": name, "where": str(where), "learns": str(learns), "cost": str(cost), "used_by": str(used_by),
               "loss_1x": None, "loss_longest": None, "step_time_vs_nope": None}
        if name in losses:
            row["loss_1x"], row["loss_longest"] = losses[name][0], losses[name][-1]
        variant = {"RoPE + linear": "linear", "RoPE + dynamic": "dynamic", "RoPE + YaRN": "yarn"}.get(name)
        if variant and variant in rope.get("finetuned", {}):
            row["loss_1x"] = rope["no_finetune"][variant][0]
            row["loss_longest"] = rope["no_finetune"][variant][-1]
            row["loss_longest_finetuned"] = rope["finetuned"][variant][-1]
        if name in training and nope_ms:
            row["step_time_vs_nope"] = training[name]["ms_per_step"] / nope_ms
            row["learns"] = f"{training[name]['scheme_parameters']:,}"
        rows.append(row)
    rows.append({"lengths": lengths, "rope_lengths": rope.get("lengths")})
    return rows


def markdown_table(rows):
    """The rows as a Markdown table in the reader's language: its words are the facts' messages, found by their
    English (what the rows hold)."""
    *rows, meta = rows
    lengths, rope_lengths = meta["lengths"], meta["rope_lengths"]

    def fmt(v):
        return "—" if v is None else f"{v:.2f}"

    columns = [msg("scheme", context="comparison column"), msg("acts on", context="comparison column"),
               msg("parameters (here)", context="comparison column"),
               msg("loss at L={length}", context="comparison column", length=lengths[0] if lengths else "?"),
               msg("loss at the longest length", context="comparison column"),
               msg("step time vs NoPE", context="comparison column"),
               msg("cost (chapter 6)", context="comparison column"), msg("used by", context="comparison column")]
    head = "| " + " | ".join(render(c) for c in columns) + " |\n" + "| --- " * len(columns) + "|\n"
    lines = []
    for r in rows:
        longest = fmt(r["loss_longest"])
        if "loss_longest_finetuned" in r:
            longest = render(msg("{loss} ({finetuned} fine-tuned)", loss=longest,
                                 finetuned=fmt(r["loss_longest_finetuned"])))
        words = {k: render(msg(r[k], context="comparison")) for k in ("where", "learns", "cost", "used_by")}
        cells = [label(r["scheme"]), words["where"], words["learns"], fmt(r["loss_1x"]), longest,
                 fmt(r["step_time_vs_nope"]), words["cost"], words["used_by"]]
        lines.append("| " + " | ".join(cells) + " |")
    note = render(msg("Longest length: {longest} for the schemes trained here; {rope_longest} for the scaled RoPE rows "
                      "(the scale factor's target). Losses in nats per byte on held-out text.",
                      longest=lengths[-1] if lengths else "?", rope_longest=rope_lengths[-1] if rope_lengths else "?"))
    return head + "\n".join(lines) + "\n\n" + note
