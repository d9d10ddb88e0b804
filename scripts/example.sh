#!/usr/bin/env bash
# Install everything (scripts/setup.sh), then grade the bundled examples: a complete submission and one
# with the typical mistakes. Prints both reports and writes their Gradescope results.json files to out/.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
bash scripts/setup.sh
mkdir -p out
for example in complete typical_mistakes; do
    say "grading examples/$example"
    "$PY" -m grader grade "examples/$example" --json "out/$example.results.json"
    echo
done
