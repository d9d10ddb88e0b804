"""scripts/setup.sh: which environment it uses, which torch it asks pip for, what it never touches.

setup.sh runs for real here, against a stand-in for the environment's python that logs what pip and
ipykernel are asked to do (nothing is installed) and runs everything else with the real interpreter;
`torch` is a fake package in a folder of its own (first on PYTHONPATH), importable once "pip install torch==..."
was logged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

CPU_INDEX = "https://download.pytorch.org/whl/cpu"

FAKE_PYTHON = r"""#!/bin/bash
# stand-in for $VIRTUAL_ENV/bin/python: pip and ipykernel are logged, the rest runs in the real python
echo "$*" >> "$STATE/log"
case "$1 $2 $3" in
    "-m pip --version") echo "pip 99.0 from $0"; exit 0 ;;
    "-m ipykernel install") mktemp -d --suffix=_kernels >/dev/null; exit 0 ;;  # as ipykernel 7 does: left behind
    "-m compileall -q") exit 0 ;;
    "-m pip install")
        case "$*" in *--no-index*) exit "$LOCAL_WHEEL_RC" ;; esac
        previous=""
        for arg in "$@"; do
            if [ "$previous" = -r ]; then
                sed 's/^/  requirement: /' "$arg" >> "$STATE/log"
                echo "Collecting numpy>=1.24 (from -r $arg (line 2))"  # what pip says of a requirements file's line
            fi
            previous="$arg"
        done
        exec bash "$STATE/installs_torch" "$@" ;;
esac
case "$2" in *urllib*) exit "$PROBE_RC" ;; *sysconfig*) echo "$STATE/site"; exit 0 ;; esac
PYTHONPATH="$STATE/site" exec "$REAL_PYTHON" "$@"  # $STATE/site/torch shadows any real torch
"""

# what an install of torch==X leaves, for the fake pip and the fake uv alike: a torch that warns on import
INSTALLS_TORCH = r"""for arg in "$@"; do case "$arg" in torch==*)
    mkdir -p "$STATE/site/torch"
    # as torch does before numpy is installed: a UserWarning on import
    printf "import warnings\nwarnings.warn('Failed to initialize NumPy: %s')\n__version__ = '%s'\n" \
        "No module named numpy" "${arg#torch==}" > "$STATE/site/torch/__init__.py" ;;
esac; done
"""

# stand-in for uv, found on PATH: logged; --no-index answers as the fake pip does; with UV_FAILS set, installing a
# requirements file fails
FAKE_UV = r"""#!/bin/bash
echo "uv $*" >> "$STATE/log"
[ "$1" != --version ] || { echo "uv 9.9.9"; exit 0; }
case "$*" in *--no-index*) exit "$LOCAL_WHEEL_RC" ;; esac
case " $* " in *" -r "*) [ -z "$UV_FAILS" ] || { echo "error: the index said no"; exit 2; } ;; esac
exec bash "$STATE/installs_torch" "$@"
"""


def run_setup(tmp_path, *, torch=None, local_wheel=False, gpu=False, index_answers=True, index=None, uv=False,
              installer=None, pip_config=None):
    """setup.sh in a fake environment. With `uv`, a stand-in for uv on PATH ("fails": one that fails); `installer`:
    POSENC_INSTALLER, by default auto with `uv` and pip without (whatever uv this machine has); `pip_config`: PIP_*
    variables, pip's only configuration (its files are not read)."""
    if Path("/proc/driver/nvidia/gpus").exists() and any(Path("/proc/driver/nvidia/gpus").iterdir()) and not gpu:
        pytest.skip("this machine has an NVIDIA GPU: the no-GPU cases cannot be simulated")
    venv, bin_dir, state = tmp_path / "venv", tmp_path / "bin", tmp_path / "state"
    (venv / "bin").mkdir(parents=True, exist_ok=True)  # (again: a second run in the same environment)
    bin_dir.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)  # TMPDIR
    (venv / "bin" / "python").write_text(FAKE_PYTHON)
    (venv / "bin" / "python").chmod(0o755)
    # nvidia-smi shadows any real one: it lists a GPU or fails as it does without a driver
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\n" + ("echo 'GPU 0: NVIDIA H100 (UUID: GPU-0)'\n" if gpu
                                                         else "exit 9\n"))
    (bin_dir / "nvidia-smi").chmod(0o755)
    (state / "installs_torch").write_text(INSTALLS_TORCH)
    if uv:
        (bin_dir / "uv").write_text(FAKE_UV)
        (bin_dir / "uv").chmod(0o755)
    (state / "site" / "torch").mkdir(parents=True, exist_ok=True)  # no torch until one is "installed"
    (state / "site" / "torch" / "__init__.py").write_text(f"__version__ = {torch!r}\n" if torch else
                                                         "raise ImportError('no torch here')\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "VIRTUAL_ENV": str(venv),
           "STATE": str(state), "REAL_PYTHON": sys.executable, "LOCAL_WHEEL_RC": "0" if local_wheel else "1",
           "PROBE_RC": "0" if index_answers else "1", "PIP_CONFIG_FILE": os.devnull, "UV_FAILS": "",
           "TMPDIR": str(tmp_path / "tmp"),
           **(pip_config or {})}
    if uv == "fails":
        env["UV_FAILS"] = "1"
    env["POSENC_INSTALLER"] = installer or ("auto" if uv else "pip")
    if index:
        env["POSENC_TORCH_INDEX"] = index
    run = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    log = (state / "log").read_text() if (state / "log").exists() else ""
    return run, log


