"""Gradescope: `python -m grader gradescope OUT.zip` builds the autograder; `run` grades inside it.

The zip holds `setup.sh` and `run_autograder` at its root, and what grading needs: `grader/`, `posenc_ref/`,
`posenc_selfcheck/`, each chapter's declaration, hand-written mistakes and hidden probes (`course/NN_name/`
without its source and catalog), a pinned `requirements.txt` and
`gradescope.json` (the options below). Gradescope unpacks it into /autograder/source, runs
setup.sh once (as root) when it builds the image, then for every submission runs run_autograder,
which grades /autograder/submission and writes /autograder/results/results.json. Checks that are
not public get the visibility chosen here (default after_due_date), so their names and feedback stay
hidden until then; public checks (the learner's self-checks) are visible at once. results.json's
`execution_time` is the start-up plus the visible work only (never a hidden child's time, which would tell
its inputs).

Inside the container, learner code runs in the same sandbox as everywhere (as root: a uid of its
own, plus a jail where Docker allows mount namespaces, Landlock where the kernel has it), and
before grading the runner makes /autograder/source, /autograder/submission and
/autograder/results private to root, so even without jail or Landlock the learner's uid cannot read
the reference or write the results. AUTOGRADER_ROOT (run_autograder) or --root (run) points
at another tree: the tests use a temporary folder.

One bundle per assignment (`--assignment NAME`, grader/assignment.py): gradescope.json carries the
assignment's checks with their points and visibility, so students see only its tests. Without it, the
bundle grades the whole course. The container memory to choose per assignment is
grader.settings.GRADESCOPE_CONTAINER_MB (measured with benchmarks/bench_gradescope_memory.py, with margin;
docs/instructor.md has the table). The sandbox's allowance per exercise is --memory-mb (default
grader.settings.GRADESCOPE_MEMORY_MB), so a memory bomb meets that limit, not the container's. When
grading cannot start (a package missing, no memory), results.json says which step failed and why.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from . import course
from .escape import clean
from .files import write_atomic, write_json
from .records import messages
from .settings import (
    DEFAULT_SECRET,
    GRADESCOPE_CONTAINER_MB,
    GRADESCOPE_LANES,
    GRADESCOPE_MEMORY_MB,
    GRADESCOPE_WALL_SECONDS,
    REPORT,
    VISIBILITIES,
    WAITS,
    Settings,
)
from .unseen import load_secret

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("grader", "posenc_ref", "posenc_selfcheck")
COURSE_PARTS = ("exercises", "mistakes", "hidden_probes")  # what the grader reads of a chapter's folder
REQUIREMENTS = ("numpy", "safetensors", "matplotlib", "pytest")
TORCH = "2.13.0"
# Gradescope's base images: Ubuntu 22.04 has Python 3.10, 24.04 has 3.12. Each requirement is pinned to the
# release the grader was tested with, for the Pythons that release supports; where that release needs a
# newer Python than OLDEST_PYTHON, the one below is pinned for the older Pythons (with a marker).
OLDEST_PYTHON = (3, 10)
FOR_OLDER_PYTHON = {"numpy": "2.2.6", "matplotlib": "3.10.9"}

SETUP_SH = f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu 22.04: Python 3.10;
# 24.04: Python 3.12). torch first (CPU build, pinned), then the pinned rest, into a virtual environment
# of their own. AUTOGRADER_ROOT: another tree than /autograder (the tests).
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
cd "$ROOT/source"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1
if ! command -v python3 >/dev/null; then
    echo "setup: installing python3"
    apt-get update -qq && apt-get install -y -qq python3 >/dev/null
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {{
    echo "setup: Python 3.10 or newer is needed"; exit 1; }}
# Ubuntu ships ensurepip (what `python3 -m venv` needs) in python3.X-venv; `import venv` succeeds without it
if ! python3 -c 'import ensurepip' 2>/dev/null; then
    V="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    echo "setup: installing python$V-venv (ensurepip is missing)"
    apt-get update -qq && apt-get install -y -qq "python$V-venv" >/dev/null
fi
echo "setup: $(python3 -V), a virtualenv in $ROOT/venv"
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --quiet --no-cache-dir --upgrade pip
echo "setup: torch {TORCH}, CPU build (about 190 MB)"
"$ROOT/venv/bin/python" -m pip install --quiet --no-cache-dir "torch=={TORCH}" \\
    --index-url https://download.pytorch.org/whl/cpu
echo "setup: requirements.txt"
"$ROOT/venv/bin/python" -m pip install --quiet --no-cache-dir -r requirements.txt
"$ROOT/venv/bin/python" -c "import torch, safetensors, pytest; print('setup: done, torch', torch.__version__)"
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


def _lowest_python(requires_python):
    """The oldest Python (major, minor) a Requires-Python specifier admits, from 3.0 on."""
    from packaging.specifiers import SpecifierSet

    spec = SpecifierSet(requires_python or "")
    return next((3, minor) for minor in range(0, 100) if spec.contains(f"3.{minor}.0"))


def _requirements():
    """requirements.txt: every REQUIREMENTS entry pinned for every Python from OLDEST_PYTHON on."""
    lines = []
    for name in REQUIREMENTS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            lines.append(name)
            continue
        low = _lowest_python(metadata.metadata(name).get("Requires-Python"))
        if low <= OLDEST_PYTHON:
            lines.append(f"{name}=={version}")
            continue
        if name not in FOR_OLDER_PYTHON:
            raise RuntimeError(f"{name} {version} needs Python {low[0]}.{low[1]}: add a release for "
                               f"Python {OLDEST_PYTHON[0]}.{OLDEST_PYTHON[1]} to FOR_OLDER_PYTHON")
        lines.append(f'{name}=={version}; python_version >= "{low[0]}.{low[1]}"')
        lines.append(f'{name}=={FOR_OLDER_PYTHON[name]}; python_version < "{low[0]}.{low[1]}"')
    return "# pinned to the versions the grader was tested with (older ones where those need a newer Python);\n" \
        "# torch is installed first by setup.sh\n" + "\n".join(lines) + "\n"


def _source_files():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                yield path
    for chapter in course.chapters():
        yield from (chapter.path(part) for part in COURSE_PARTS if chapter.has(part))


def build_zip(out_zip, hidden_visibility=Settings.hidden_visibility, wall_seconds=GRADESCOPE_WALL_SECONDS,
              memory_mb=GRADESCOPE_MEMORY_MB, assignment=None, secret_file="", language="en"):
    """Write the autograder zip (for one grader.assignment.Assignment, or the whole course); return the list
    of names in it. `language`: of the results students read (grader/language.py)."""
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}")
    config = {"hidden_visibility": hidden_visibility, "wall_seconds": wall_seconds, "memory_mb": memory_mb,
              "assignment": assignment.spec() if assignment else None, "language": language}
    entries = [("setup.sh", SETUP_SH, 0o755), ("run_autograder", RUN_AUTOGRADER, 0o755),
               ("requirements.txt", _requirements(), 0o644),
               ("gradescope.json", json.dumps(config, indent=1) + "\n", 0o644)]
    entries += [(str(p.relative_to(REPO)), p.read_bytes(), 0o644) for p in _source_files()]
    # the grader's secret (grader/unseen.py): the same main-check inputs as `grade` and `batch` draw here
    entries.append((DEFAULT_SECRET, load_secret(secret_file or REPO / DEFAULT_SECRET), 0o600))
    out_zip = Path(out_zip)
    out_zip.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible bytes
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    write_atomic(out_zip, buffer.getvalue())
    return [name for name, _, _ in entries]


def _private(*paths):
    """As root: only root may enter these folders (the learner's uid is another user)."""
    if os.geteuid() == 0:
        for path in paths:
            if path.exists():
                os.chmod(path, 0o700)


def _secret_modes(source):
    """The secret readable by this user alone, however the bundle was unpacked: an extraction that drops file modes
    (Python's zipfile does) leaves it 0644, which grader.unseen.load_secret refuses. In the container this runs as
    root, which owns what it unpacked."""
    secret = source / DEFAULT_SECRET
    if secret.is_file() and not secret.is_symlink():
        os.chmod(secret, 0o600)


PACKAGES_NEEDED = ("torch", "numpy", "safetensors")


def _import_problem(python):
    """Why the packages grading needs cannot be imported by `python -I` (what the sandbox runs), or ""."""
    import subprocess

    code = "import " + ", ".join(PACKAGES_NEEDED)
    try:
        run = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True,
                             timeout=WAITS.import_check_seconds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python} could not run ({type(exc).__name__})"
    if run.returncode == 0:
        return ""
    last = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1]
    return clean(last, REPORT.title_chars, newlines=False)


