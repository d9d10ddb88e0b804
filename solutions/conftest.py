"""Executing the solution notebooks under pytest (nbval, in CI): chapters 7 and 8 run their reduced configurations.

The variable is set when this folder is collected, before any notebook's kernel starts (kernels inherit the
environment). The full runs are `python -m posenc_selfcheck.lab --out docs/chapter7` (see docs/chapter7/) and
`python -m posenc_selfcheck.gridlab --out docs/chapter8` (see docs/chapter8/)."""

import os

os.environ.setdefault("POSENC_CH7_RUN", "reduced")
os.environ.setdefault("POSENC_CH8_RUN", "reduced")
