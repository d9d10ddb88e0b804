"""Executing the solution notebooks under pytest (nbval, in CI): chapter 7 runs its reduced configuration.

The variable is set when this folder is collected, before any notebook's kernel starts (kernels inherit the
environment). The full run is `python -m posenc_selfcheck.lab --out docs/chapter7` (see docs/chapter7/)."""

import os

os.environ.setdefault("POSENC_CH7_RUN", "reduced")
