#!/usr/bin/env bash
# Install what the course, the grader and the tests need, into one Python environment (scripts/env.sh):
# the active virtualenv or conda env, otherwise the project's own .venv, created here. Nothing else on
# the machine is changed: not the system's Python (fine on Debian's and Ubuntu's externally managed
# one), not the user's Jupyter kernels.
#
#   bash scripts/setup.sh [EXTRA...]     extras of pyproject.toml; default: test notebook
#
# Steps: 1. the environment; 2. torch (kept if already there); 3. the dependencies in pyproject.toml;
# 4. the Jupyter kernel "posenc-course" inside the environment (the notebooks ask for it).
#
# Which torch, where none is installed (POSENC_TORCH_INDEX, default auto):
#   auto  a torch 2.13.0 wheel pip already has on this machine (its --find-links): used, no download;
#         else, with an NVIDIA GPU: PyPI's build (CUDA, about 3 GB to download);
#         else PyTorch's CPU index (about 190 MB), when it answers within 5 s; else PyPI, with a warning.
#   cpu   PyTorch's CPU index, https://download.pytorch.org/whl/cpu
#   pypi  whatever pip is configured with (on Linux x86-64 PyPI's torch is the CUDA build)
#   URL   that index, e.g. https://download.pytorch.org/whl/cu128
# PYTHON: the interpreter that creates .venv (default python3; 3.10 or newer).
# Which installer (POSENC_INSTALLER, default auto):
#   auto  uv (the environment's, else one on PATH, else installed into the environment by pip: one small download),
#         from the sources pip is configured with (scripts/uv_install.py); pip where uv cannot be had, where pip's
#         configuration holds a setting uv would not honour the same way, or where uv fails
#   pip   pip alone
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1
TORCH_VERSION="2.13.0"
CPU_INDEX="https://download.pytorch.org/whl/cpu"
EXTRAS=("$@")
[ ${#EXTRAS[@]} -gt 0 ] || EXTRAS=(test notebook)
START=$SECONDS

# pip's lines as they come, without the ones that say nothing happened and without the "(from ...)" chains;
# pip's exit status is kept (pipefail). --no-compile: Python compiles a module's bytecode when it is first imported
# (into the environment's __pycache__), not every module at install (torch's wheel alone: 57 s -> 18 s, measured)
pip_install() {
    "$PY" -m pip install --no-compile "$@" 2>&1 |
        { grep --line-buffered -v -E "^Requirement already satisfied|is ignored: it is neither" || true; } |
        sed -u -E 's/ \(from [^ ]+->.*$//; s/ \(from -r [^()]*( \(line [0-9]+\))?\)$//; s/ \(from [^ )]+\)$//'
}

# torch is one large download: on a terminal, pip's own output with its progress bar
pip_install_torch() {
    if [ -t 1 ]; then "$PY" -m pip install --no-compile "$@"; else pip_install "$@"; fi
}

# uv resolves and unpacks in parallel where pip asks each index in turn: a fresh set-up's dependencies took 7 s with
# uv against 43 s with pip, torch's wheel 4 s against 12 s (two cores, measured). UV: its path, once found (below).
UV=""
UV_REQUIREMENT="uv>=0.5"
find_uv() {
    case "${POSENC_INSTALLER:-auto}" in
        pip) return ;;
        auto) ;;
        *) die "POSENC_INSTALLER=$POSENC_INSTALLER: expected auto or pip" ;;
    esac
    if [ -x "$ENV_DIR/bin/uv" ]; then UV="$ENV_DIR/bin/uv"; return; fi
    if command -v uv >/dev/null; then UV="$(command -v uv)"; return; fi
    # pip is asked for uv once per environment: where it could not get one (offline, a mirror without uv), a later
    # run (test.sh and lab.sh run this script each time) does not ask the index again
    [ ! -e "$ENV_DIR/.posenc-uv-asked" ] || return 0
    pip_install --quiet "$UV_REQUIREMENT" || true
    touch "$ENV_DIR/.posenc-uv-asked"
    [ ! -x "$ENV_DIR/bin/uv" ] || UV="$ENV_DIR/bin/uv"
}
uv_install() {  # as `pip install --no-compile`, with uv, from pip's sources
    "$PY" "$ROOT/scripts/uv_install.py" "$UV" "$@"
}
# install as pip_install would (same arguments), with uv where it can; pip where it cannot, or fails
install() {
    if [ -n "$UV" ]; then
        local rc=0
        uv_install "$@" 2>&1 |
            { grep --line-buffered -v -E "^Using Python .* environment at" || true; } || rc=$?
        [ "$rc" -ne 0 ] || return 0
        say "      uv did not install (above): pip installs, from here on"
        UV=""
    fi
    pip_install "$@"
}
install_torch() {
    if [ -n "$UV" ]; then install "$@"; else pip_install_torch "$@"; fi
}
# only from a wheel already on this machine (pip's find-links), without any index: uv's answer, else pip's
install_local() {
    { [ -n "$UV" ] && uv_install --quiet --no-index "$@" >/dev/null 2>&1; } ||
        "$PY" -m pip install --quiet --no-compile --no-index "$@" >/dev/null 2>&1
}

