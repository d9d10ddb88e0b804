"""python -m posenc_selfcheck.gridlab [--out DIR]: chapter 8's experiment, with results.json and the figure.

The exercises come from your package posenc_mine (export cells of chapters 4 and 8, in the current folder);
inside the course's repository, the course's reference fills in what is missing. POSENC_CH8_RUN=reduced selects
the small configuration."""

from __future__ import annotations

import argparse
import sys

import matplotlib

matplotlib.use("Agg")

from ..messages import msg, render  # noqa: E402
from . import GridLab, config_from_env, load_exercises  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m posenc_selfcheck.gridlab", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="chapter8_results", help="folder for results.json and the figure")
    args = parser.parse_args(argv)
    print(render(msg("your exercises:")))
    impl = load_exercises()
    lab = GridLab(impl, config_from_env())
    arguments = argv if argv is not None else sys.argv[1:]
    lab.run(args.out, command=" ".join(["python -m posenc_selfcheck.gridlab", *arguments]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
