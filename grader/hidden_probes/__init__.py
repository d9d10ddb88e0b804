"""Probes that stay out of the student release (for example the catalogue of broken RoPE variants
that a learner's property test must reject). Each probes_*_hidden.py here keeps its own `PROBES`
registry. The grader adds them to the public catalog with `catalog()`.

Two lists name them explicitly. `MODULE_NAMES`: the hidden probes that run learner code, which the sandbox
copies beside the public probes and adds there too. `CANDIDATE_MODULE_NAMES`: the hidden candidate functions a
property test is run on, which never enter the sandbox: the grader computes them in its own process, and the
learner's test calls them through opaque callables (grader/candidates.py).

Name the files probes_chNN_hidden.py (the sandbox copies public and hidden probe files into one
folder, so a name must not repeat a public probes_chNN.py), and import the registry like this
(a sandbox probe runs flat there):

    try:
        from posenc_selfcheck.probes_base import registry, build, _get, _pack
    except ImportError:
        from probes_base import registry, build, _get, _pack
    PROBES, probe = registry()

This package's own import is cheap (no torch): the grader reads MODULE_NAMES before torch is loaded.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path

MODULE_NAMES = ("probes_ch03_hidden",)  # copied into the sandbox (FILES)
CANDIDATE_MODULE_NAMES = ("probes_ch04_hidden", "probes_ch08_hidden")  # the grader's process only
FILES = tuple(Path(__file__).parent / f"{name}.py" for name in MODULE_NAMES)


def modules():
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in MODULE_NAMES + CANDIDATE_MODULE_NAMES)


@lru_cache(maxsize=None)
def catalog():
    """{name: probe}: the public catalog and the hidden probes."""
    from posenc_selfcheck import probes

    return probes.catalog(*modules())