python_ok='import sys; sys.exit(sys.version_info < (3, 10))'

# ---- 1. the environment
if [ ! -x "$PY" ]; then
    BASE="${PYTHON:-python3}"
    command -v "$BASE" >/dev/null || die "no $BASE found: install Python $MIN_PYTHON or newer (or set PYTHON=/path/to/python3)"
    "$BASE" -c "$python_ok" || die "$("$BASE" -V 2>&1) is too old: Python $MIN_PYTHON or newer is needed (set PYTHON=/path/to/python3.X)"
    if ! "$BASE" -c "import ensurepip, venv" 2>/dev/null; then
        V="$("$BASE" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        die "$BASE cannot create virtualenvs (no ensurepip). On Debian or Ubuntu: sudo apt-get install python$V-venv  then run this again."
    fi
    say "[1/4] creating $ENV_KIND .venv with $("$BASE" -V 2>&1) ($(command -v "$BASE"))"
    if ! "$BASE" -m venv "$ENV_DIR"; then
        rm -rf "$ENV_DIR"
        die "$BASE -m venv $ENV_DIR failed (see above)"
    fi
else
    say "[1/4] using $ENV_KIND at $ENV_DIR"
fi
"$PY" -c "$python_ok" || die "$("$PY" -V 2>&1) in $ENV_DIR is too old: Python $MIN_PYTHON or newer is needed"
"$PY" -m pip --version >/dev/null 2>&1 || die "$ENV_DIR has no pip: run  $PY -m ensurepip  (or delete .venv) and run this again"
say "      $("$PY" -V 2>&1), $("$PY" -m pip --version | cut -d' ' -f1-2)"
find_uv
[ -z "$UV" ] || say "      installing with $("$UV" --version 2>/dev/null || echo uv) ($UV), from pip's sources"

# ---- 2. torch
has_nvidia_gpu() {
    # nvidia-smi's whole list, then a match: `nvidia-smi | grep -q` would end at the first match, and a list still being
    # written would then end in SIGPIPE, which pipefail makes the pipeline's answer
    case "$(nvidia-smi -L 2>/dev/null || true)" in *GPU*) return 0 ;; esac
    [ -n "$(ls /proc/driver/nvidia/gpus 2>/dev/null)" ]
}
answers() {  # does this index answer within 5 s? (pip would retry an unreachable one for minutes)
    "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)" "$1/torch/" 2>/dev/null
}
# torch's version, its warnings silenced: before step 3 installs numpy, `import torch` warns "Failed to initialize
# NumPy" (a UserWarning nobody can act on: numpy comes next)
torch_version() {
    "$PY" -W ignore -c 'import torch; print(torch.__version__)'
}
TORCH_NOW="$(torch_version 2>/dev/null || true)"
if [ -n "$TORCH_NOW" ] && "$PY" -c "import sys; sys.exit(tuple(map(int, sys.argv[1].split('.')[:2])) < (2, 4))" "$TORCH_NOW"; then
    say "[2/4] torch $TORCH_NOW is installed: kept"