def _memory_events():
    """(the container's memory limit in MB or None, how many times it killed a process for memory)."""
    limit, kills = None, 0
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
            limit = int(text) >> 20 if text.isdigit() and int(text) < 1 << 50 else None
            break
        except OSError:
            continue
    try:
        events = dict(line.split() for line in Path("/sys/fs/cgroup/memory.events").read_text().splitlines())
        kills = int(events.get("oom_kill", 0))
    except (OSError, ValueError):
        pass
    return limit, kills


def _out_of_memory(limit, need):
    """The out-of-memory cause, with the container's limit and the assignment's need where they are known."""
    if limit and need:
        return messages.msg("out of memory: the container's limit is {limit} MB; this assignment needs {need} MB "
                            "(docs/instructor.md)", limit=limit, need=need)
    if limit:
        return messages.msg("out of memory: the container's limit is {limit} MB", limit=limit)
    if need:
        return messages.msg("out of memory; this assignment needs {need} MB (docs/instructor.md)", need=need)
    return messages.msg("out of memory")


def failure(step, exc, assignment=None, language="en"):
    """results.json for grading that could not run: which step (a message), and the cause where it can be found,
    in the students' `language`."""
    from .language import phrasebook

    causes = []
    problem = _import_problem(sys.executable)
    if problem:
        causes.append(messages.msg("a package is missing or broken ({problem}): setup.sh installs torch, numpy and "
                                   "safetensors; read the autograder's build output",
                                   problem=messages.verbatim(problem)))
    limit, kills = _memory_events()
    if kills or isinstance(exc, MemoryError):
        causes.append(_out_of_memory(limit, container_mb(assignment)))
    cause = messages.joined(causes) if causes else messages.msg("no cause found (the package check passed and no "
                                                                "process ran out of memory)")
    say = phrasebook(language)
    output = say("The autograder failed while {step}: {error_type}: {error}. Cause: {cause}. Your submission was not "
                 "graded; please tell your instructor.", step=step, error_type=type(exc).__name__,
                 error=messages.verbatim(clean(exc, REPORT.title_chars)), cause=cause)
    return {"score": 0, "execution_time": 0.0, "visibility": "visible", "stdout_visibility": "hidden",
            "output": output, "output_format": "text", "tests": []}


