#!/usr/bin/env bash
# Install what the course, the grader and the tests need into the current Python.
# torch goes first, and only where none is installed: 2.13.0 (a CPU build on the course machines);
# an existing torch inside pyproject's range is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if ! "$PY" -c "import torch" 2>/dev/null; then
    "$PY" -m pip install --quiet "torch==2.13.0"
fi
REQ="$(mktemp)"
"$PY" - "$@" > "$REQ" <<'PYEOF'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
deps = list(project["dependencies"])
for extra in sys.argv[1:] or ["test"]:
    deps += project["optional-dependencies"][extra]
print("\n".join(deps))
PYEOF
"$PY" -m pip install --quiet -r "$REQ"
rm -f "$REQ"
"$PY" -m ipykernel install --user --name python3 >/dev/null 2>&1 || true
