"""Gradescope: `python -m grader gradescope OUT.zip` builds the autograder; `run` grades inside it.

The zip holds `setup.sh` and `run_autograder` at its root, and what grading needs: `grader/` (with
the hidden checks and probes), `posenc_ref/`, `posenc_selfcheck/`, a pinned `requirements.txt` and
`gradescope.json` (the options below). Gradescope unpacks it into /autograder/source, runs
setup.sh once (as root) when it builds the image, then for every submission runs run_autograder,
which grades /autograder/submission and writes /autograder/results/results.json. Checks that are
not public get the visibility chosen here (default after_due_date), so their names and feedback stay
hidden until then; public checks (the learner's self-checks) are visible at once.

Inside the container, learner code runs in the same sandbox as everywhere (as root: a uid of its
own, plus a jail where Docker allows mount namespaces, Landlock where the kernel has it), and
before grading the runner makes /autograder/source, /autograder/submission and
/autograder/results private to root, so even without jail or Landlock the learner's uid cannot read
the reference or write the results. AUTOGRADER_ROOT (run_autograder) or --root (run) points
at another tree: the tests use a temporary folder.

Gradescope's default container (768 MB of memory, half a CPU, 10 minutes) has the time but not the
memory for a submission of the whole course (1.1 GB peak, measured): choose 2 GB or more in the
autograder's settings. The sandbox's address-space allowance per exercise is --memory-mb (default
512 MB), so a memory bomb meets that limit, not the container's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from .escape import clean
from .files import write_json
from .settings import VISIBILITIES

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("grader", "posenc_ref", "posenc_selfcheck")
REQUIREMENTS = ("numpy", "safetensors", "matplotlib", "pytest")
TORCH = "2.13.0"

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu base image).
# torch first (CPU build, pinned), then the rest, into a virtual environment of their own.
set -euo pipefail
cd /autograder/source
if ! command -v python3 >/dev/null || ! python3 -c 'import venv' 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi
python3 -c 'import sys; assert sys.version_info >= (3, 10), "Python 3.10 or newer is needed"'
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --no-cache-dir --upgrade pip
/autograder/venv/bin/python -m pip install --quiet --no-cache-dir "torch=={TORCH}" \\
    --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/python -m pip install --quiet --no-cache-dir -r requirements.txt
/autograder/venv/bin/python -c "import torch, safetensors, pytest; print('torch', torch.__version__)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, with no arguments. It always leaves a results.json
# (a failure of the grader itself becomes a score of 0 with a message), and exits 0.
# AUTOGRADER_ROOT: another tree than /autograder (the tests); PYTHON: another interpreter.
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$ROOT/venv/bin/python" ]; then PY="$ROOT/venv/bin/python"; else PY=python3; fi
fi
cd "$ROOT/source" || exit 1
"$PY" -m grader.gradescope run --root "$ROOT"
exit 0
"""


def _requirements():
    lines = []
    for name in REQUIREMENTS:
        try:
            lines.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            lines.append(name)
    return "# pinned to the versions the grader was tested with; torch is installed first by setup.sh\n" + \
        "\n".join(lines) + "\n"


def _source_files():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path


def build_zip(out_zip, hidden_visibility="after_due_date", wall_seconds=30.0, memory_mb=512):
    """Write the autograder zip; return the list of names in it."""
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}")
    config = {"hidden_visibility": hidden_visibility, "wall_seconds": wall_seconds, "memory_mb": memory_mb}
    entries = [("setup.sh", SETUP_SH, 0o755), ("run_autograder", RUN_AUTOGRADER, 0o755),
               ("requirements.txt", _requirements(), 0o644),
               ("gradescope.json", json.dumps(config, indent=1) + "\n", 0o644)]
    entries += [(str(p.relative_to(REPO)), p.read_bytes(), 0o644) for p in _source_files()]
    out_zip = Path(out_zip)
    out_zip.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_zip.with_name(f".{out_zip.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible bytes
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(tmp, out_zip)
    return [name for name, _, _ in entries]


def _private(*paths):
    """As root: only root may enter these folders (the learner's uid is another user)."""
    if os.geteuid() == 0:
        for path in paths:
            if path.exists():
                os.chmod(path, 0o700)


def results_payload(root):
    """Grade root/submission; Gradescope's results.json as a dict (never raises)."""
    from .grading import grade
    from .report import gradescope_json
    from .settings import Settings
    from .submission import SubmissionError

    root = Path(root)
    source, submission, results_dir = root / "source", root / "submission", root / "results"
    config = {"hidden_visibility": "after_due_date", "wall_seconds": 30.0, "memory_mb": 512}
    try:
        config.update(json.loads((source / "gradescope.json").read_text()))
    except (OSError, ValueError):
        pass
    _private(source, submission, results_dir)
    try:
        settings = Settings.from_env(limits={"wall_seconds": config["wall_seconds"], "memory_mb": config["memory_mb"]},
                                     protect=(str(submission), str(results_dir)),
                                     hidden_visibility=config["hidden_visibility"])
        result = grade(submission, settings)
    except SubmissionError as exc:
        return {"score": 0, "output": f"Nothing to grade: {clean(exc)}. Upload your notebooks (.ipynb) or .py files.",
                "visibility": "visible", "tests": []}
    except Exception as exc:  # the grader itself failed: say so, never a silent zero
        return {"score": 0, "output": f"The autograder failed ({type(exc).__name__}: {clean(exc, 300)}). "
                                      "Please tell your instructor.", "visibility": "visible", "tests": []}
    return gradescope_json(result, settings.hidden_visibility)


def run(root):
    root = Path(root)
    (root / "results").mkdir(parents=True, exist_ok=True)
    payload = results_payload(root)
    write_json(root / "results" / "results.json", payload)
    return payload


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grader.gradescope")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade ROOT/submission into ROOT/results/results.json (inside Gradescope)")
    r.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    args = parser.parse_args(argv)
    payload = run(args.root)
    print(f"score {payload['score']:g}, {len(payload['tests'])} tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
