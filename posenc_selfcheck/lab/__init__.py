"""Chapter 7's laboratory: small decoders trained with every position scheme, built from your own code.

    from posenc_selfcheck import lab
    impl = lab.load_exercises()                      # your chapters 1-5 (posenc_mine), each self-checked
    experiment = lab.Lab(TinyDecoder, impl)          # your decoder from chapter 7
    experiment.run("results/")                       # or one step at a time: see experiments.py

From a terminal, with your chapter 7 exported too (or inside the course's repository):

    python -m posenc_selfcheck.lab --out results/    # POSENC_CH7_RUN=reduced for the small configuration
"""

from __future__ import annotations

from ..mine import load_exercises as _load
from .experiments import ENV, EXERCISES, FULL, REDUCED, SCHEMES, Config, Lab, config_from_env
from .plots import show_in_notebooks
from .schemes import ALiBi, LearnedAbsolute, MissingExercise, PositionScheme, RelativeBias, RoPE, Sinusoidal, T5Bias

show_in_notebooks()  # the experiments return matplotlib Figures: a notebook shows them as pictures


def load_exercises(names=EXERCISES, **kwargs):
    """The chapters 1-5 exercises the schemes are built from (see posenc_selfcheck.mine.load_exercises)."""
    return _load(list(names), **kwargs)


__all__ = ["ALiBi", "Config", "ENV", "EXERCISES", "FULL", "LearnedAbsolute", "Lab", "MissingExercise",
           "PositionScheme", "REDUCED", "RelativeBias", "RoPE", "SCHEMES", "Sinusoidal", "T5Bias",
           "config_from_env", "load_exercises"]