else
    [ -z "$TORCH_NOW" ] || say "      torch $TORCH_NOW is older than 2.4: replacing it"
    SOURCE="${POSENC_TORCH_INDEX:-auto}"
    if [ "$SOURCE" = auto ]; then
        if install_local --no-deps "torch==$TORCH_VERSION"; then
            say "[2/4] torch $TORCH_VERSION: from a wheel already on this machine (pip's find-links), no download"
            SOURCE=done
        elif has_nvidia_gpu; then
            SOURCE=pypi
            say "[2/4] torch $TORCH_VERSION, CUDA build from PyPI (an NVIDIA GPU is present): about 3 GB to download, 4.6 GB installed"
        elif answers "$CPU_INDEX"; then
            SOURCE=cpu
        else
            SOURCE=pypi
            say "[2/4] torch $TORCH_VERSION: PyTorch's CPU index ($CPU_INDEX) did not answer within 5 s;"
            say "      falling back to pip's own index, whose Linux build is the CUDA one: about 3 GB to download."
            say "      Stop now (Ctrl-C) and set POSENC_TORCH_INDEX to an index you can reach to choose otherwise."
        fi
    fi
    case "$SOURCE" in
        done) install "torch==$TORCH_VERSION" ;;  # its dependencies (filelock, sympy, ...)
        cpu)
            say "[2/4] torch $TORCH_VERSION, CPU build from $CPU_INDEX: about 190 MB to download, 0.9 GB installed"
            install_torch "torch==$TORCH_VERSION" --index-url "$CPU_INDEX" ;;
        pypi)
            [ "${POSENC_TORCH_INDEX:-auto}" = auto ] || say "[2/4] torch $TORCH_VERSION from pip's configured index (POSENC_TORCH_INDEX=pypi)"
            install_torch "torch==$TORCH_VERSION" ;;
        http://*|https://*|file://*)
            say "[2/4] torch $TORCH_VERSION from $SOURCE (POSENC_TORCH_INDEX)"
            install_torch "torch==$TORCH_VERSION" --index-url "$SOURCE" ;;
        *) die "POSENC_TORCH_INDEX=$SOURCE: expected auto, cpu, pypi or an index URL" ;;
    esac
    TORCH_NOW="$(torch_version)" || die "torch did not install (see above)"
fi

# ---- 3. everything else pyproject.toml lists
# (KERNEL_TMP: step 4's; ipykernel writes the kernel's spec into a temporary folder of its own and leaves it behind)
REQ="$(mktemp)"
KERNEL_TMP="$(mktemp -d)"
trap 'rm -f "$REQ"; rm -rf "$KERNEL_TMP"' EXIT
"$PY" scripts/requirements.py --without-torch "${EXTRAS[@]}" > "$REQ"
say "[3/4] dependencies of pyproject.toml (${EXTRAS[*]}): $(sed 's/[<>=!~; ].*//' "$REQ" | tr '\n' ' ')"
say "      about 650 MB installed in a fresh environment (JupyterLab, transformers, matplotlib, numpy)"
install -r "$REQ"
# timm, chapter 8's oracle, with the test extra and without its dependencies (see the timm extra in pyproject.toml)
# (a loop, not `printf | grep -q`: grep ends at its first match, printf's next write then dies of SIGPIPE, and pipefail
# made the test false now and then: timm silently left out)
WITH_TEST=""
for extra in "${EXTRAS[@]}"; do [ "$extra" != test ] || WITH_TEST=1; done
if [ -n "$WITH_TEST" ]; then
    install --no-deps $("$PY" scripts/requirements.py --only timm)
fi

# ---- bytecode: compiled once for what the steps above installed, on every core (pip's own compilation, which is
# serial, is off: --no-compile). Where PYTHONDONTWRITEBYTECODE is set, Python never stores what it compiles on import,
# and every process would compile torch, matplotlib and IPython again (their imports: 2.7 s with bytecode, 9.0 s
# without, measured); elsewhere it saves each module's first import. Again only when the environment has changed.
# Left out (NOT_IMPORTED): what no process of the course imports, about a third of the source: the packages' own test
# suites, torch's internal test helpers, pip and setuptools, and transformers' models but its auto classes (the few
# models the tests compare with compile when imported): 16-21 s on two cores, against 26-29 s for the whole environment.
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
COMPILED="$ENV_DIR/.posenc-bytecode"
NOT_IMPORTED='/(tests?|testing/_internal)/|/site-packages/(pip|setuptools)/|/transformers/models/(?!auto/)[^/]+/'
if [ ! -e "$COMPILED" ] || [ "$SITE" -nt "$COMPILED" ]; then
    say "      compiling the environment's bytecode (once per change, on every core)"
    # a few files of some packages are not Python 3
    "$PY" -m compileall -q -j 0 -x "$NOT_IMPORTED" "$SITE" >/dev/null 2>&1 || true
    touch "$COMPILED"
fi

# ---- 4. the course's own Jupyter kernel, inside the environment (never the user-wide "python3")
# (its temporary folder in KERNEL_TMP, which the exit removes)
TMPDIR="$KERNEL_TMP" "$PY" -m ipykernel install --sys-prefix --name "$KERNEL_NAME" --display-name "Python 3 ($KERNEL_NAME)" >/dev/null
say "[4/4] Jupyter kernel \"$KERNEL_NAME\" registered in $ENV_DIR/share/jupyter/kernels"

SIZE="$(du -sh "$ENV_DIR" 2>/dev/null | cut -f1)"
say "done in $((SECONDS - START)) s: torch $TORCH_NOW in $ENV_DIR ($SIZE)"
say "open the course: bash scripts/lab.sh; the grader: $PY -m grader --help"
