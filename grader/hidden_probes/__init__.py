"""Probes that stay out of the student release (for example the catalogue of broken RoPE variants
that a learner's property test must reject). Each probes_*.py here keeps its own `PROBES` registry;
`MODULES` lists them, and the grader and the sandbox add them to the public catalog with
`posenc_selfcheck.probes.catalog(*MODULES)`. The sandbox copies these files beside the public probes.

Name the files probes_chNN_hidden.py (the sandbox copies public and hidden probe files into one
folder, so a name must not repeat a public probes_chNN.py), and import the registry like this
(it runs flat in the sandbox):

    try:
        from posenc_selfcheck.probes import registry, build, _get, _pack
    except ImportError:
        from probes import registry, build, _get, _pack
    PROBES, probe = registry()
"""

from posenc_selfcheck import probes

from . import probes_ch03_hidden, probes_ch04_hidden

MODULES = (probes_ch03_hidden, probes_ch04_hidden)
CATALOG = probes.catalog(*MODULES)
