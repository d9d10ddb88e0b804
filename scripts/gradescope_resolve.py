"""Does the Gradescope bundle's set-up resolve on Gradescope's Pythons? (Ubuntu 22.04: 3.10, 24.04: 3.12)

    python scripts/gradescope_resolve.py [--pip-only] [3.10 3.12 ...]

For each version, pip resolves what setup.sh installs (torch 2.13.0, then the bundle's requirements.txt)
without installing anything (`pip install --dry-run`): with a real interpreter of that version where this
machine has one (pyenv's, or python3.X on PATH), otherwise with this interpreter and
`--python-version X --only-binary :all:` (always so with --pip-only; then the requirements' markers are
evaluated here for X, since pip would evaluate them for the running interpreter). Prints what each
resolves to, and exits non-zero if any fails. torch is resolved against pip's configured indexes (PyPI
carries the same torch releases for the same Pythons as PyTorch's CPU index, which setup.sh uses; this
machine cannot reach the latter). About 15 to 20 s a version here.
"""

from __future__ import annotations

import glob
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.gradescope import REQUIREMENTS, TORCH, _requirements  # noqa: E402
from grader.settings import WAITS  # noqa: E402


def interpreter(version):
    """A real python of that version on this machine that runs and has pip, or None."""
    candidates = sorted(glob.glob(f"/root/.pyenv/versions/{version}.*/bin/python{version}"), reverse=True)
    candidates += [p for p in [shutil.which(f"python{version}")] if p]
    for python in candidates:
        probe = subprocess.run([python, "-c", "import sys, pip; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return python
    return None


def for_version(requirements, version):
    """The requirement lines whose marker holds on Python `version`, markers removed."""
    from packaging.requirements import Requirement

    env = {"python_version": version, "python_full_version": f"{version}.0"}
    out = []
    for line in requirements.splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(env):
                out.append(f"{req.name}{req.specifier}")
    return "\n".join(out) + "\n"


def resolve(version, requirements, pip_only=False):
    """{name: (version, source)} that pip resolves for Python `version`, and how it was run."""
    with tempfile.TemporaryDirectory() as tmp:
        report, req = Path(tmp) / "report.json", Path(tmp) / "requirements.txt"
        python = None if pip_only else interpreter(version)
        if python:
            req.write_text(requirements)
            cmd = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
            how = f"{python} (a real Python {version})"
        else:
            req.write_text(for_version(requirements, version))
            cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                   "--python-version", version, "--only-binary", ":all:", "--target", str(Path(tmp) / "target")]
            how = f"{sys.executable} --python-version {version} --only-binary :all:"
        cmd += ["--report", str(report), f"torch=={TORCH}", "-r", str(req)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=WAITS.resolve_seconds)
        if run.returncode != 0:
            errors = [line for line in run.stderr.splitlines() if "is ignored" not in line]
            return None, how, "\n".join(errors[-15:])
        installs = json.loads(report.read_text())["install"]
        return {i["metadata"]["name"].lower(): (i["metadata"]["version"], i["download_info"]["url"].split(":")[0])
                for i in installs}, how, ""


def main(argv):
    pip_only = "--pip-only" in argv
    versions = [a for a in argv if a != "--pip-only"] or ["3.10", "3.12"]
    requirements = _requirements()
    failed = 0
    for version in versions:
        resolved, how, error = resolve(version, requirements, pip_only)
        if resolved is None:
            failed += 1
            print(f"Python {version}: FAILED with {how}\n{error}")
            continue
        names = ["torch", *REQUIREMENTS]
        print(f"Python {version}: resolves ({how}), {len(resolved)} packages: " +
              ", ".join(f"{n} {resolved[n][0]}" for n in names if n in resolved))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
