"""Chapter 9's laboratory: chapter 7's decoder with the layer patterns of today's models, built from your code.

    from posenc_selfcheck import modernlab
    impl = modernlab.load_impl()       # your chapter 9 functions, chapter 4's apply_rope, chapter 7's decoder
    lab = modernlab.ModernLab(impl)    # POSENC_CH9_RUN: full, reduced (default), ci or stored
    lab.run("results/")                # or one step at a time: see experiments.py

From a terminal: python -m posenc_selfcheck.modernlab --out results/
"""

from __future__ import annotations

from ..lab.plots import show_in_notebooks
from .arms import ARMS, EXERCISES, VARIANTS
from .experiments import CI, CONFIGS, ENV, FULL, REDUCED, Config, ModernLab, config_from_env
from .loading import load_impl

show_in_notebooks()

__all__ = ["ARMS", "CI", "CONFIGS", "Config", "ENV", "EXERCISES", "FULL", "ModernLab", "REDUCED", "VARIANTS",
           "config_from_env", "load_impl"]
