"""How long a learner waits for a self-check cell: every exercise's self-check on correct code (the
reference), the first call in a fresh process and the later calls.

    python benchmarks/bench_selfcheck.py              # every exercise, 5 later calls each
    python benchmarks/bench_selfcheck.py --busy 2     # the same with 2 processes keeping the cores busy
    python benchmarks/bench_selfcheck.py --later 10 --exercises apply_rope RoPEAttention

Each exercise gets a fresh Python process (as a new kernel would be): it imports torch and the
self-check package (reported once, as "import"), then times the first `check(...)` call, which pays for
loading the chapter's stored answers and every first use of a torch kernel, then `--later` more calls
(median and max). Torch keeps its default number of threads in the process; the self-check runs its
probes on one thread. The baseline, side by side in the same run, is the same self-check with the
probes on torch's default threads (what it did before), in another fresh process. `--busy N` starts N
processes that keep the cores busy with matrix products while everything is measured, as on a shared
machine. No timing is asserted anywhere: this prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import contextlib, io, json, sys, time
start = time.perf_counter()
import torch
import posenc_ref
from posenc_selfcheck import check, runner
imported = time.perf_counter() - start
exercise, later, baseline = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "baseline"
if baseline:  # the probes on torch's default threads
    runner.one_thread = contextlib.nullcontext
times = []
for _ in range(1 + later):
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        check(exercise, getattr(posenc_ref, exercise))
    times.append(time.perf_counter() - t)
    assert "passed" in out.getvalue(), out.getvalue()
print(json.dumps({"import": imported, "first": times[0], "later": times[1:], "threads": torch.get_num_threads()}))
"""


def exercises():
    sys.path.insert(0, str(ROOT))
    from posenc_selfcheck.runner import _index

    return list(_index())


BUSY = """
import torch
a = torch.randn(512, 512)
while True:
    a = (a @ a).tanh()
"""


def measure(exercise, later, variant):
    out = subprocess.run([sys.executable, "-c", CHILD, exercise, str(later), variant], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--later", type=int, default=5, help="calls after the first, per exercise")
    parser.add_argument("--busy", type=int, default=0, help="background processes keeping the cores busy")
    parser.add_argument("--exercises", nargs="+", default=None)
    args = parser.parse_args(argv)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
    try:
        rows = []
        print(f"{'exercise':28s} {'first call':>11s} {'later: median':>14s} {'max':>8s}   "
              f"{'baseline: first':>15s} {'later max':>10s}   first: baseline / one thread")
        for exercise in args.exercises or exercises():
            mine, base = measure(exercise, args.later, "one-thread"), measure(exercise, args.later, "baseline")
            rows.append((exercise, mine, base))
            median = statistics.median(mine["later"])
            print(f"{exercise:28s} {mine['first'] * 1e3:8.1f} ms {median * 1e3:11.1f} ms "
                  f"{max(mine['later']) * 1e3:5.1f} ms   {base['first'] * 1e3:12.1f} ms "
                  f"{max(base['later']) * 1e3:7.1f} ms   {base['first'] / mine['first']:5.1f}x", flush=True)
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    slowest = max(rows, key=lambda row: row[1]["first"])
    later = max(rows, key=lambda row: max(row[1]["later"]))
    base = max(rows, key=lambda row: row[2]["first"])
    print(f"\nslowest first call: {slowest[0]} {slowest[1]['first'] * 1e3:.0f} ms (baseline's slowest: {base[0]} "
          f"{base[2]['first'] * 1e3:.0f} ms); slowest later call: {later[0]} {max(later[1]['later']) * 1e3:.0f} ms; "
          f"import of torch + posenc_selfcheck: median {statistics.median(r['import'] for _, r, _ in rows):.2f} s; "
          f"torch threads {rows[0][1]['threads']}; busy processes {args.busy}")


if __name__ == "__main__":
    main()
