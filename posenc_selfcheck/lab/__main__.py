"""python -m posenc_selfcheck.lab [--out DIR]: every chapter 7 experiment, with results.json and figures.

The decoder and the chapters 1-5 exercises come from your package posenc_mine (export cells of the
notebooks, in the current folder); inside the course's repository, the course's reference fills in what is
missing. POSENC_CH7_RUN=reduced selects the small configuration."""

from __future__ import annotations

import argparse
import sys

import matplotlib

matplotlib.use("Agg")

from ..messages import msg, render  # noqa: E402
from . import EXERCISES, Lab, config_from_env, load_exercises  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_selfcheck.lab", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="chapter7_results", help="folder for results.json and the figures")
    args = parser.parse_args(argv)
    print(render(msg("your exercises:")))
    impl = load_exercises(list(EXERCISES) + ["TinyDecoder"])
    if getattr(impl, "TinyDecoder", None) is None:
        print(render(msg("no TinyDecoder: finish chapter 7's exercises and run its export cell first")))
        return 1
    lab = Lab(impl.TinyDecoder, impl, config_from_env())
    arguments = argv if argv is not None else sys.argv[1:]
    lab.run(args.out, command=" ".join(["python -m posenc_selfcheck.lab", *arguments]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
