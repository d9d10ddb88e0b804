#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then run the test suite and execute every solution notebook
# under nbval (in the course's kernel, posenc-course). Arguments go to pytest; when one of them names a path
# (tests/test_hints.py, solutions/01_sinusoidal.ipynb, tests/test_x.py::test_y), only those run.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
TARGETS=(tests solutions)
for arg in "$@"; do
    case "$arg" in
        -*) ;;
        *) [ ! -e "${arg%%::*}" ] || TARGETS=() ;;
    esac
done
say "running the tests with $PY"
"$PY" -m pytest ${TARGETS[@]+"${TARGETS[@]}"} --nbval-lax -q "$@"
