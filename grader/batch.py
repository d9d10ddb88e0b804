"""python -m grader batch FOLDER --jobs N --out DIR: a class's submissions to a gradebook.

FOLDER holds one entry per student: a notebook, a .py file, or a folder of them (its name, without
the suffix, is the student's id). Each submission is graded by `grader.cli.grade` (the same pytest
run, the same sandbox, one fork server per submission) in one of N worker processes.

    DIR/results/<id>.json     per student: every check's status, score and feedback, totals, notes
    DIR/feedback/<id>.txt     the report the student reads
    DIR/errors/<id>.json      submissions the grader could not grade this time (retried next run)
    DIR/manifest.json         index of the above, with the grader's fingerprint
    DIR/gradebook.csv         a row per student, a column per exercise, the total
    DIR/summary.md, .json     class statistics: scores, failure rate per check, common mistakes
    DIR/plots/*.png           score histogram, failure rate per check
    DIR/run.json              this run: times, workers, peak memory

Resumable: every file is written atomically (temporary file, then rename), and a result is reused
when its submission's SHA-256 and the grader's fingerprint (a hash of the grader, the checks, the
reference and the probes) are unchanged. Kill a run at any moment and start it again: what was
graded is kept, what was not is graded, nothing twice. Deterministic: a grade depends only on the
submission and the grader (seeded probes, one thread, PYTHONHASHSEED=0 in the sandbox).

Submissions are also scanned (never executed) for code that reaches for the grader's machinery
(os._exit, fork, signals, /proc, sys.modules, ctypes, pickling hooks, the reference's name...).
Such flags go to the gradebook for a person to look at; they do not change a grade.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUFFIXES = (".ipynb", ".py")
FINGERPRINT_GLOBS = ("grader/**/*.py", "posenc_ref/**/*.py", "posenc_selfcheck/**/*.py",
                     "posenc_selfcheck/data/*")
FLAGS = {
    "exits the process": r"\bos\._exit\b|\bsys\.exit\b",
    "forks or signals": r"\bos\.fork\b|\bos\.kill\b|\bsetsid\b|\bsignal\.signal\b",
    "runs programs": r"\bsubprocess\b|\bos\.system\b|\bos\.exec|\bos\.spawn|\bpty\b",
    "inspects the process": r"/proc/|\bsys\.modules\b|\bmeta_path\b|_getframe|\bgc\.get_|\binspect\.stack\b",
    "native code": r"\bctypes\b|\bcffi\b",
    "pickling hooks": r"__reduce(_ex)?__|\bpickle\b|\bmarshal\b|\bdill\b",
    "names the grader": r"\bposenc_ref\b|\bgrader\b|\bhidden_probes\b|results\.json|/autograder",
    "network": r"\bsocket\b|\burllib\b|\brequests\b|\bhttp\.client\b",
}


# ---- small helpers ---------------------------------------------------------------------------------
def write_atomic(path, data):
    """Write bytes or text to `path` so that a reader (or a later run) sees all of it or nothing."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path, payload):
    write_atomic(path, json.dumps(payload, indent=1, sort_keys=True) + "\n")


def read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _files(path):
    path = Path(path)
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file()
                  and not any(part.startswith((".", "__pycache__")) for part in p.relative_to(path).parts))


