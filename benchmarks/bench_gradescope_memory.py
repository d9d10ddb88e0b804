"""How much memory Gradescope's container needs: grade a submission the way run_autograder does, and measure.

    python benchmarks/bench_gradescope_memory.py [SUBMISSION]     # default: examples/complete (all chapters)

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

from grader.gradescope import build_zip  # noqa: E402


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


def main(argv):
    submission = Path(argv[0] if argv else ROOT / "examples" / "complete").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "autograder"
        build_zip(Path(tmp) / "autograder.zip")
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
        score = re.search(r'"score": ([\d.]+)', (root / "results" / "results.json").read_text())
        maxrss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
        print(f"submission: {submission.relative_to(ROOT) if submission.is_relative_to(ROOT) else submission}")
        print(f"score {score.group(1) if score else '?'}, wall {wall:.1f} s")
        print(f"largest single process (GNU time, max RSS): {int(maxrss.group(1)) / 1024:.0f} MB" if maxrss
              else "GNU time: no report")
        print(f"process tree peak, sampled every 20 ms: RSS summed {peaks['rss'] / 1024:.0f} MB, "
              f"PSS summed {peaks['pss'] / 1024:.0f} MB")
        print(f"cgroup peak (page cache included): {group_peak / 2**20:.0f} MB" if group_peak
              else "cgroup peak: no memory cgroup available (run as root)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
