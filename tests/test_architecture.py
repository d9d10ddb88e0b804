"""The packages' shape: no import cycle in `grader`, `posenc_selfcheck` or `posenc_ref` (imports inside functions
count too), every front end (command line, batch, Gradescope, pytest plugin) grades through grader.grading, and
the nevers the docs state about imports:

- the reference (`posenc_ref`, its mistakes included) imports nothing of the grader or the self-check;
- the learner side (`posenc_selfcheck`, the lab and gridlab in it, and the chapters' notebooks) never imports the
  grader or the hidden reference (one named exception: `mine.course_reference`, below);
- probes, public and hidden, import only torch, the standard library and each other (docs/authoring.md: they run
  flat in the sandbox);
- the exported reference holds no demo code (docs/authoring.md): it imports torch and the standard library only.
"""

import ast
import json
import sys

from tests.conftest import ROOT

GRADER = ROOT / "grader"
PACKAGES = ("grader", "posenc_selfcheck", "posenc_ref")


def _course_modules(root):
    """{file: module name} of the chapters' parts that are imported (grader/course.py loads them under these)."""
    from grader import course

    return {chapter.path(part): course.MODULES[part].format(key=chapter.key)
            for chapter in course.chapters(root / "course") for part in course.MODULES if chapter.has(part)}


def _module_name(path, root=None):
    root = root or ROOT
    if path.is_relative_to(root / "course"):
        return _course_modules(root)[path]
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top(name):
    return name.split(".")[0]


