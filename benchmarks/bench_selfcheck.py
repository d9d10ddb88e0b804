"""How long a learner waits for a self-check cell: every exercise's self-check on correct code (the
reference), the first call in a fresh kernel and the later calls.

    python benchmarks/bench_selfcheck.py              # every exercise, 5 later calls each
    python benchmarks/bench_selfcheck.py --busy 2     # the same with 2 processes keeping the cores busy
    python benchmarks/bench_selfcheck.py --later 10 --exercises apply_rope RoPEAttention
    python benchmarks/bench_selfcheck.py --baseline threads   # baseline: the probes on torch's default threads

Each exercise gets a fresh Python process that imports IPython first, as a Jupyter kernel has it (the
self-check package warms torch up when it is imported there: see posenc_selfcheck/__init__.py); it imports
torch and the self-check package (reported once, as "import"), then times the first `check(...)` call and
`--later` more calls (median and max), and counts the modules the first call had to import (torch's lazy
ones among them). The baseline, side by side in the same run, in another fresh process: `cold` (default),
the same without that warm-up (a process without IPython: what a kernel paid before); `threads`, the probes
on torch's default threads instead of one. `--busy N` starts N processes that keep the cores busy with
matrix products while everything is measured, as on a shared machine. No timing is asserted anywhere: this
prints a table.
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
exercise, later, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if variant != "cold":
    import IPython  # noqa: F401  (a kernel has it: the self-check warms up when imported there)
start = time.perf_counter()
import torch
import posenc_ref
from posenc_selfcheck import check, runner
imported = time.perf_counter() - start
if variant == "threads":  # the probes on torch's default threads
    runner.one_thread = contextlib.nullcontext
times, before = [], set(sys.modules)
for _ in range(1 + later):
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        check(exercise, getattr(posenc_ref, exercise))
    times.append(time.perf_counter() - t)
    assert "passed" in out.getvalue(), out.getvalue()
    if len(times) == 1:
        lazy = sorted(set(sys.modules) - before)
print(json.dumps({"import": imported, "first": times[0], "later": times[1:], "threads": torch.get_num_threads(),
                  "lazy": lazy}))
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
    parser.add_argument("--baseline", choices=("cold", "threads"), default="cold",
                        help="cold: no warm-up at import; threads: the probes on torch's default threads")
    args = parser.parse_args(argv)
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
    try:
        rows = []
        print(f"{'exercise':28s} {'first call':>11s} {'later: median':>14s} {'max':>8s}   "
              f"{'baseline: first':>15s} {'later max':>10s}   first: baseline / now   modules the first call imports")
        for exercise in args.exercises or exercises():
            mine, base = measure(exercise, args.later, "kernel"), measure(exercise, args.later, args.baseline)
            rows.append((exercise, mine, base))
            median = statistics.median(mine["later"])
            print(f"{exercise:28s} {mine['first'] * 1e3:8.1f} ms {median * 1e3:11.1f} ms "
                  f"{max(mine['later']) * 1e3:5.1f} ms   {base['first'] * 1e3:12.1f} ms "
                  f"{max(base['later']) * 1e3:7.1f} ms   {base['first'] / mine['first']:5.1f}x   "
                  f"{len(mine['lazy'])} (baseline {len(base['lazy'])})", flush=True)
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
          f"torch threads {rows[0][1]['threads']}; busy processes {args.busy}; baseline {args.baseline}")
    lazy = sorted({m for _, r, _ in rows for m in r["lazy"]})
    print(f"modules a first call still imported: {', '.join(lazy) or 'none'}")


if __name__ == "__main__":
    main()
