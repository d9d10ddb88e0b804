"""Probes that stay out of the student release (for example the catalogue of broken RoPE variants
that a learner's property test must reject). Each lives in its chapter's folder, course/NN_name/hidden_probes.py,
keeps its own `PROBES` registry, and is imported as `grader.hidden_probes.probes_chNN_hidden` (grader/course.py).
The grader adds them to the public catalog with `catalog()`.

Two lists name them explicitly, by chapter. `IN_SANDBOX`: the hidden probes that run learner code, which the
sandbox copies beside the public probes and adds there too. `CANDIDATES`: the hidden candidate functions a property
test is run on, which never enter the sandbox: the grader computes them in its own process, and the
learner's test calls them through opaque callables (grader/candidates.py).

The sandbox copies public and hidden probe files into one folder, a hidden one as probes_chNN_hidden.py (`FILES`),
so no public probes file may take that name. Import the registry like this (a sandbox probe runs flat there):

    try:
        from posenc_selfcheck.probes_base import registry, build, _get, _pack
    except ImportError:
        from probes_base import registry, build, _get, _pack
    PROBES, probe = registry()

This package's own import is cheap (no torch): the grader reads MODULE_NAMES before torch is loaded.
"""

from __future__ import annotations

from functools import lru_cache

from grader import course

IN_SANDBOX = ("ch03",)  # chapters whose hidden probes run learner code: copied into the sandbox (FILES)
CANDIDATES = ("ch04", "ch08")  # chapters whose hidden candidates stay in the grader's process
MODULE_NAMES = tuple(f"probes_{chapter}_hidden" for chapter in IN_SANDBOX)  # their names in the sandbox's folder
# {name in the sandbox's folder: the file copied there}
FILES = {f"{name}.py": course.chapter(chapter).path("hidden_probes") for name, chapter in zip(MODULE_NAMES, IN_SANDBOX)}


def modules():
    return tuple(course.load(course.chapter(chapter), "hidden_probes") for chapter in IN_SANDBOX + CANDIDATES)


@lru_cache(maxsize=None)
def catalog():
    """{name: probe}: the public catalog and the hidden probes."""
    from posenc_selfcheck import probes

    return probes.catalog(*modules())