def _imported(path, tree=None, root=None):
    """[(module, enclosing function or None)]: every import of `path`, relative ones resolved. `from pkg import x`
    names the submodule pkg.x when there is one (importing it is what the statement does), else pkg."""
    root = root or ROOT
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Import):
                out.extend((a.name, function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    is_module = (root / sub.replace(".", "/")).with_suffix(".py").is_file() or \
                        (root / sub.replace(".", "/") / "__init__.py").is_file() or \
                        sub in _course_modules(root).values()
                    out.append((sub if is_module else target, function))
            visit(child, inner)

    visit(tree or ast.parse(path.read_text()), None)
    return out


def _imports(path, root=None):
    """Modules of the three packages that `path` imports, anywhere in it."""
    return {m for m, _ in _imported(path, root=root) if _top(m) in PACKAGES}


def _files(package):
    """The package's files, and the chapters' parts imported under its name (grader.checks.chNN, say)."""
    return sorted(set((ROOT / package).rglob("*.py")) | {p for p, name in _course_modules(ROOT).items()
                                                        if _top(name) == package})


def graph(packages=("grader",), root=None):
    root = root or ROOT
    files = {p for package in packages for p in (root / package).rglob("*.py")}
    files |= {p for p, name in _course_modules(root).items() if _top(name) in packages}
    modules = {_module_name(p, root): p for p in sorted(files)}
    return {name: {m for m in _imports(path, root) if m in modules and m != name} for name, path in modules.items()}


def _cycle(edges):
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_grader_has_no_import_cycles():
    edges = graph()
    assert "grader.grading" in edges and edges["grader.cli"]  # the graph is real
    assert _cycle(edges) is None, " -> ".join(_cycle(edges))


def test_no_package_has_an_import_cycle():
    edges = graph(PACKAGES)
    # the graph is real: the edges that made the cycles issue 19 names are seen
    assert "posenc_selfcheck.chapter_probes" in edges["posenc_selfcheck.probes"]  # the chapters' list, generated
    assert "posenc_selfcheck.probes_ch04" in edges["posenc_selfcheck.chapter_probes"]
    assert "posenc_selfcheck.chapter_properties" in edges["posenc_selfcheck.properties"]
    assert "posenc_selfcheck.properties_ch03" in edges["posenc_selfcheck.chapter_properties"]
    assert "posenc_selfcheck.lab.plots" in edges["posenc_selfcheck.lab.experiments"]
    assert "posenc_ref.ch01_sinusoidal" in edges["posenc_ref.mistakes.ch01"]  # course/01_sinusoidal/mistakes.py
    assert "posenc_selfcheck.probes" in edges["grader.hidden_probes"]  # an import inside a function
    assert "grader.checks.mutation" in edges["grader.checks.ch04"]
    assert _cycle(edges) is None, " -> ".join(_cycle(edges))


def test_a_cycle_through_a_function_level_import_is_seen(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("pkg",))
    edges = graph(("pkg",))
    assert edges == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert _cycle(edges) == ["pkg.a", "pkg.b", "pkg.a"]


def test_a_cycle_is_found_when_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_every_front_end_grades_through_the_one_grading_path():
    edges = graph()
    assert "grader.grading" in edges["grader.remote"]  # the same path, run in a fork of the zygote
    for front in ("grader.cli", "grader.batch.worker", "grader.gradescope", "grader.pytest_plugin"):
        assert edges[front] & {"grader.grading", "grader.remote"}, front
    sandbox_users = {m for m, deps in edges.items() if "grader.sandbox.host.client" in deps}
    # nothing else talks to it (__main__ only closes it on the way out)
    assert sandbox_users <= {"grader.grading", "grader.remote", "grader.__main__"}, sandbox_users


# ---- the sandbox ----------------------------------------------------------------------------------------------
# Three folders named by where their code runs, on a base both sides share (grader/sandbox/*.py: the wire, the
# mode names, paths, processes, the sandbox's error):
# - host/: the grader's side (its client of the zygote, a submission's session, uid slots, temporary folders);
# - runtime/: what the zygote's interpreter runs, copied flat into its folder (the zygote, the session servers,
#   the child, the trusted grading process's start): it imports nothing of the grader's side;
# - confine/: the confinement mechanisms and the policy that picks them, standard library and ctypes only.
SANDBOX = "grader.sandbox"
BASE, HOST, RUNTIME, CONFINE = "base", f"{SANDBOX}.host", f"{SANDBOX}.runtime", f"{SANDBOX}.confine"
# What the sandbox's host side may import of the grader outside the sandbox: records and plain helpers that import
# nothing of the grader above them (the grades' records, the settings, whose limits the sandbox applies, reading a
# file without following links, the hidden probes' file names and the chapters' folders they are in). Never remote,
# grading, checks or the reference: the caller passes what the sandbox needs (the trusted grader's entry point comes
# in its setup line: grader/sandbox/runtime/bootstrap.py).
SANDBOX_MAY_IMPORT = {"grader.records", "grader.settings", "grader.files", "grader.hidden_probes", "grader.course"}
# {layer: the layers it may import}; the base imports the policy's records alone of confine/ (the wire carries them)
LAYERS = {BASE: {BASE, f"{CONFINE}.policy"}, CONFINE: {BASE, CONFINE}, RUNTIME: {BASE, CONFINE, RUNTIME},
          HOST: {BASE, CONFINE, HOST} | SANDBOX_MAY_IMPORT}
# the one module of the base that reads the grader's settings: the fixed ones both sides of the zygote share (in the
# zygote's folder, a copy written from them takes its place: host/runtime_files.py)
SETTINGS_READER = {f"{SANDBOX}.constants": {"grader.settings"}}
# the third-party packages a layer may import (runtime: the zygote loads torch and matplotlib once, before any
# fork; the child runs probes on torch and stores their results with safetensors)
THIRD_PARTY = {BASE: set(), CONFINE: set(), HOST: set(), RUNTIME: {"torch", "safetensors", "matplotlib"}}


def _layer(module):
    """The layer of a module of grader.sandbox (None outside it): BASE for the files at its root."""
    if not module.startswith(SANDBOX + "."):
        return None
    for layer in (HOST, RUNTIME, CONFINE):
        if module.startswith(layer + "."):
            return layer
    return BASE


def _allowed(layer, module):
    return any(module == a or module.startswith(a + ".") or a == _layer(module) for a in LAYERS[layer])


def _upward(edges):
    """{sandbox module: what it imports of the grader that its layer may not}, where any."""
    found = {m: sorted(d for d in deps if not _allowed(_layer(m), d) and d not in SETTINGS_READER.get(m, ()))
             for m, deps in edges.items() if _layer(m)}
    return {m: d for m, d in found.items() if d}


def test_the_sandbox_imports_nothing_above_it_but_what_is_allowed():
    edges = graph()
    assert {f"{HOST}.client", f"{RUNTIME}.zygote", f"{RUNTIME}.bootstrap", f"{CONFINE}.policy"} <= set(edges)
    assert edges[f"{HOST}.session"] & SANDBOX_MAY_IMPORT  # the graph sees the sandbox's imports
    assert f"{CONFINE}.kernel" in edges[f"{RUNTIME}.cleanup"] and f"{SANDBOX}.procs" in edges[f"{CONFINE}.cgroup"]
    assert _upward(edges) == {}, _upward(edges)
    for allowed in SANDBOX_MAY_IMPORT:  # the allowed ones stay leaves: nothing of the grader above them either
        above = {d for d in edges[allowed] if _layer(d) != BASE}
        assert above <= SANDBOX_MAY_IMPORT | {"grader"}, (allowed, above)
    # the settings take the mode names from the sandbox's base, never its policy
    assert {d for d in edges["grader.settings"] if _layer(d)} == {f"{SANDBOX}.modes"}


def test_each_sandbox_layer_imports_only_its_third_party_packages():
    """confine/, host/ and the base import the standard library alone (host/ starts the zygote before the grader
    loads torch); the runtime, torch and what the zygote preloads besides. A file imported flat in the zygote's
    folder imports the others by their bare names."""
    from grader.sandbox.host.runtime_files import RUNTIME_FILES

    flat = {name.removesuffix(".py") for name in RUNTIME_FILES}
    assert {"kernel", "wire", "probes"} <= flat
    for path in sorted((GRADER / "sandbox").rglob("*.py")):
        layer = _layer(_module_name(path))
        assert _foreign([path], STDLIB | {"grader"} | THIRD_PARTY[layer] | flat) == {}, path


def test_an_upward_import_inside_a_function_breaks_the_rule(tmp_path):
    """The import the trusted grader's bootstrap once made (grader.remote, inside a function) is an edge, and
    the rule names it; so is a runtime module reaching into the grader's side."""
    (tmp_path / "grader" / "sandbox" / "runtime").mkdir(parents=True)
    (tmp_path / "grader" / "sandbox" / "host").mkdir(parents=True)
    for name in ("grader/remote.py", "grader/records.py", "grader/sandbox/host/session.py"):
        (tmp_path / name).write_text("")
    runtime = tmp_path / "grader" / "sandbox" / "runtime"
    (runtime / "zygote.py").write_text("def trusted():\n    from grader import remote\n")
    (runtime / "child.py").write_text("from ..host import session\n")
    (tmp_path / "grader" / "sandbox" / "host" / "client.py").write_text("from ...records import ExerciseRun\n")
    assert _upward(graph(root=tmp_path)) == {f"{RUNTIME}.zygote": ["grader.remote"],
                                             f"{RUNTIME}.child": [f"{HOST}.session"]}


def _flat_imports(path, local):
    """The runtime files (`local`: {name: path}) that `path` imports as the zygote's flat folder resolves them:
    `import x`, `from x import y`, and the package form (`from . import x`, `from ..confine.kernel import y`),
    resolved to the file it names in the repository."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [(node.module or "").split(".")[0]]
        elif isinstance(node, ast.ImportFrom):
            base = path.parents[node.level - 1].joinpath(*(node.module or "").split(".") if node.module else [])
            names = [base.name] if base.with_suffix(".py").is_file() else [a.name for a in node.names]
        else:
            continue
        out |= {f"{n}.py" for n in names if f"{n}.py" in local}
    return out


def test_the_runtime_files_are_exactly_what_the_zygote_imports():
    """runtime_files.RUNTIME_FILES, listed by hand, against the closure of runtime/zygote.py's imports (and the
    hidden probe modules it imports by name): a file missing from the list would fail in the zygote, one too many
    is copied for nothing."""
    from grader import hidden_probes
    from grader.sandbox.host import runtime_files

    folders = (GRADER / "sandbox" / "runtime", GRADER / "sandbox" / "confine", GRADER / "sandbox",
               ROOT / "posenc_selfcheck")
    local = {p.name: p for folder in reversed(folders) for p in folder.glob("*.py") if p.name != "__init__.py"}
    local.update(hidden_probes.FILES)  # course/NN_name/hidden_probes.py, under the name the zygote imports
    todo = ["zygote.py"] + [f"{name}.py" for name in hidden_probes.MODULE_NAMES]
    needed = set()
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo += _flat_imports(local[name], local)
    listed = list(runtime_files.RUNTIME_FILES)
    assert {"child.py", "probes.py", "store.py", "wire.py", "kernel.py", "modes.py"} <= needed  # the closure is real
    assert sorted(listed) == sorted(needed), (set(listed) ^ needed)
    # each from the folder it is imported from
    assert all(local[name] == path for name, path in runtime_files.RUNTIME_FILES.items())


# ---- the nevers ---------------------------------------------------------------------------------------------
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def _foreign(paths, allowed):
    """{file: [(imported module, function)]} for every import of `paths` whose top level is not in `allowed`."""
    found = {}
    for path in paths:
        bad = [(m, f) for m, f in _imported(path) if _top(m) not in allowed]
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    return found


def test_the_reference_imports_nothing_of_the_grader_or_the_self_check():
    paths = _files("posenc_ref")
    assert any(p.name == "mistakes.py" for p in paths)  # course/NN_name/mistakes.py, loaded as posenc_ref.mistakes.*
    assert _foreign(paths, STDLIB | {"torch", "posenc_ref"}) == {}


# `load_exercises(..., fallback=True)` fills in a missing exercise from the reference when it runs inside the
# course's repository (docs/authoring.md, "Handing exercises to a later chapter"); the student release has no
# posenc_ref (grader/release.py), where the function returns None. It is the only way in, and it stays one.
REFERENCE_FALLBACK = ("posenc_selfcheck/mine.py", ("posenc_ref", "course_reference"))


def test_the_learner_side_never_imports_the_grader_or_the_reference():
    paths = _files("posenc_selfcheck")
    assert any(p.parent.name == "lab" for p in paths) and any(p.parent.name == "gridlab" for p in paths)
    found = {}
    for path in paths:
        bad = [(m, fn) for m, fn in _imported(path) if _top(m) in ("grader", "posenc_ref")]
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    path, allowed = REFERENCE_FALLBACK
    assert found.pop(path, None) == [allowed]
    assert found == {}


def _notebook_code(path):
    cells = json.loads(path.read_text())["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def test_the_notebooks_never_import_the_grader_or_the_reference():
    sources = sorted((ROOT / "course").glob("[0-9][0-9]_*/chapter.py"))
    notebooks = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    assert sources and len(notebooks) >= len(sources)
    for path in sources + notebooks:
        tree = ast.parse(_notebook_code(path) if path.suffix == ".ipynb" else path.read_text())
        imported = {_top(m) for m, _ in _imported(ROOT / "x.py", tree)}
        assert not imported & {"grader", "posenc_ref"}, path
        assert "posenc_selfcheck" in imported or path.name.startswith("00_"), path  # the scan reads imports


def test_probes_import_only_torch_the_standard_library_and_each_other():
    """...and messages.py (standard library only): a probe's problem or note is a message, sent as data; and
    dynamo_deferred.py (torch and the standard library), which the meta device's warm-up calls."""
    public = sorted([*(ROOT / "posenc_selfcheck").glob("probes*.py"), ROOT / "posenc_selfcheck" / "chapter_probes.py"])
    hidden = sorted((ROOT / "course").glob("[0-9][0-9]_*/hidden_probes.py"))
    assert len(public) >= 8 and hidden
    flat = {p.stem for p in public} | {"messages", "dynamo_deferred"}  # in the sandbox: each other's bare names
    assert _foreign([ROOT / "posenc_selfcheck" / "dynamo_deferred.py"], STDLIB | {"torch"}) == {}
    found = _foreign(public + hidden, STDLIB | {"torch"} | flat | {"posenc_selfcheck"})
    assert found == {}
    for path in public + hidden:
        inside = [m for m, _ in _imported(path) if _top(m) == "posenc_selfcheck"]
        assert all(m.rsplit(".", 1)[-1] in flat for m in inside), (path, inside)


def test_the_exported_reference_holds_no_demo_code():
    for path in sorted((ROOT / "posenc_ref").glob("ch[0-9][0-9]_*.py")):
        assert {_top(m) for m, _ in _imported(path)} <= STDLIB | {"torch"}, path


def test_a_forbidden_import_is_reported(tmp_path, monkeypatch):
    (tmp_path / "m.py").write_text("import torch\ndef f():\n    from grader import grading\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _foreign([tmp_path / "m.py"], STDLIB | {"torch"}) == {"m.py": [("grader", "f")]}
