"""Print the requirements of pyproject.toml, one a line: the dependencies plus the extras named.

    python scripts/requirements.py test notebook      # what scripts/setup.sh installs by default

pyproject.toml stays the one list (environment.yml mirrors it, tests/test_packaging.py checks that).
torch is left out with --without-torch: setup.sh installs it first, from the right index. With --only, the
extras' own requirements without the dependencies (setup.sh installs the timm extra that way, with --no-deps).
"""

import re
import sys
from pathlib import Path

try:
    import tomllib  # Python 3.11+
except ImportError:  # Python 3.10: the same parser, as vendored by pip (tomli)
    from pip._vendor import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def requirements(extras, without_torch=False, only=False):
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    unknown = sorted(set(extras) - set(project["optional-dependencies"]))
    if unknown:
        raise SystemExit(f"unknown extra {', '.join(unknown)}; known: {', '.join(project['optional-dependencies'])}")
    deps = [] if only else list(project["dependencies"])
    for extra in extras:
        deps += project["optional-dependencies"][extra]
    if without_torch:
        deps = [d for d in deps if re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0].lower() != "torch"]
    return deps


def main(argv):
    flags = {"--without-torch", "--only"}
    extras = [a for a in argv if a not in flags]
    print("\n".join(requirements(extras, "--without-torch" in argv, only="--only" in argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
