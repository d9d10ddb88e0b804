#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then run the test suite and execute every solution notebook
# under nbval (in the course's kernel, posenc-course). Arguments go to pytest; when one of them names a path
# (tests/test_hints.py, solutions/01_sinusoidal.ipynb, tests/test_x.py::test_y), only those run.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
# .ci/run has just set up the environment with more extras: POSENC_SET_UP=1 skips a second, idle pass
[ "${POSENC_SET_UP:-}" = 1 ] || bash scripts/setup.sh
TARGETS=(tests solutions)
# the whole suite runs on pytest-xdist workers, one per core and one more (on two cores, two workers left a third of
# the CPU idle while tests waited on servers, browsers and sandboxes' limits), at most 4 (each starts a zygote
# that imports torch: about 1 GB a worker), a test file per worker at a time; POSENC_TEST_WORKERS=1: one process
# the cores this process may use (nproc also honours OpenMP's variables, which the tests set to 1)
CORES="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"
WORKERS="${POSENC_TEST_WORKERS:-$(( CORES + 1 < 4 ? CORES + 1 : 4 ))}"
for arg in "$@"; do
    case "$arg" in
        -n|--numprocesses|--numprocesses=*|-n[0-9]*|-pno:xdist|no:xdist) WORKERS=1 ;;  # the caller decides
        -*) ;;
        *) [ ! -e "${arg%%::*}" ] || { TARGETS=(); WORKERS=1; } ;;
    esac
done
PARALLEL=()
[ "$WORKERS" -le 1 ] || PARALLEL=(-n "$WORKERS" --dist loadfile)
say "running the tests with $PY${PARALLEL[*]:+ on $WORKERS workers}"
"$PY" -m pytest ${TARGETS[@]+"${TARGETS[@]}"} ${PARALLEL[@]+"${PARALLEL[@]}"} --nbval-lax -q "$@"
