"""Chapter 8's laboratory: a small ViT-style encoder trained on a synthetic grid task at one grid size and
evaluated at smaller and larger grids, with positions from your chapter 8 (and chapter 4) code.

    from posenc_selfcheck import gridlab
    impl = gridlab.load_exercises()                  # your resize_position_table_2d, ..., apply_rope
    impl = gridlab.load_exercises(notebook=globals())  # in chapter 8's notebook: its own functions
    experiment = gridlab.GridLab(impl)
    experiment.run("results/")                       # or one step at a time: see experiments.py

From a terminal (inside the course's repository, or with chapters 4 and 8 exported):

    python -m posenc_selfcheck.gridlab --out results/   # POSENC_CH8_RUN=reduced for the small configuration
"""

from __future__ import annotations

from ..messages import msg
from ..mine import load_exercises as _load
from .experiments import ENV, EXERCISES, FULL, REDUCED, SCHEMES, STORED, Config, GridLab, config_from_env


def load_exercises(names=EXERCISES, notebook=None, **kwargs):
    """The exercises the schemes are built from (see posenc_selfcheck.mine.load_exercises). With `notebook`, a
    notebook's globals(), the exercises it defines are taken from it as they stand (the experiment skips a
    scheme whose exercise is not finished yet); the others come from your package, or the course's reference."""
    own = [name for name in names if notebook is not None and callable(notebook.get(name))]
    impl = _load([name for name in names if name not in own], **kwargs)
    for name in own:
        setattr(impl, name, notebook[name])
        impl.sources[name] = msg("this notebook", context="exercise source")
    return impl


__all__ = ["Config", "ENV", "EXERCISES", "FULL", "GridLab", "REDUCED", "SCHEMES", "STORED", "config_from_env",
           "load_exercises"]
