"""The grader's shape: no import cycles between its modules (imports inside functions count too), and
every front end (command line, batch, Gradescope, pytest plugin) grades through grader.grading."""

import ast

from tests.conftest import ROOT

GRADER = ROOT / "grader"


def _module_name(path, root=ROOT):
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, root=ROOT):
    """Modules of the grader package that `path` imports, anywhere in it."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("grader")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("grader"):
                out.add(target)
                out |= {f"{target}.{a.name}" for a in node.names}
    return out


def graph(root=ROOT):
    modules = {_module_name(p, root): p for p in (root / "grader").rglob("*.py")
               if "checks" not in p.parts or p.name == "__init__.py"}
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


def test_a_cycle_is_found_when_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_every_front_end_grades_through_the_one_grading_path():
    edges = graph()
    assert "grader.grading" in edges["grader.remote"]  # the same path, run in a fork of the zygote
    for front in ("grader.cli", "grader.batch.worker", "grader.gradescope", "grader.pytest_plugin"):
        assert edges[front] & {"grader.grading", "grader.remote"}, front
    sandbox_users = {m for m, deps in edges.items() if "grader.sandbox.zygote" in deps}
    # nothing else talks to it (__main__ only closes it on the way out)
    assert sandbox_users <= {"grader.grading", "grader.remote", "grader.__main__"}, sandbox_users


# ---- the sandbox ----------------------------------------------------------------------------------------------
# What grader.sandbox may import of the grader outside itself: records and plain helpers that import nothing of
# the grader above them (the grades' records, control-character cleaning, reading a file without following links,
# the hidden probes' file names). Never remote, grading, checks or the reference: the caller passes what the
# sandbox needs (the trusted grader's entry point comes in its setup line: grader/sandbox/bootstrap.py).
SANDBOX_MAY_IMPORT = {"grader.records", "grader.escape", "grader.files", "grader.hidden_probes"}


def _upward(edges):
    """{sandbox module: what it imports of the grader outside grader.sandbox and not allowed}, where any."""
    found = {m: sorted(d for d in deps if not d.startswith("grader.sandbox") and d not in SANDBOX_MAY_IMPORT)
             for m, deps in edges.items() if m.startswith("grader.sandbox.")}
    return {m: d for m, d in found.items() if d}


def test_the_sandbox_imports_nothing_above_it_but_what_is_allowed():
    edges = graph()
    assert {"grader.sandbox.zygote", "grader.sandbox.server", "grader.sandbox.bootstrap"} <= set(edges)
    assert edges["grader.sandbox.zygote"] & SANDBOX_MAY_IMPORT  # the graph sees the sandbox's imports
    assert _upward(edges) == {}, _upward(edges)
    for allowed in SANDBOX_MAY_IMPORT:  # the allowed ones stay leaves: nothing of the grader above them either
        assert edges[allowed] <= SANDBOX_MAY_IMPORT | {"grader"}, (allowed, edges[allowed])


def test_an_upward_import_inside_a_function_breaks_the_rule(tmp_path):
    """The import the trusted grader's bootstrap once made (grader.remote, inside a function) is an edge, and
    the rule names it."""
    (tmp_path / "grader" / "sandbox").mkdir(parents=True)
    for name in ("grader/remote.py", "grader/records.py", "grader/sandbox/__init__.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "grader" / "sandbox" / "server.py").write_text("def trusted():\n    from grader import remote\n")
    (tmp_path / "grader" / "sandbox" / "session.py").write_text("from ..records import ExerciseRun\n")
    assert _upward(graph(tmp_path)) == {"grader.sandbox.server": ["grader.remote"]}


def _flat_imports(path, local):
    """The runtime files (names in `local`) that `path` imports as the zygote's flat folder resolves them:
    `import x`, `from x import y`, and the package form `from . import x` / `from .x import y` beside it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names = [(node.module or "").split(".")[0]]
            else:
                names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
        else:
            continue
        out |= {f"{n}.py" for n in names if f"{n}.py" in local}
    return out


def test_the_runtime_files_are_exactly_what_the_zygote_imports():
    """runtime.RUNTIME_FILES, listed by hand, against the closure of server.py's imports (and the hidden probe
    modules it imports by name): a file missing from the list would fail in the zygote, one too many is
    copied for nothing."""
    from grader import hidden_probes
    from grader.sandbox import runtime

    folders = (GRADER / "sandbox", ROOT / "posenc_selfcheck", GRADER / "hidden_probes")
    local = {p.name: p for folder in reversed(folders) for p in folder.glob("*.py") if p.name != "__init__.py"}
    todo = ["server.py"] + [f"{name}.py" for name in hidden_probes.MODULE_NAMES]
    needed = set()
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo += _flat_imports(local[name], local)
    listed = [p.name for p in runtime.RUNTIME_FILES]
    assert {"child.py", "probes.py", "store.py", "wire.py"} <= needed  # the closure is real
    assert sorted(listed) == sorted(needed), (set(listed) ^ needed)
    assert all(local[p.name] == p for p in runtime.RUNTIME_FILES)  # each from the folder it is imported from
