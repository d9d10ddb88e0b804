#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then run the test suite and execute every solution notebook
# under nbval (in the course's kernel, posenc-course). Arguments go to pytest.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
say "running the tests with $PY"
"$PY" -m pytest tests solutions --nbval-lax -q "$@"