def torch_installs(log):
    return [line for line in log.splitlines() if line.startswith("-m pip install") and "torch==" in line]


def uv_installs(log):
    return [line.split() for line in log.splitlines() if line.startswith("uv pip install")]


def test_uv_installs_everything_from_the_sources_pip_is_configured_with(tmp_path):
    config = {"PIP_INDEX_URL": "https://mirror.example/simple", "PIP_FIND_LINKS": "/wheels",
              "PIP_EXTRA_INDEX_URL": "file:///a/simple file:///b/simple", "PIP_CERT": "/certs.pem"}
    run, log = run_setup(tmp_path, uv=True, local_wheel=True, pip_config=config)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "installing with uv 9.9.9" in run.stdout and "-m pip install" not in log, log
    local, deps, requirements, timm = uv_installs(log)
    for command in (local, deps, requirements, timm):
        assert command[command.index("--python") + 1] == sys.executable  # the environment's python (run for real)
        assert command[command.index("--index-strategy") + 1] == "unsafe-best-match"  # pip's choice among indexes
        options = list(zip(command, command[1:]))
        assert ("--index-url", "https://mirror.example/simple") in options and ("--find-links", "/wheels") in options
        assert ("--extra-index-url", "file:///a/simple") in options and ("--extra-index-url", "file:///b/simple") in \
            options
    assert "--no-index" in local and "torch==2.13.0" in local and "torch==2.13.0" in deps
    assert "-r" in requirements and timm[-2:] == ["--no-deps", "timm==1.0.31"]
    assert "no download" in run.stdout and "torch 2.13.0" in run.stdout


