"""tests/lazy_import.py: the files that compare with transformers import its models when a test runs, not when
pytest collects them (collection, in each pytest-xdist worker: 9.4 s -> 6.0 s)."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.lazy_import import Lazy

FILES = ["tests/test_ch04.py", "tests/test_ch05.py", "tests/test_ch08_transformers.py",
         "tests/test_ch09_transformers.py"]


def test_collecting_the_files_that_compare_with_transformers_imports_none_of_its_models():
    pytest.importorskip("transformers")
    script = ("import sys, pytest\n"
              f"code = pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', *{FILES!r}])\n"
              "print('COLLECTED', int(code), sorted(m for m in sys.modules if m.startswith('transformers.models.')"
              " and m.count('.') > 2))\n")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "COLLECTED 0 []" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


def test_a_lazy_name_is_the_object_once_used():
    import json

    dumps, module = Lazy("json", "dumps"), Lazy("json")
    assert dumps({"a": 1}) == json.dumps({"a": 1}) and module.loads("[2]") == [2]
    assert Lazy("os", "environ")["PATH"] == __import__("os").environ["PATH"]
    with pytest.raises(AttributeError):
        module._fixture_function_marker  # noqa: B018  what pytest asks at collection: no import, no attribute
