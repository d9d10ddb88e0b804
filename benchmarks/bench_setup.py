"""How long a fresh set-up takes: `bash scripts/setup.sh` in a fresh copy of the repository, timed.

    python benchmarks/bench_setup.py [EXTRA...]    # default extras: test notebook (what setup.sh installs)

Copies the committed tree (`git archive HEAD`, what a fresh clone holds) into a temporary folder, runs
`bash scripts/setup.sh` there with no virtualenv or conda env active (so it creates its own `.venv`) and
PYTHON as given in the environment (default: python3), and writes what it measured, with what the time depends
on, to benchmarks/setup_time.json (the README quotes it; tests/test_docs_numbers.py checks that it does):

- seconds: set-up's wall clock, from start to "done";
- torch: where torch came from (setup.sh's step 2 line: a local wheel, PyTorch's CPU index, PyPI);
- installer: what installed (setup.sh's line "installing with uv ...", else pip) and uv_cache_mb, the size of uv's
  cache before the run (a warm one skips the downloads, as pip's does);
- python: the interpreter that created the environment;
- pip_cache_mb: the size of pip's cache before the run; find_links and index: where pip was configured to look
  (a local wheel folder or mirror is "near"; PyPI over the network is not);
- cores and load_average: the machine, and how busy it was at the start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "benchmarks" / "setup_time.json"


def _pip(*args):
    run = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else ""


def _size_mb(folder):
    total = 0
    for base, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                pass
    return round(total / 2**20)


def _uv_cache():
    """The folder uv caches in, unless told otherwise: UV_CACHE_DIR, else XDG_CACHE_HOME/uv, else ~/.cache/uv."""
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.environ.get("UV_CACHE_DIR") or os.path.join(xdg, "uv")


def measure(extras):
    base = os.environ.get("PYTHON", "python3")
    python = subprocess.run([base, "-V"], capture_output=True, text=True).stdout.strip()
    cache = _pip("cache", "dir")
    facts = {
        "python": python, "extras": list(extras) or ["test", "notebook"],
        "pip_cache_mb": _size_mb(cache) if cache else 0, "uv_cache_mb": _size_mb(_uv_cache()),
        "find_links": os.environ.get("PIP_FIND_LINKS") or _pip("config", "get", "global.find-links") or "",
        "index": _pip("config", "get", "global.index-url") or "https://pypi.org/simple",
        "extra_index": _pip("config", "get", "global.extra-index-url") or "",
        "cores": len(os.sched_getaffinity(0)), "load_average": round(os.getloadavg()[0], 1),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(repo)], input=archive.stdout, check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
        start = time.perf_counter()
        run = subprocess.run(["bash", "scripts/setup.sh", *extras], cwd=repo, env=env, capture_output=True,
                             text=True)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            sys.stderr.write(run.stdout[-3000:] + run.stderr[-3000:])
            raise SystemExit(f"setup.sh failed (exit {run.returncode})")
    torch = next((line.split("]", 1)[1].strip() for line in run.stdout.splitlines() if "[2/4]" in line), "")
    uv = next((line.split("installing with ", 1)[1].split(" (")[0] for line in run.stdout.splitlines()
               if "installing with " in line), "")
    fell_back = "pip installs" in run.stdout  # uv began, then left an install to pip
    installer = f"{uv}, then pip" if uv and fell_back else uv or "pip"
    return {"seconds": round(seconds), "torch": torch, "installer": installer, **facts}


def main(argv):
    result = measure(argv)
    STORED.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