def test_a_failing_uv_leaves_the_install_to_pip_and_pip_alone_is_a_choice(tmp_path):
    run, log = run_setup(tmp_path, uv="fails", torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "error: the index said no" in run.stdout and "uv did not install (above): pip installs, from here on" in \
        run.stdout
    pip = [line for line in log.splitlines() if line.startswith("-m pip install")]
    assert [line for line in pip if " -r " in line] and "-m pip install --no-compile --no-deps timm==1.0.31" in pip
    run, log = run_setup(tmp_path / "pip", uv=True, installer="pip", torch="2.6.0")
    assert run.returncode == 0 and not uv_installs(log) and "uv " not in log and "installing with uv" not in run.stdout
    bad, _ = run_setup(tmp_path / "bad", installer="conda")
    assert bad.returncode != 0 and "POSENC_INSTALLER=conda: expected auto or pip" in bad.stderr


def test_a_pip_setting_uv_would_not_honour_leaves_the_install_to_pip(tmp_path):
    run, log = run_setup(tmp_path, uv=True, torch="2.6.0", pip_config={"PIP_ONLY_BINARY": ":all:"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "pip's configuration holds 'only-binary', a setting uv would not honour the same way" in run.stdout
    assert "uv did not install (above): pip installs, from here on" in run.stdout
    assert not uv_installs(log) and [line for line in log.splitlines() if line.startswith("-m pip install")]


def test_without_uv_anywhere_pip_is_asked_for_it_then_installs_alone(tmp_path):
    if shutil.which("uv", path="/usr/bin:/bin"):
        pytest.skip("this machine has uv on the set-up's PATH")
    run, log = run_setup(tmp_path, installer="auto", torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    pip = [line for line in log.splitlines() if line.startswith("-m pip install")]
    assert pip[0] == "-m pip install --no-compile --quiet uv>=0.5"  # the fake pip installs nothing: no uv came
    assert [line for line in pip if " -r " in line] and "installing with uv" not in run.stdout
    again, log = run_setup(tmp_path, installer="auto", torch="2.6.0")  # the same environment: pip is not asked again
    assert again.returncode == 0 and log.count("uv>=0.5") == 1, log


def test_an_existing_torch_is_kept_and_never_asked_of_pip(tmp_path):
    run, log = run_setup(tmp_path, torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    assert torch_installs(log) == []
    assert "torch 2.6.0 is installed: kept" in run.stdout
    requirements = [line.split(": ", 1)[1] for line in log.splitlines() if line.startswith("  requirement: ")]
    # the default extras: the notebook one with JupyterLab pinned to the language pack's release
    assert "numpy>=1.24" in requirements and "jupyterlab>=4.5.11,<4.6" in requirements
    assert not [r for r in requirements if r.startswith("torch")]  # an existing torch is never upgraded
    # no bytecode compiled at install (Python compiles what it imports): every install says so
    installs = [line for line in log.splitlines() if line.startswith("-m pip install")]
    assert installs and all("--no-compile" in line.split() for line in installs), installs


def test_the_environments_bytecode_is_compiled_once_on_every_core_and_again_after_a_change(tmp_path):
    """pip compiles nothing (above); setup.sh compiles the environment's site-packages once, in parallel, so that no
    process compiles torch again where PYTHONDONTWRITEBYTECODE keeps Python from storing what it compiles."""
    site = tmp_path / "state" / "site"

    def compiles(log):
        return [line for line in log.splitlines() if line.startswith("-m compileall")]

    run, log = run_setup(tmp_path, torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    [line] = compiles(log)
    command, end = "-m compileall -q -j 0 -x ", f" {site}"
    assert line.startswith(command) and line.endswith(end), log
    _the_bytecode_left_out_is_what_no_course_process_imports(line[len(command):-len(end)])
    run, log = run_setup(tmp_path, torch="2.6.0")  # nothing installed since: nothing to compile
    assert run.returncode == 0 and len(compiles(log)) == 1, log
    stamp = tmp_path / "venv" / ".posenc-bytecode"
    os.utime(stamp, (stamp.stat().st_atime, stamp.stat().st_mtime - 10))
    (site / "newly_installed").mkdir()  # what pip does to the folder when it installs a package
    run, log = run_setup(tmp_path, torch="2.6.0")
    assert run.returncode == 0 and len(compiles(log)) == 2, log


def _the_bytecode_left_out_is_what_no_course_process_imports(pattern):
    """compileall -x searches each file's full path for `pattern`: the modules the course's processes import (the
    zygote's torch, sympy and pyplot; the kernel's IPython; transformers' own functions and auto classes) stay in."""
    import re

    site = "/env/lib/python3.11/site-packages/"
    kept = ["torch/__init__.py", "torch/testing/__init__.py", "sympy/core/basic.py", "matplotlib/pyplot.py",
            "IPython/core/interactiveshell.py", "transformers/modeling_rope_utils.py",
            "transformers/models/__init__.py", "transformers/models/auto/configuration_auto.py", "pytest/__init__.py",
            "_pytest/python.py", "numpy/testing/__init__.py"]
    left_out = ["sympy/core/tests/test_basic.py", "numpy/_core/tests/test_api.py", "torch/testing/_internal/common.py",
                "pip/__init__.py", "setuptools/dist.py", "transformers/models/bert/modeling_bert.py",
                "transformers/models/llama/modeling_llama.py"]
    assert [p for p in kept if re.search(pattern, site + p)] == []
    assert [p for p in left_out if not re.search(pattern, site + p)] == []


def test_a_torch_wheel_pip_already_has_is_used_without_any_index(tmp_path):
    run, log = run_setup(tmp_path, local_wheel=True, index_answers=False)
    assert run.returncode == 0, run.stdout + run.stderr
    first, deps = torch_installs(log)
    assert "--no-index" in first and "--no-deps" in first and "torch==2.13.0" in first
    assert "--index-url" not in deps  # then its dependencies, from pip's usual sources
    assert "urllib" not in log  # no index was probed
    assert "no download" in run.stdout


def test_without_a_gpu_the_cpu_build_comes_from_pytorchs_cpu_index(tmp_path):
    run, log = run_setup(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert torch_installs(log)[-1].endswith(f"torch==2.13.0 --index-url {CPU_INDEX}")
    assert "CPU build" in run.stdout and "190 MB" in run.stdout


def test_an_unreachable_cpu_index_is_not_handed_to_pip_and_the_fallback_says_its_size(tmp_path):
    run, log = run_setup(tmp_path, index_answers=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "urllib" in log and all("--index-url" not in line for line in torch_installs(log))
    assert "did not answer within 5 s" in run.stdout and "3 GB" in run.stdout and "POSENC_TORCH_INDEX" in run.stdout


def test_with_an_nvidia_gpu_pypis_cuda_build_is_chosen(tmp_path):
    run, log = run_setup(tmp_path, gpu=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert torch_installs(log)[-1].endswith("torch==2.13.0") and "urllib" not in log
    assert "CUDA build" in run.stdout


def test_posenc_torch_index_overrides_the_choice(tmp_path):
    run, log = run_setup(tmp_path, index="https://mirror.example/whl/cu128")
    assert run.returncode == 0, run.stdout + run.stderr
    assert torch_installs(log)[-1].endswith("torch==2.13.0 --index-url https://mirror.example/whl/cu128")
    bad, _ = run_setup(tmp_path / "bad", index="cuda please")
    assert bad.returncode != 0 and "expected auto, cpu, pypi or an index URL" in bad.stderr


def test_the_kernel_is_the_courses_own_inside_the_environment_and_the_notebooks_ask_for_it(tmp_path):
    run, log = run_setup(tmp_path, torch="2.13.0")
    assert run.returncode == 0, run.stdout + run.stderr
    (kernel,) = [line.split() for line in log.splitlines() if line.startswith("-m ipykernel install")]
    assert "--sys-prefix" in kernel and "--user" not in kernel
    name = kernel[kernel.index("--name") + 1]
    assert name != "python3"
    for folder in ("notebooks", "solutions"):
        for notebook in sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb")):
            assert json.loads(notebook.read_text())["metadata"]["kernelspec"]["name"] == name, notebook


def test_set_up_leaves_nothing_in_the_temporary_folder(tmp_path):
    # ipykernel's install writes the spec into a folder of its own in TMPDIR and never removes it (one per set-up:
    # test.sh and lab.sh run it each time); the stand-in does the same
    run, _ = run_setup(tmp_path, torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    assert not list((tmp_path / "tmp").iterdir())


def _copy_scripts(tmp_path):
    """The scripts and pyproject.toml in a folder with no .venv yet (ROOT is where the scripts are)."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", repo / "scripts")
    shutil.copy(ROOT / "pyproject.toml", repo)
    return repo


def _clean_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    return {**env, "HOME": str(tmp_path), **extra}


def test_a_python_without_ensurepip_gets_a_one_line_instruction_and_no_half_made_venv(tmp_path):
    # what Debian's and Ubuntu's python3 looks like without the python3-venv package
    repo = _copy_scripts(tmp_path)
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ensurepip.py").write_text("raise ImportError('ensurepip is not installed')\n")
    run = subprocess.run(["bash", str(repo / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=60,
                         env=_clean_env(tmp_path, PYTHON=sys.executable, PYTHONPATH=str(shadow)))
    assert run.returncode != 0
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 1 and "apt-get install python3." in errors[0] and "-venv" in errors[0], run.stderr
    assert not (repo / ".venv").exists()


def test_a_python_older_than_3_10_is_refused_with_the_reason(tmp_path):
    old = shutil.which("python3.9") or "/root/.pyenv/versions/3.9.18/bin/python3"
    if not Path(old).exists():
        pytest.skip("no Python 3.9 on this machine")
    repo = _copy_scripts(tmp_path)
    run = subprocess.run(["bash", str(repo / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=60,
                         env=_clean_env(tmp_path, PYTHON=old))
    assert run.returncode != 0 and "Python 3.10 or newer is needed" in run.stderr
    assert not (repo / ".venv").exists()


@pytest.mark.parametrize("variables, expected", [
    ({"VIRTUAL_ENV": "/opt/some-venv"}, "/opt/some-venv/bin/python"),
    ({"CONDA_PREFIX": "/opt/conda/envs/course", "CONDA_DEFAULT_ENV": "course"}, "/opt/conda/envs/course/bin/python"),
    ({"CONDA_PREFIX": "/opt/conda", "CONDA_DEFAULT_ENV": "base"}, str(ROOT / ".venv" / "bin" / "python")),
    ({}, str(ROOT / ".venv" / "bin" / "python")),
])
def test_the_environment_is_the_active_one_else_the_projects_venv(variables, expected):
    env = {"PATH": "/usr/bin:/bin", **variables}
    out = subprocess.run(["bash", "-c", f"source {ROOT / 'scripts' / 'env.sh'}; echo $PY"], env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == expected


def test_timm_comes_with_the_test_extra_without_its_dependencies(tmp_path):
    """timm's torchvision from PyPI would not match a CPU torch (and breaks transformers' Qwen2-VL import)."""
    run, log = run_setup(tmp_path, torch="2.6.0")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "-m pip install --no-compile --no-deps timm==1.0.31" in log.splitlines()
    requirements = [line.split(": ", 1)[1] for line in log.splitlines() if line.startswith("  requirement: ")]
    assert not [r for r in requirements if r.startswith(("timm", "torchvision"))]


def test_set_up_prints_no_warning_and_no_requirement_chains(tmp_path):
    """Issue 28: torch's "Failed to initialize NumPy" UserWarning (torch imported before numpy is installed) and
    pip's "(from -r /tmp/... (line N))" suffixes are noise nobody can act on."""
    run, log = run_setup(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert torch_installs(log)  # torch was installed, then imported for its version
    out = run.stdout + run.stderr
    assert "Collecting numpy>=1.24" in out
    assert "Warning" not in out and "Failed to initialize NumPy" not in out and "(from -r" not in out, out


def test_the_lab_never_asks_about_jupyters_news_and_leaves_the_home_alone(tmp_path):
    """Issue 28: JupyterLab's "get notified about official Jupyter news?" prompt on first start. lab.sh answers it
    in the environment's settings overrides (never the user's home), keeping any other override there."""
    pytest.importorskip("jupyterlab", reason="no JupyterLab (bash scripts/setup.sh)")
    repo = _copy_scripts(tmp_path)
    (repo / "notebooks").mkdir()
    (repo / "notebooks" / "00_first.ipynb").write_text("{}")
    env_dir = tmp_path / "env"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (env_dir / "bin" / "python").chmod(0o755)
    kernel = env_dir / "share" / "jupyter" / "kernels" / "posenc-course"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text("{}")
    overrides = env_dir / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    overrides.parent.mkdir(parents=True)
    overrides.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    home = tmp_path / "home"
    home.mkdir()
    run = subprocess.run(["bash", str(repo / "scripts" / "lab.sh"), "--version"], capture_output=True, text=True,
                         timeout=120, env=_clean_env(home, VIRTUAL_ENV=str(env_dir)))
    assert run.returncode == 0, run.stderr
    settings = json.loads(overrides.read_text())
    assert settings["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert settings["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}
    assert not list(home.iterdir())
    # the setting exists in this JupyterLab, with "false" meaning Never
    import jupyterlab

    schema = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas" / "@jupyterlab" / "apputils-extension" / \
        "notification.json"
    if schema.exists():
        props = json.loads(schema.read_text())["properties"]
        assert {"const": "false", "title": "Never"} in props["fetchNews"]["oneOf"] and "checkForUpdates" in props
    assert jupyterlab.__version__


def test_pips_settings_become_uvs_options_and_the_command_line_index_wins():
    import importlib.util

    spec = importlib.util.spec_from_file_location("uv_install", ROOT / "scripts" / "uv_install.py")
    uv_install = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(uv_install)
    settings = {"index-url": "https://mirror.example/simple", "find-links": "/a /b", "no-index": "true",
                "constraint": "/c.txt", "default-timeout": "180", "cert": "/certs.pem", "pre": "0",
                "disable-pip-version-check": "1"}
    options, variables = uv_install.translated(settings, set())
    assert options == ["--index-url", "https://mirror.example/simple", "--find-links", "/a", "--find-links", "/b",
                       "--no-index", "--constraints", "/c.txt"]
    assert variables == {"UV_HTTP_TIMEOUT": "180", "SSL_CERT_FILE": "/certs.pem"}
    options, _ = uv_install.translated(settings, {"--index-url"})  # pip's command line over its configuration
    assert "--index-url" not in options and "--find-links" in options
    assert uv_install.translated({**settings, "user": "1"}, set()) == (None, "user")


# a pipe into a reader that stops at its first line or match; under pipefail the writer's SIGPIPE is the pipeline's
# status, so the test it guards fails now and then (setup.sh's `printf EXTRAS | grep -qx test` left timm out in one CI
# run, two writes apart). grep with its output to /dev/null reads everything (GNU grep 3.8, measured) and is allowed.
EARLY_EXIT = re.compile(r"\|\s*\{?\s*(head\b|grep\b[^|;&#]*\s-[a-zA-Z]*[qm])")


@pytest.mark.parametrize("script", sorted([*(ROOT / "scripts").glob("*.sh"), ROOT / ".ci" / "run"]),
                         ids=lambda path: path.name)
def test_no_pipefail_script_pipes_into_a_reader_that_stops_early(script):
    text = script.read_text()
    assert "pipefail" in text or script.name == "env.sh", f"{script.name}: every script sets pipefail"  # (sourced)
    code = [(number, line.split(" # ")[0]) for number, line in enumerate(text.splitlines(), 1)
            if not line.lstrip().startswith("#")]
    early = [f"{script.name}:{number}: {line.strip()}" for number, line in code if EARLY_EXIT.search(line)]
    assert not early, early


def test_the_early_exit_rule_matches_what_dies_of_sigpipe():
    # the rule's own test: the patterns it names end a writer that is still writing, the allowed one does not
    def status(reader):
        return subprocess.run(["bash", "-c", f"set -o pipefail; {{ echo GPU; sleep 0.2; echo x; }} | {reader}"],
                              capture_output=True).returncode
    for reader in ("grep -q GPU", "grep -m1 GPU", "head -1"):
        assert EARLY_EXIT.search(f"| {reader}") and status(reader) == 141, reader
    assert not EARLY_EXIT.search("| grep GPU >/dev/null") and status("grep GPU >/dev/null") == 0
