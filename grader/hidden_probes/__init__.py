"""Probes that stay out of the student release (for example the catalogue of broken RoPE variants
that a learner's property test must reject). Each probes_*.py here registers into
posenc_selfcheck.probes.PROBES; the sandbox copies these files beside the public probes.

Name the files probes_chNN_hidden.py (the sandbox copies public and hidden probe files into one
folder, so a name must not repeat a public probes_chNN.py), and import the registry like this
(it runs flat in the sandbox):

    try:
        from posenc_selfcheck.probes import probe, build, _get, _pack
    except ImportError:
        from probes import probe, build, _get, _pack
"""

import importlib
from pathlib import Path

for _path in sorted(Path(__file__).parent.glob("probes_*.py")):
    importlib.import_module(f"{__name__}.{_path.stem}")
