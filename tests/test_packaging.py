"""Set-up files agree with each other and with the README."""

import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib  # Python 3.11+
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib

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


def test_setup_installs_what_pyproject_lists():
    """scripts/requirements.py (what setup.sh installs) against pyproject.toml read here on its own."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    out = subprocess.run([sys.executable, "scripts/requirements.py", "--without-torch", "test", "notebook"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    expected = project["dependencies"] + project["optional-dependencies"]["test"] + \
        project["optional-dependencies"]["notebook"]
    assert out == [d for d in expected if not d.startswith("torch")]
    bad = subprocess.run([sys.executable, "scripts/requirements.py", "tset"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode != 0 and "unknown extra tset" in bad.stderr


def test_one_python_version_is_stated_everywhere():
    statement = "Python 3.10 or newer"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["requires-python"] == ">=3.10"
    assert project["tool"]["ruff"]["target-version"] == "py310"
    assert "- python>=3.10" in [line.strip() for line in (ROOT / "environment.yml").read_text().splitlines()]
    from grader.release import README

    texts = {doc: (ROOT / doc).read_text() for doc in ("README.md", "docs/instructor.md", "docs/authoring.md",
                                                      "docs/conventions.md")}
    texts["the release's README"] = README
    for doc, text in texts.items():  # any other version named is a fact about Gradescope's Ubuntu images
        for paragraph in text.split("\n\n"):
            for m in re.finditer(r"Python (?:≥ ?)?3\.\d+", paragraph):
                assert paragraph[m.start():].startswith(statement) or "Ubuntu" in paragraph, (doc, paragraph)
    for doc in ("README.md", "docs/instructor.md", "the release's README"):
        assert statement in texts[doc], doc
    assert 'MIN_PYTHON="3.10"' in (ROOT / "scripts" / "env.sh").read_text()


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


def test_readme_opens_the_course_with_one_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Open the course.*?\n(.*?)\n## ", readme, re.S).group(1)
    commands = [c.strip() for cmd in re.findall(r"```(?:bash|sh)\n(.*?)```", block, re.S)
                for c in cmd.strip().splitlines() if c.strip()]
    assert commands == ["bash scripts/lab.sh"]
    assert (ROOT / "scripts" / "lab.sh").exists()


def test_ruff_passes_on_code_and_notebooks():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]


def test_reading_a_notebook_compiles_no_iri_grammars():
    """pyproject.toml keeps jsonschema below 4.25, whose format checkers import rfc3987-syntax (about 35 Lark
    grammars compiled on every import: 1.1 s of each process that reads a notebook or starts a Jupyter server).
    The environment set up from it must not load that module with nbformat."""
    loaded = subprocess.run([sys.executable, "-c", "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "False"
