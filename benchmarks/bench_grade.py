"""Grading one chapter submission vs executing the same notebook with nbclient (what nbgrader and
otter-grader do at autograde time), side by side; and the latency of one self-check cell.

    python benchmarks/bench_grade.py [--repeat 3] [--notebook solutions/01_sinusoidal.ipynb ...] [--all] [--busy]
                                     [--lanes N] [--baseline-lanes M]

--all measures every chapter's solution notebook, one after the other, and ends with a ratio per chapter.
--lanes: the grader's --lanes (default: its own, one child per core, at most two); --baseline-lanes M also grades
with --lanes M, alternating with the others, and prints both.
--warm also times a warm grader (one process grading the notebook --repeat + 1 times, the first left out): what a
batch worker spends on each submission of a class once its sandbox has started, against nbclient's cold run, which
is what nbgrader's autograde runs for each submission.

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

WARM = """
import sys, time, statistics
from grader.remote import RemoteGrader
from grader.settings import Settings
grader = RemoteGrader(Settings.from_env(lanes=int(sys.argv[3]) if sys.argv[3] else None))
times = []
for _ in range(int(sys.argv[2]) + 1):
    start = time.perf_counter()
    grader.grade(sys.argv[1])
    times.append(time.perf_counter() - start)
print(statistics.median(times[1:]))
"""

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
    parser.add_argument("--lanes", type=int, default=None, help="the grader's --lanes (default: its own)")
    parser.add_argument("--baseline-lanes", type=int, default=None, help="also grade with this --lanes, side by side")
    parser.add_argument("--warm", action="store_true", help="also time a warm grader's grade of the notebook")
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
        print("ratio grader / nbclient per notebook" + (f" (and with --lanes {args.baseline_lanes})"
                                                        if args.baseline_lanes is not None else "")
              + (" (and a warm grader's)" if args.warm else "") + ":")
        for notebook, (ratio, baseline, warm) in ratios.items():
            print(f"  {notebook:<48}{ratio:6.2f}" + "".join(f"{r:8.2f}" for r in (baseline, warm) if r is not None))
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
    """Grading `notebook` against executing it with nbclient, printed; (the ratio of their medians, the same ratio
    for the grader with --baseline-lanes or None, a warm grader's against nbclient's with --warm or None)."""
    nb = ROOT / notebook
    grade = [sys.executable, "-m", "grader", "grade", str(nb)]
    grader_cmd = grade + ([] if args.lanes is None else ["--lanes", str(args.lanes)])
    baseline_cmd = None if args.baseline_lanes is None else grade + ["--lanes", str(args.baseline_lanes)]
    nbclient_cmd = [sys.executable, "-c", NBCLIENT, str(nb), str(nb.parent)]
    wall(grader_cmd)  # warm the file cache for both
    wall(nbclient_cmd)
    ours, baseline, theirs = [], [], []
    for _ in range(args.repeat):
        ours.append(wall(grader_cmd))
        if baseline_cmd:
            baseline.append(wall(baseline_cmd))
        theirs.append(wall(nbclient_cmd))
    g, n = statistics.median(ours), statistics.median(theirs)
    b = statistics.median(baseline) if baseline else None
    lanes = "" if args.lanes is None else f" --lanes {args.lanes}"
    print(f"notebook: {notebook}   runs: {args.repeat} each, median wall-clock seconds"
          + ("   (one core kept busy)" if args.busy else ""))
    print(f"{f'python -m grader grade{lanes} (all checks, sandboxed)':<52}{g:8.2f} s")
    if b is not None:
        print(f"{f'python -m grader grade --lanes {args.baseline_lanes}':<52}{b:8.2f} s")
    print(f"{'nbclient execute (no checks at all)':<52}{n:8.2f} s")
    print(f"{'ratio grader / nbclient':<52}{g / n:8.2f}" + (f"   (--lanes {args.baseline_lanes}: {b / n:.2f})"
                                                           if b is not None else ""), flush=True)
    w = None
    if args.warm:
        out = subprocess.run([sys.executable, "-c", WARM, str(nb), str(args.repeat), str(args.lanes or "")], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
        w = float(out.split()[-1])
        print(f"{f'a warm grader, one more submission{lanes}':<52}{w:8.2f} s")
        print(f"{'ratio warm grader / nbclient':<52}{w / n:8.2f}", flush=True)
    return g / n, (b / n if b is not None else None), (w / n if w is not None else None)


if __name__ == "__main__":
    main()
