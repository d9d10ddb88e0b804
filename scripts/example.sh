#!/usr/bin/env bash
# Install everything, then grade the bundled examples: a complete submission and one with
# the typical mistakes. Prints both reports and writes their Gradescope results.json files.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
bash scripts/setup.sh
mkdir -p out
for example in complete typical_mistakes; do
    "$PY" -m grader grade "examples/$example" --json "out/$example.results.json"
    echo
done
