#!/usr/bin/env bash
# Install everything, then run the test suite and execute every solution notebook under nbval.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
bash scripts/setup.sh
"$PY" -m pytest tests solutions --nbval-lax -q "$@"
