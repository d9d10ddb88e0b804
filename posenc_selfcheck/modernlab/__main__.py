"""python -m posenc_selfcheck.modernlab [--out DIR] [--run full|reduced|ci] [--impl MODULE]: chapter 9's experiment.

Chapter 9's functions come from your package posenc_mine (the export cell of chapter 9's notebook, in the current
folder), or from MODULE; chapter 4's apply_rope and chapter 7's TinyDecoder from posenc_mine as in chapter 7.
--run (or POSENC_CH9_RUN) picks the configuration: reduced (the default), full or ci."""

from __future__ import annotations

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")

from ..messages import msg, render  # noqa: E402
from .experiments import CONFIGS, ENV, ModernLab, config_from_env  # noqa: E402
from .loading import load_impl  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_selfcheck.modernlab", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="chapter9_results", help="folder for results.json and the figures")
    parser.add_argument("--run", choices=list(CONFIGS), help=f"the configuration (default: {ENV}, else reduced)")
    parser.add_argument("--impl", help="a module defining chapter 9's functions (default: your posenc_mine)")
    args = parser.parse_args(argv)
    if args.run:
        os.environ[ENV] = args.run
    print(render(msg("your exercises:")))
    impl = load_impl(args.impl)
    if impl is None:
        return 1
    lab = ModernLab(impl, config_from_env())
    arguments = argv if argv is not None else sys.argv[1:]
    lab.run(args.out, command=" ".join(["python -m posenc_selfcheck.modernlab", *arguments]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
