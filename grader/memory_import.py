"""Import the reference from the text the build has just rendered, never from the files an earlier build wrote.

`imported(texts)` serves `posenc_ref` and its generated modules from memory for the length of a `with` block:
only the generated modules are served, and `inspect.getsource` reads the served text (grader/mistakes.py rewrites
it). The modules that hold the reference (`posenc_ref*`, among them the mistakes written by hand, which
grader/course.py loads as posenc_ref.mistakes.chNN; grader/mistakes.py's derived mistakes) are imported afresh
inside the block, and whatever the process had imported before is put back after it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import linecache
import sys
from pathlib import Path

PACKAGE = "posenc_ref"
FOLDER = Path(__file__).resolve().parent.parent / PACKAGE
# modules that hold objects of the reference they were imported with: imported afresh inside the block
HOLDERS = ("grader.mistakes",)


class _Served(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A finder and loader of the modules in `texts` ({module name: source})."""

    def __init__(self, texts):
        self.texts = texts

    def find_spec(self, name, path=None, target=None):
        if name not in self.texts:
            return None
        spec = importlib.util.spec_from_loader(name, self, origin=self.filename(name), is_package=name == PACKAGE)
        spec.has_location = True
        return spec

    def filename(self, name):
        """Where the build writes the module: tracebacks and `inspect` name it, and read the served text."""
        return str(FOLDER / ("__init__.py" if name == PACKAGE else f"{name.split('.')[-1]}.py"))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        exec(compile(self.texts[name], self.filename(name), "exec"), module.__dict__)  # noqa: S102 (our own text)

    def get_source(self, name):
        return self.texts[name]


def _ours(name):
    return name == PACKAGE or name.startswith(PACKAGE + ".") or name in HOLDERS


@contextlib.contextmanager
def imported(texts):
    """The `posenc_ref` package built from `texts` ({module name: source}), importable as `posenc_ref` (and by
    its modules' names) inside the block."""
    served = _Served(texts)
    saved = {name: module for name, module in sys.modules.items() if _ours(name)}
    lines = {}
    for name, text in texts.items():  # `inspect` reads these lines, not the file on disk
        lines[served.filename(name)] = (len(text), None, text.splitlines(keepends=True), served.filename(name))
    kept = {filename: linecache.cache[filename] for filename in lines if filename in linecache.cache}
    for name in saved:
        del sys.modules[name]
    linecache.cache.update(lines)
    sys.meta_path.insert(0, served)
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.meta_path.remove(served)
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        for filename in lines:
            linecache.cache.pop(filename, None)
        linecache.cache.update(kept)
