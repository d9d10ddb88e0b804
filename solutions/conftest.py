"""Executing the solution notebooks under pytest (nbval, in CI): chapter 7 runs its reduced configuration.

The variable is set when this folder is collected, before any notebook's kernel starts (kernels inherit the
environment). The full run is `python -m posenc_selfcheck.lab --out docs/chapter7` (see docs/chapter7/)."""

import os

os.environ.setdefault("POSENC_CH7_RUN", "reduced")

# solutions/zh/ holds the same notebooks with the Markdown in Chinese: their code cells are identical to these
# (tests/test_i18n.py), so nbval runs the English ones only
collect_ignore = ["zh"]
