# Sourced by the other scripts: which Python environment the course uses. Sets ROOT, ENV_DIR, ENV_KIND, PY.
#   - an active virtualenv ($VIRTUAL_ENV), or an active conda env other than base: that one;
#   - otherwise the project's own virtualenv, .venv in the repository root (scripts/setup.sh creates it
#     with $PYTHON, default python3).
# Nothing outside that environment is changed: not the system's or the user's Python, not the user's
# Jupyter kernels (the course registers a kernel of its own name, posenc-course, inside the environment).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KERNEL_NAME="posenc-course"
MIN_PYTHON="3.10"
if [ -n "${VIRTUAL_ENV:-}" ]; then
    ENV_DIR="$VIRTUAL_ENV"
    ENV_KIND="the active virtualenv"
elif [ -n "${CONDA_PREFIX:-}" ] && [ "${CONDA_DEFAULT_ENV:-base}" != "base" ]; then
    ENV_DIR="$CONDA_PREFIX"
    ENV_KIND="the active conda env"
else
    ENV_DIR="$ROOT/.venv"
    ENV_KIND="the project's virtualenv"
fi
PY="$ENV_DIR/bin/python"

say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# the environment must exist: the scripts that only use it say how to make it
need_env() {
    [ -x "$PY" ] || die "no Python environment at $ENV_DIR: run  bash scripts/setup.sh  first"
}
