"""Set-up files agree with each other and with the README."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_deps():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        deps += extra
    return deps


def _environment_deps():
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    return [line.strip()[2:] for line in lines[start + 1:] if line.strip().startswith("- ")]


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    assert sorted(_environment_deps()) == sorted(_pyproject_deps())


def test_pyproject_accepts_a_range_of_torch_releases_including_2_13():
    (torch_req,) = [d for d in _pyproject_deps() if re.match(r"torch\b", d)]
    assert ">=" in torch_req and "==" not in torch_req
    low = re.search(r">=\s*([\d.]+)", torch_req).group(1)
    assert tuple(map(int, low.split("."))) <= (2, 13)


def test_setup_installs_torch_2_13_only_where_none_is_installed():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    guard = setup.index('if ! "$PY" -c "import torch"')
    assert setup.index("torch==2.13.0") > guard
    assert setup.index("torch==2.13.0") < setup.index("-r \"$REQ\"")


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Set up\n(.*?)\n## ", readme, re.S).group(1)
    commands = [line for line in re.findall(r"```(?:bash|sh)?\n(.*?)```", block, re.S)]
    lines = [c.strip() for cmd in commands for c in cmd.strip().splitlines() if c.strip()]
    assert len(lines) == 2, lines
    example, test = lines
    assert "example" in example and "test" in test
    ci = (ROOT / ".ci" / "run").read_text()
    assert test in ci


def test_ruff_passes_on_code_and_notebooks():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
