#!/usr/bin/env bash
# Open the course in JupyterLab, in the course's environment (scripts/env.sh), at the student notebooks.
# Sets everything up first if JupyterLab or the course's kernel is missing there. Arguments go to `jupyter lab`.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
if ! "$PY" -c "import jupyterlab, torch" 2>/dev/null || [ ! -f "$ENV_DIR/share/jupyter/kernels/$KERNEL_NAME/kernel.json" ]; then
    bash scripts/setup.sh
fi
say "JupyterLab on the notebooks in $ROOT/notebooks (kernel posenc-course); stop it with Ctrl-C"
ROOT_FLAG=()
[ "$(id -u)" != 0 ] || ROOT_FLAG=(--allow-root)  # JupyterLab refuses root without it (containers, CI)
exec "$PY" -m jupyterlab --ServerApp.root_dir="$ROOT/notebooks" "${ROOT_FLAG[@]}" "$@"
