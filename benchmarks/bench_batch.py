"""Batch grading at class scale: N generated submissions graded with --jobs 1 and --jobs 2, side by side.

    python benchmarks/bench_batch.py [--n 100] [--jobs 1 2] [--keep DIR]

Submissions are generated from what the repository has, with a fixed seed: for every chapter that has
a solution notebook, a submission holds the complete solution (50%), the solution with one of the
known mistakes from tests/submissions/ on top (30%), or the unfinished student notebook (20%); half
are notebooks, half .py files. Each --jobs value grades the same folder into a fresh output folder,
one run after the other, on an otherwise idle machine (the load average is printed beside).

Reported: wall time, throughput and its ratio to --jobs 1; the grading time of one submission inside
a worker (median, and the first one, which pays for imports and the reference answers); the
per-submission overhead of the batch machinery (wall time x jobs minus the time spent grading,
divided by the number of submissions: worker start-up, scheduling, hashing, files, summary);
peak memory (RSS) of each worker process, of the grading process forked from its zygote, and of the
zygote; and whether both runs gave every submission the same grade.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _code_cells(notebook):
    nb = json.loads(Path(notebook).read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
            and not {"demo", "selfcheck"} & set(c["metadata"].get("tags", []))]


def generate(folder, n, seed=0):
    rng = random.Random(seed)
    chapters = []
    for solution in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        student = ROOT / "notebooks" / solution.name
        mistakes = sorted((ROOT / "tests" / "submissions").glob(f"ch{solution.name[:2]}_*.py"))
        chapters.append((solution.stem, _code_cells(solution), _code_cells(student), [m.read_text() for m in mistakes]))
    kinds = []
    for i in range(n):
        cells = []
        for _, solution, student, mistakes in chapters:
            roll = rng.random()
            if roll < 0.5 or (roll < 0.8 and not mistakes):
                cells += solution
            elif roll < 0.8:
                cells += solution + [rng.choice(mistakes)]
            else:
                cells += student
        name = f"student{i:03d}"
        if i % 2:
            (folder / f"{name}.py").write_text("\n\n".join(cells) + "\n")
        else:
            nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                  "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                             "source": c} for c in cells]}
            (folder / f"{name}.ipynb").write_text(json.dumps(nb))
        kinds.append(name)
    return [c[0] for c in chapters], kinds  # chapter names


def run(folder, out, jobs):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", str(jobs),
                    "--quiet"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    stats = json.loads((out / "run.json").read_text())
    grades = {}
    for path in sorted((out / "results").glob("*.json")):
        rec = json.loads(path.read_text())
        grades[rec["student"]] = [(c["key"], c["status"], c["score"]) for c in rec["checks"]]
    times = stats["grading_seconds"]
    return {"jobs": jobs, "wall_s": round(wall, 2), "submissions": stats["submissions"], "errors": stats["errors"],
            "throughput_per_min": round(60 * stats["submissions"] / wall, 2),
            "grade_median_s": round(statistics.median(times), 3), "grade_first_s": round(max(times), 3),
            "overhead_per_submission_s": round((wall * jobs - sum(times)) / len(times), 3),
            "workers": [{"worker_rss_mb": round(w["maxrss_mb"]), "grading_rss_mb": round(w["grading_maxrss_mb"] or 0),
                         "zygote_rss_mb": round(w["zygote_maxrss_mb"] or 0)} for w in stats["workers"]]}, grades


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--keep", type=Path, default=None, help="keep submissions and outputs here")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-batch-"))
    folder = base / "submissions"
    folder.mkdir(parents=True, exist_ok=True)
    chapters, _ = generate(folder, args.n)
    print(f"{args.n} submissions over {len(chapters)} chapter(s); {os.cpu_count()} CPUs; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    rows, grades = [], []
    for jobs in args.jobs:
        row, g = run(folder, base / f"out-jobs{jobs}", jobs)
        row["load_average_after"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        grades.append(g)
    first = rows[0]
    for row in rows:
        row["throughput_ratio"] = round(row["throughput_per_min"] / first["throughput_per_min"], 2)
    same = all(g == grades[0] for g in grades)
    print(f"{'jobs':>4} {'wall s':>8} {'subs/min':>9} {'ratio':>6} {'grade s (median)':>17} {'first':>6} "
          f"{'overhead s/sub':>15}  peak RSS per worker (worker / its grading process / its zygote)")
    for row in rows:
        rss = ", ".join(f"{w['worker_rss_mb']}/{w['grading_rss_mb']}/{w['zygote_rss_mb']} MB" for w in row["workers"])
        print(f"{row['jobs']:>4} {row['wall_s']:>8} {row['throughput_per_min']:>9} {row['throughput_ratio']:>6} "
              f"{row['grade_median_s']:>17} {row['grade_first_s']:>6} {row['overhead_per_submission_s']:>15}  {rss}")
    print(f"same grade for every submission in every run: {same}")
    results = {"n": args.n, "chapters": chapters, "cpus": os.cpu_count(), "runs": rows, "deterministic": same}
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_batch.json").write_text(json.dumps(results, indent=1) + "\n")
    if not args.keep:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