def container_mb(assignment=None):
    """The container memory the docs recommend for a bundle (grader.settings.GRADESCOPE_CONTAINER_MB; None where
    no measurement exists yet)."""
    return GRADESCOPE_CONTAINER_MB.get(assignment.name if assignment else "course")


def identity(metadata_path):
    """(student, assignment) the draws are keyed on, from Gradescope's own record of the submission: the user ids
    of everyone it belongs to (a group shares one set of draws) and the assignment's id; never the submission's id,
    which changes at each resubmission. (None, None) where the record is missing or unreadable."""
    try:
        metadata = json.loads(Path(metadata_path).read_text())
        users = sorted(str(u["id"]) for u in metadata.get("users") or [] if isinstance(u, dict) and "id" in u)
        assignment = metadata.get("assignment") or {}
        assignment_id = assignment.get("id") if isinstance(assignment, dict) else None
        assignment_id = str(assignment_id if assignment_id is not None else metadata.get("assignment_id") or "") or None
    except (OSError, ValueError, TypeError, KeyError):
        return None, None
    return ("+".join(users) or None), assignment_id


def results_payload(root):
    """Grade root/submission; Gradescope's results.json as a dict (never raises)."""
    import time

    from .assignment import Assignment, heading
    from .language import phrasebook
    from .remote import RemoteGrader
    from .report import gradescope_json
    from .submission import SubmissionError

    start = time.perf_counter()
    root = Path(root)
    source, submission, results_dir = root / "source", root / "submission", root / "results"
    config = {"hidden_visibility": Settings.hidden_visibility, "wall_seconds": GRADESCOPE_WALL_SECONDS,
              "memory_mb": GRADESCOPE_MEMORY_MB, "assignment": None, "language": "en"}
    try:
        config.update(json.loads((source / "gradescope.json").read_text()))
    except (OSError, ValueError):
        pass
    _private(source, submission, results_dir)
    _secret_modes(source)
    assignment = Assignment.from_spec(config["assignment"]) if config["assignment"] else None
    step = messages.msg("starting the sandbox")
    try:
        settings = Settings.from_env(limits={"wall_seconds": config["wall_seconds"], "memory_mb": config["memory_mb"]},
                                     protect=(str(submission), str(results_dir)),
                                     secret_file=str(source / DEFAULT_SECRET),
                                     hidden_visibility=config["hidden_visibility"], language=config["language"],
                                     lanes=GRADESCOPE_LANES)
        grader = RemoteGrader(settings, assignment.registry_checks() if assignment else None)
        startup = time.perf_counter() - start
        step = messages.msg("grading the submission")
        student, assignment_id = identity(root / "submission_metadata.json")
        result = grader.grade(submission, student=student, assignment=assignment_id)
    except SubmissionError as exc:
        say = phrasebook(config["language"])
        return {"score": 0, "execution_time": round(time.perf_counter() - start, 2),  # nothing hidden ran
                "output": say("Nothing to grade: {why}. Upload your notebooks (.ipynb) or .py files.",
                              why=clean(say.render(exc.message))),
                "visibility": "visible", "stdout_visibility": "hidden", "tests": []}
    except Exception as exc:  # the grader itself failed: say where and why, never a silent zero
        return failure(step, exc, assignment, config["language"])
    if assignment:
        result = assignment.apply(result)
    # start-up plus the visible work (grader/grading.py): a hidden child's time would tell its inputs
    result.seconds += startup
    payload = gradescope_json(result, settings.hidden_visibility, settings.language)
    if assignment:
        payload["output"] = "\n".join(filter(None, [heading(assignment, settings.language), payload["output"]]))
    return payload


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