def submission_hash(path):
    digest = hashlib.sha256()
    root = Path(path)
    for f in _files(root):
        digest.update(str(f.relative_to(root) if root.is_dir() else f.name).encode() + b"\0")
        with open(f, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def grader_fingerprint():
    """Changes whenever anything that decides a grade changes."""
    digest = hashlib.sha256()
    for pattern in FINGERPRINT_GLOBS:
        for f in sorted(REPO.glob(pattern)):
            if "__pycache__" not in f.parts and f.is_file():
                digest.update(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def discover(folder):
    """{student id: path}, one per notebook, .py file or folder directly inside `folder`."""
    entries = sorted(p for p in Path(folder).iterdir()
                     if not p.name.startswith((".", "_")) and (p.is_dir() or p.suffix in SUFFIXES))
    stems = Counter(p.stem if p.is_file() else p.name for p in entries)
    out = {}
    for p in entries:
        name = p.stem if p.is_file() else p.name
        name = p.name if stems[name] > 1 else name  # alice.py and alice.ipynb: keep both, told apart
        out[re.sub(r"[^A-Za-z0-9._-]", "_", name)] = p
    return out


def flags(path):
    """Patterns in the submission's source that a person should look at (never executed)."""
    from .submission import MAX_FILE_BYTES

    found = set()
    for f in _files(path):
        if f.suffix not in SUFFIXES or f.stat().st_size > MAX_FILE_BYTES:
            continue
        text = f.read_text(errors="replace")
        if f.suffix == ".ipynb":
            try:
                cells = json.loads(text).get("cells", [])
                text = "\n".join("".join(c.get("source", "")) for c in cells
                                 if isinstance(c, dict) and c.get("cell_type") == "code")
            except (ValueError, AttributeError, TypeError):
                continue
        found |= {name for name, pattern in FLAGS.items() if re.search(pattern, text)}
    return sorted(found)


# ---- the worker ------------------------------------------------------------------------------------
def record(student, path, results, notes, seconds, job):
    exercises = {}
    for r in results:
        ex = exercises.setdefault(r.check.exercise, {"score": 0.0, "max": 0.0})
        ex["score"] += r.score
        ex["max"] += r.max_score
    return {
        "student": student, "submission": str(path), "sha256": job["sha256"], "fingerprint": job["fingerprint"],
        "run_id": job["run_id"], "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": round(seconds, 2),
        "total": sum(r.score for r in results), "max": sum(r.max_score for r in results),
        "exercises": exercises, "notes": notes, "flags": flags(path),
        "checks": [{"id": r.check.key, "exercise": r.check.exercise, "name": r.check.name, "status": r.status,
                    "score": r.score, "max_score": r.max_score, "public": r.check.public,
                    "feedback": r.feedback, "mistake": getattr(r, "diagnosis", "")} for r in results],
    }


def grade_one(job, wall_seconds):
    """Grade one submission and write its result and feedback (atomically). Returns the reply."""
    from .cli import grade
    from .submission import SubmissionError

    out_dir, student, path = Path(job["out"]), job["student"], Path(job["path"])
    start = time.perf_counter()
    report = io.StringIO()
    try:
        results, notes = grade(str(path), wall_seconds=wall_seconds, out=report)
        text = report.getvalue()
    except SubmissionError as exc:  # nothing gradable was submitted: a graded zero, with the reason
        results, notes, text = [], [str(exc)], f"Grading {path}\n\n{exc}\n\nTotal: 0\n"
    seconds = time.perf_counter() - start
    rec = record(student, path, results, notes, seconds, job)
    write_atomic(out_dir / "feedback" / f"{student}.txt", f"Feedback for {student}\n\n{text}\n")
    write_json(out_dir / "results" / f"{student}.json", rec)  # last: its presence means "graded"
    return {"student": student, "ok": True, "total": rec["total"], "max": rec["max"], "seconds": seconds}


def worker_main(wall_seconds):
    """Read jobs (JSON lines) on stdin, answer on the original stdout; everything else goes to stderr."""
    import resource

    from .sandbox import confine

    confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)  # the batch died: so does this worker
    import torch

    torch.set_num_threads(1)  # one core per worker: --jobs N uses N cores, without oversubscription
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    for line in sys.stdin:
        job = json.loads(line)
        if job.get("cmd") == "quit":
            break
        try:
            reply = grade_one(job, wall_seconds)
        except Exception as exc:  # the grader failed: report it, keep serving
            reply = {"student": job["student"], "ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
        channel.write(json.dumps(reply) + "\n")
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    channel.write(json.dumps({"stats": {"pid": os.getpid(), "maxrss_mb": usage[0] / 1024,
                                        "children_maxrss_mb": usage[1] / 1024}}) + "\n")


# ---- the parent ------------------------------------------------------------------------------------
class Worker:
    def __init__(self, env, wall_seconds):
        cmd = [sys.executable, "-m", "grader.batch", "--worker"]
        if wall_seconds:
            cmd += ["--wall-seconds", str(wall_seconds)]
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.job, self.deadline, self.graded = None, None, 0

    def send(self, job, timeout):
        self.job, self.deadline = job, time.monotonic() + timeout
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def kill(self):
        from .sandbox import procs

        procs.kill_all(lambda: procs.descendants(self.proc.pid))
        self.proc.kill()
        self.proc.wait()

    def finish(self):
        """Ask it to stop; its peak memory, or None."""
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], 30)
            line = self.proc.stdout.readline() if ready else ""
            self.proc.wait(timeout=30)
            return json.loads(line)["stats"] if line else None
        except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
            self.kill()
            return None


