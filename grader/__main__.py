import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _torch_missing():
    """The one-line answer when this Python lacks torch (every command but --help needs it: the sandbox's zygote,
    the reference, the self-check data); None when torch is there."""
    if importlib.util.find_spec("torch") is not None or {"-h", "--help"} & set(sys.argv[1:]) or len(sys.argv) < 2:
        return None
    venv = ROOT / ".venv" / "bin" / "python"
    use = f"use {os.path.relpath(venv)}" if venv.exists() else "set up the course's environment: bash scripts/setup.sh"
    return f"torch is not installed for this Python ({sys.executable}): {use}"


if _torch_missing():
    print(f"python -m grader: {_torch_missing()}", file=sys.stderr)
    sys.exit(2)

from .cli import main  # noqa: E402

code = main()
# Everything is written (files atomically, with fsync): leave without tearing torch down module by
# module, which takes longer than the grading of a small notebook. The sandbox goes first.
from .sandbox.host import client  # noqa: E402

client.close_all()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code or 0)
