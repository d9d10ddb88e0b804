"""How much memory Gradescope's container needs: grade a submission the way run_autograder does, and measure.

    python benchmarks/bench_gradescope_memory.py [SUBMISSION]     # default: examples/complete (all chapters)
    python benchmarks/bench_gradescope_memory.py --assignment all # one bundle per assignment, a table with the
                                                                   # container memory to choose for each

Builds the autograder zip, unpacks it into a temporary /autograder tree, copies the submission in and runs
`run_autograder` (with this interpreter) under GNU time, in a memory cgroup of its own where the machine
allows one (run as root). Reports
  - the largest single process (GNU time's maximum resident set size),
  - the peak of the whole process tree: RSS summed and PSS summed (shared pages split between the
    processes that map them), sampled every 20 ms from /proc,
  - the cgroup's peak (what a container's limit counts: every process's memory, page cache included).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.assignment import load_course  # noqa: E402
from grader.gradescope import build_zip  # noqa: E402
from grader.settings import GRADESCOPE_MEMORY_MB  # noqa: E402

MARGIN = 1.5  # the recommended container: the measured peak times this, rounded up to 256 MB ...
ROOM = GRADESCOPE_MEMORY_MB  # ... and at least the peak plus what one exercise may add (a memory bomb then meets
#                              the sandbox's limit before the container's)


def tree(pid):
    """pid and all its descendants (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def rollup(pid):
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    field = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+):\s+(\d+) kB", text, re.M)}
    return field.get("Rss", 0), field.get("Pss", 0)


def sample(pid, peaks, done):
    while not done.is_set():
        rss = pss = 0
        for p in tree(pid):
            r, s = rollup(p)
            rss, pss = rss + r, pss + s
        peaks["rss"], peaks["pss"] = max(peaks["rss"], rss), max(peaks["pss"], pss)
        time.sleep(0.02)


def cgroup():
    """A fresh memory cgroup (v2 or v1) to run in, or None."""
    for base, peak in (("/sys/fs/cgroup", "memory.peak"), ("/sys/fs/cgroup/memory", "memory.max_usage_in_bytes")):
        group = Path(base) / f"posenc_bench_{os.getpid()}"
        try:
            group.mkdir()
        except OSError:
            continue
        if (group / peak).exists():
            return group, peak
        group.rmdir()
    return None, None


def measure(submission, assignment=None):
    """Grade `submission` through run_autograder (a bundle for `assignment`, or the whole course); its peaks."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "autograder"
        build_zip(Path(tmp) / "autograder.zip", assignment=assignment)
        with zipfile.ZipFile(Path(tmp) / "autograder.zip") as zf:
            for info in zf.infolist():
                zf.extract(info, root / "source")
                os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
        (root / "results").mkdir()
        if submission.is_dir():
            shutil.copytree(submission, root / "submission")
        else:
            (root / "submission").mkdir()
            shutil.copy(submission, root / "submission")
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable}
        env.pop("PYTHONPATH", None)
        group, peak_file = cgroup()
        # the child moves itself into the cgroup before it starts run_autograder
        enter = f'echo $$ > {group}/cgroup.procs && ' if group else ""
        cmd = ["bash", "-c", f'{enter}exec /usr/bin/time -v bash {root}/source/run_autograder']
        peaks, done = {"rss": 0, "pss": 0}, threading.Event()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sampler = threading.Thread(target=sample, args=(proc.pid, peaks, done))
        sampler.start()
        out, err = proc.communicate()
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        group_peak = int((group / peak_file).read_text()) if group else None
        if group:
            group.rmdir()
        results = (root / "results" / "results.json").read_text()
        score = re.search(r'"score": ([\d.]+)', results)
        maxrss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
        return {"score": score.group(1) if score else "?", "wall": wall, "tests": results.count('"number"'),
                "maxrss_mb": int(maxrss.group(1)) / 1024 if maxrss else None, "rss_mb": peaks["rss"] / 1024,
                "pss_mb": peaks["pss"] / 1024, "cgroup_mb": group_peak / 2**20 if group_peak else None}


def recommended(m):
    """The container to choose, in 256 MB steps: the peak (the larger of the tree's PSS and the cgroup's peak)
    times MARGIN, and at least the peak plus ROOM."""
    peak = max(m["pss_mb"], m["cgroup_mb"] or 0)
    return int(-(-max(peak * MARGIN, peak + ROOM) // 256) * 256)


def main(argv):
    names = []
    if "--assignment" in argv:
        i = argv.index("--assignment")
        names, argv = argv[i + 1:], argv[:i]
    submission = Path(argv[0] if argv else ROOT / "examples" / "complete").resolve()
    print(f"submission: {submission.relative_to(ROOT) if submission.is_relative_to(ROOT) else submission}")
    if names:
        course = load_course()
        chosen = list(course) if names == ["all"] else names
        print("| assignment | tests | score | wall | largest process | tree RSS | tree PSS | cgroup peak | container |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name in chosen:
            m = measure(submission, course[name])
            cgroup_text = f"{m['cgroup_mb']:.0f} MB" if m["cgroup_mb"] else "-"
            print(f"| {name} | {m['tests']} | {m['score']} | {m['wall']:.1f} s | {m['maxrss_mb'] or 0:.0f} MB | "
                  f"{m['rss_mb']:.0f} MB | {m['pss_mb']:.0f} MB | {cgroup_text} | {recommended(m)} MB |", flush=True)
        return 0
    m = measure(submission)
    print(f"score {m['score']}, wall {m['wall']:.1f} s")
    print(f"largest single process (GNU time, max RSS): {m['maxrss_mb']:.0f} MB" if m["maxrss_mb"]
          else "GNU time: no report")
    print(f"process tree peak, sampled every 20 ms: RSS summed {m['rss_mb']:.0f} MB, PSS summed {m['pss_mb']:.0f} MB")
    print(f"cgroup peak (page cache included): {m['cgroup_mb']:.0f} MB" if m["cgroup_mb"]
          else "cgroup peak: no memory cgroup available (run as root)")
    print(f"container to choose (peak x {MARGIN}, at least peak + {ROOM} MB, in 256 MB steps): {recommended(m)} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