class Progress:
    """One line on stderr: a bar, counts, elapsed time and an estimate of what is left."""

    def __init__(self, total, stream=sys.stderr, enabled=True):
        self.total, self.stream, self.enabled = total, stream, enabled and total > 0
        self.done = self.errors = 0
        self.start = time.monotonic()
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.last = 0.0

    def update(self, ok=True, force=False):
        self.done += 1
        self.errors += not ok
        if not self.enabled:
            return
        now = time.monotonic()
        if not self.tty and not force and self.done < self.total and now - self.last < 10:
            return
        self.last = now
        elapsed = now - self.start
        left = elapsed / self.done * (self.total - self.done) if self.done else 0
        width = 30
        filled = int(width * self.done / self.total)
        bar = "=" * filled + (">" if filled < width else "") + " " * (width - filled - 1)
        line = (f"grading [{bar}] {self.done}/{self.total}  errors {self.errors}  "
                f"{_clock(elapsed)} elapsed, ~{_clock(left)} left")
        self.stream.write(("\r" + line + ("\n" if self.done == self.total else "")) if self.tty else line + "\n")
        self.stream.flush()


def _clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stop like Ctrl-C does."""


def _interrupt(signum, frame):
    raise Interrupted()


def run_batch(folder, out, jobs=1, wall_seconds=None, timeout=1800.0, memory_mb=None, progress=True,
              stream=sys.stderr):
    """Grade every submission in `folder` not yet graded into `out`; write the gradebook and summary."""
    folder, out = Path(folder).resolve(), Path(out).resolve()
    students = discover(folder)
    for sub in ("results", "feedback", "errors", "plots"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for tmp in out.rglob(".*.tmp"):  # left by a run that was killed mid-write
        tmp.unlink(missing_ok=True)
    fingerprint, run_id = grader_fingerprint(), uuid.uuid4().hex[:12]
    todo, hashes = [], {}
    for student, path in students.items():
        hashes[student] = submission_hash(path)
        old = read_json(out / "results" / f"{student}.json")
        if not (old and old.get("sha256") == hashes[student] and old.get("fingerprint") == fingerprint):
            todo.append(student)
    env = dict(os.environ)
    env["POSENC_SANDBOX_PROTECT"] = os.pathsep.join([str(folder), str(out)])
    env["POSENC_SANDBOX_SHARED"] = "1"  # one fork server per worker, reused: it never runs learner code
    env["OMP_NUM_THREADS"] = "1"
    if memory_mb:
        env["POSENC_SANDBOX_MEMORY_MB"] = str(int(memory_mb))
    bar = Progress(len(todo), stream, progress)
    start = time.monotonic()
    workers, stats, replies = [], [], []
    queue = list(todo)
    previous = {s: signal.signal(s, _interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        workers = [Worker(env, wall_seconds) for _ in range(max(1, min(jobs, len(todo))))] if todo else []
        while queue or any(w.job for w in workers):
            for w in workers:
                if w.job is None and queue:
                    student = queue.pop(0)
                    (out / "errors" / f"{student}.json").unlink(missing_ok=True)
                    w.send({"student": student, "path": str(students[student]), "out": str(out),
                            "sha256": hashes[student], "fingerprint": fingerprint, "run_id": run_id}, timeout)
            busy = [w for w in workers if w.job]
            wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready, _, _ = select.select([w.proc.stdout for w in busy], [], [], wait)
            for w in busy:
                broken = True  # the worker died or overran: kill it (and its sandbox), start another
                if w.proc.stdout in ready:
                    line = w.proc.stdout.readline()
                    broken = not line
                    reply = json.loads(line) if line else {"student": w.job["student"], "ok": False,
                                                           "error": "the grading worker died"}
                elif time.monotonic() >= w.deadline:
                    reply = {"student": w.job["student"], "ok": False,
                             "error": f"grading did not finish within {timeout:g} s"}
                else:
                    continue
                if not reply["ok"]:
                    write_json(out / "errors" / f"{reply['student']}.json", {**reply, "run_id": run_id})
                if broken:
                    w.kill()
                    workers[workers.index(w)] = w = Worker(env, wall_seconds)
                w.job = None
                w.graded += reply["ok"]
                replies.append(reply)
                bar.update(reply["ok"])
        stats = [s for s in (w.finish() for w in workers) if s]
    except KeyboardInterrupt:
        for w in workers:
            w.kill()
        stream.write("\ninterrupted: graded submissions are kept; run the same command again to finish\n")
        raise
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    seconds = time.monotonic() - start
    summary = write_outputs(out, students, hashes, fingerprint)
    write_json(out / "run.json", {
        "run_id": run_id, "folder": str(folder), "jobs": jobs, "submissions": len(students), "graded": len(todo),
        "errors": sum(not r["ok"] for r in replies), "seconds": round(seconds, 2),
        "grading_seconds": [round(r.get("seconds", 0), 3) for r in replies if r["ok"]], "workers": stats,
        "fingerprint": fingerprint})
    return summary


# ---- outputs ---------------------------------------------------------------------------------------
def write_outputs(out, students, hashes, fingerprint):
    from .checks import all_checks, exercises

    records = {}
    for student in students:
        rec = read_json(out / "results" / f"{student}.json")
        if rec and rec.get("sha256") == hashes[student] and rec.get("fingerprint") == fingerprint:
            records[student] = rec
    errors = {s: read_json(out / "errors" / f"{s}.json") or {} for s in students if s not in records}
    names = exercises()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *names, "total", "max", "status", "flags"])
    for student in students:
        rec = records.get(student)
        if rec is None:
            writer.writerow([student, *[""] * len(names), "", "", "error", ""])
            continue
        writer.writerow([student, *[f"{rec['exercises'].get(n, {}).get('score', 0):g}" for n in names],
                         f"{rec['total']:g}", f"{rec['max']:g}", "graded", "; ".join(rec["flags"])])
    write_atomic(out / "gradebook.csv", buffer.getvalue())
    write_json(out / "manifest.json", {
        "fingerprint": fingerprint,
        "students": {s: {"sha256": hashes[s], "status": "graded" if s in records else "error",
                         "total": records[s]["total"] if s in records else None,
                         "run_id": records[s]["run_id"] if s in records else None,
                         "result": f"results/{s}.json" if s in records else f"errors/{s}.json"}
                     for s in students}})
    summary = class_summary(records, errors, all_checks(), names)
    write_json(out / "summary.json", summary)
    write_atomic(out / "summary.md", summary_markdown(summary))
    plot(out / "plots", summary)
    return summary


def class_summary(records, errors, checks, order=()):
    totals = [r["total"] for r in records.values()]
    top = max((r["max"] for r in records.values()), default=0)
    per_check = {c.key: {"exercise": c.exercise, "name": c.name, "public": c.public, "passed": 0, "failed": 0,
                        "not implemented": 0, "skipped": 0, "mistakes": Counter()} for c in checks}
    for rec in records.values():
        for c in rec["checks"]:
            row = per_check.get(c["id"])
            if row is None:
                continue
            row[c["status"]] = row.get(c["status"], 0) + 1
            if c["status"] == "failed":
                row["mistakes"][c["mistake"] or c["feedback"].split(". Hint")[0][:160]] += 1
    rows = []
    for check_id, row in per_check.items():
        attempted = row["passed"] + row["failed"]
        rows.append({"id": check_id, "exercise": row["exercise"], "name": row["name"], "public": row["public"],
                     "attempted": attempted, "failed": row["failed"], "not_implemented": row["not implemented"],
                     "failure_rate": round(row["failed"] / attempted, 4) if attempted else None,
                     "common_mistakes": row["mistakes"].most_common(3)})
    exercises = {}
    for rec in records.values():
        for name, ex in rec["exercises"].items():
            e = exercises.setdefault(name, {"max": ex["max"], "scores": []})
            e["max"] = max(e["max"], ex["max"])
            e["scores"].append(ex["score"])
    return {
        "submissions": len(records) + len(errors), "graded": len(records), "errors": sorted(errors),
        "max": top, "mean": round(statistics.fmean(totals), 3) if totals else None,
        "median": statistics.median(totals) if totals else None, "totals": sorted(totals),
        "exercises": {n: {"max": exercises[n]["max"], "mean": round(statistics.fmean(exercises[n]["scores"]), 3),
                          "full_marks": sum(s == exercises[n]["max"] > 0 for s in exercises[n]["scores"]),
                          "zero": sum(s == 0 for s in exercises[n]["scores"])}
                      for n in [*order, *sorted(set(exercises) - set(order))] if n in exercises},
        "checks": rows,
        "flagged": {s: r["flags"] for s, r in sorted(records.items()) if r["flags"]},
    }


def summary_markdown(s):
    lines = ["# Class summary", "",
             f"{s['graded']} of {s['submissions']} submissions graded"
             + (f"; not graded (see errors/): {', '.join(s['errors'])}" if s["errors"] else "") + ".", ""]
    if s["graded"]:
        lines += [f"Total: mean {s['mean']:g}, median {s['median']:g}, out of {s['max']:g}.", "",
                  "![score histogram](plots/score_histogram.png)", "",
                  "| exercise | mean | max | full marks | zero |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {n} | {e['mean']:g} | {e['max']:g} | {e['full_marks']} | {e['zero']} |"
                  for n, e in s["exercises"].items()]
        hard = sorted((r for r in s["checks"] if r["failure_rate"]), key=lambda r: -r["failure_rate"])[:15]
        lines += ["", "## What the class struggles with", "",
                  "Failure rate among submissions that implemented the exercise; the most common reason.", "",
                  "![failure rate per check](plots/check_failure_rates.png)", "",
                  "| check | failed | most common reason |", "| --- | --- | --- |"]
        for r in hard:
            reason = r["common_mistakes"][0][0].replace("|", "\\|") if r["common_mistakes"] else ""
            lines.append(f"| {r['exercise']}: {r['name']} | {r['failed']}/{r['attempted']} "
                         f"({100 * r['failure_rate']:.0f}%) | {reason} |")
    if s["flagged"]:
        lines += ["", "## Flagged for a look", "",
                  "Code that reaches for the process or the grader (found by reading, not running, it):", ""]
        lines += [f"- {student}: {', '.join(f)}" for student, f in s["flagged"].items()]
    return "\n".join(lines) + "\n"


def plot(folder, s):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.hist(s["totals"], bins=min(30, max(5, len(set(s["totals"])))), range=(0, max(s["max"], 1)),
            color="#4C72B0", edgecolor="white")
    ax.set_xlabel(f"total score (out of {s['max']:g})")
    ax.set_ylabel("submissions")
    ax.set_title(f"Scores of {s['graded']} submissions")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_atomic(folder / "score_histogram.png", buffer.getvalue())

    rows = sorted((r for r in s["checks"] if r["attempted"]), key=lambda r: -r["failure_rate"])[:30][::-1]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.5))
    ax.barh([f"{r['exercise']}: {r['name']}"[:70] for r in rows], [100 * r["failure_rate"] for r in rows],
            color="#C44E52")
    for y, r in enumerate(rows):
        ax.text(100 * r["failure_rate"] + 1, y, f"{r['failed']}/{r['attempted']}", va="center", fontsize=7)
    ax.set_xlim(0, 110)
    ax.set_xlabel("failed, % of submissions that implemented the exercise")
    ax.set_title("Failure rate per check (30 hardest)")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_atomic(folder / "check_failure_rates.png", buffer.getvalue())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader.batch")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--wall-seconds", type=float, default=None)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.wall_seconds)
        return 0
    parser.error("use `python -m grader batch FOLDER --out DIR`")


if __name__ == "__main__":
    sys.exit(main())
