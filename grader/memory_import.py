"""Import the reference from the text the build has just rendered, never from the files an earlier build wrote.

`imported(texts)` serves `posenc_ref` and its generated modules from memory for the length of a `with` block:
only the generated modules are served, and `inspect.getsource` reads the served text (grader/mistakes.py rewrites
it). The modules that hold the reference (`posenc_ref*`, among them the mistakes written by hand, which
grader/course.py loads as posenc_ref.mistakes.chNN; grader/mistakes.py's derived mistakes) are imported afresh
inside the block, and whatever the process had imported before is put back after it.

`shipped(texts, folder)` serves the self-check's chapter modules the same way (posenc_selfcheck/probes_chNN.py and
the others grader/selfcheck_code.py plans): the build imports them from its plan, never from the files it wrote.
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


class _Shipped(_Served):
    """A finder and loader of some modules of a package that exists on disk (posenc_selfcheck's chapter modules):
    the package's other modules import from its folder as usual."""

    def __init__(self, texts, folder):
        super().__init__(texts)
        self.folder = Path(folder)

    def find_spec(self, name, path=None, target=None):
        if name not in self.texts:
            return None
        spec = importlib.util.spec_from_loader(name, self, origin=self.filename(name))
        spec.has_location = True
        return spec

    def filename(self, name):
        return str(self.folder / f"{name.rpartition('.')[2]}.py")


def _loaded_text(name, module):
    """The text an imported module was executed from: served, or its file's."""
    loader = getattr(module, "__loader__", None)
    if isinstance(loader, _Served):
        return loader.texts.get(name)
    try:
        return Path(module.__file__).read_text(encoding="utf-8")
    except (AttributeError, OSError, TypeError):
        return None


@contextlib.contextmanager
def shipped(texts, folder):
    """Modules of a package on disk (`texts`: {module name: source}, the build's plan of posenc_selfcheck's chapter
    modules) served from `texts` while the block imports them; they stay imported after it. A module of `texts`
    the process had imported already (a test process that imported the self-check) must hold the same text: a
    process whose imports came from other files than the plan's stops, since its answers would not be the plan's."""
    stale = sorted(name for name, text in texts.items()
                   if name in sys.modules and _loaded_text(name, sys.modules[name]) != text)
    if stale:
        raise SystemExit(f"this process imported {', '.join(stale)} from files that differ from course/ before the "
                         "build: run `python -m grader build` in a process of its own")
    finder = _Shipped(texts, folder)
    lines = {finder.filename(name): (len(text), None, text.splitlines(keepends=True), finder.filename(name))
             for name, text in texts.items()}
    linecache.cache.update(lines)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
