"""Grading one chapter submission vs executing the same notebook with nbclient (what nbgrader and
otter-grader do at autograde time), side by side; and the latency of one self-check cell.

    python benchmarks/bench_grade.py [--repeat 3] [--notebook solutions/01_sinusoidal.ipynb ...] [--all] [--busy]

--all measures every chapter's solution notebook, one after the other, and ends with a ratio per chapter.

Both sides are wall-clock times of a fresh process, median of --repeat runs, alternating, on the same
machine. With --busy a process spinning on one core runs meanwhile (a machine that is doing something
else, as a laptop or a shared grading server is). nbclient's time is only the execution: a notebook
grader would still have to run its tests afterwards, so the ratio understates its cost.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NBCLIENT = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="posenc-course", resources={"metadata": {"path": sys.argv[2]}}).execute()
"""


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def selfcheck_latency(repeat=20):
    """{exercise: (first call, median of `repeat` later calls)} for every exercise's self-check, run on
    the reference in this process. The first call includes reading the chapter's stored answers."""
    sys.path.insert(0, str(ROOT))
    import contextlib
    import io

    import posenc_ref
    from grader.checks import exercises
    from posenc_selfcheck import check

    out = {}
    for exercise in exercises():
        obj = getattr(posenc_ref, exercise)
        with contextlib.redirect_stdout(io.StringIO()):
            start = time.perf_counter()
            check(exercise, obj)
            first = time.perf_counter() - start
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                check(exercise, obj)
                times.append(time.perf_counter() - start)
        out[exercise] = (first, statistics.median(times))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--notebook", nargs="+", default=["solutions/01_sinusoidal.ipynb"])
    parser.add_argument("--all", action="store_true", help="every chapter's solution notebook (solutions/*.ipynb)")
    parser.add_argument("--busy", action="store_true", help="keep one core busy while measuring")
    parser.add_argument("--no-selfcheck", action="store_true", help="skip the self-check latencies")
    args = parser.parse_args()
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        measure(args)
    finally:
        if spinner:
            spinner.kill()


def measure(args):
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "solutions").glob("*.ipynb")) if args.all \
        else args.notebook
    ratios = {notebook: measure_notebook(notebook, args) for notebook in notebooks}
    if len(ratios) > 1:
        print("ratio grader / nbclient per notebook:")
        for notebook, ratio in ratios.items():
            print(f"  {notebook:<48}{ratio:6.2f}")
    if args.no_selfcheck:
        return
    print()
    print("self-check cell latency (in-process; first call, then median of 20):")
    latency = selfcheck_latency()
    for exercise, (first, median) in latency.items():
        print(f"  check({exercise!r}){'':<{30 - len(exercise)}}{first * 1000:8.1f} ms {median * 1000:8.1f} ms")
    worst = max(latency, key=lambda e: latency[e][0])
    print(f"slowest first call: {worst} {latency[worst][0] * 1000:.0f} ms")


def measure_notebook(notebook, args):
    """Grading `notebook` against executing it with nbclient, printed; the ratio of their medians."""
    nb = ROOT / notebook
    grader_cmd = [sys.executable, "-m", "grader", "grade", str(nb)]
    nbclient_cmd = [sys.executable, "-c", NBCLIENT, str(nb), str(nb.parent)]
    wall(grader_cmd)  # warm the file cache for both
    wall(nbclient_cmd)
    ours, theirs = [], []
    for _ in range(args.repeat):
        ours.append(wall(grader_cmd))
        theirs.append(wall(nbclient_cmd))
    g, n = statistics.median(ours), statistics.median(theirs)
    print(f"notebook: {notebook}   runs: {args.repeat} each, median wall-clock seconds"
          + ("   (one core kept busy)" if args.busy else ""))
    print(f"{'python -m grader grade (all checks, sandboxed)':<52}{g:8.2f} s")
    print(f"{'nbclient execute (no checks at all)':<52}{n:8.2f} s")
    print(f"{'ratio grader / nbclient':<52}{g / n:8.2f}", flush=True)
    return g / n


if __name__ == "__main__":
    main()
