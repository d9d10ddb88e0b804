"""The grader's shape: no import cycles between its modules (imports inside functions count too), and
every front end (command line, batch, Gradescope, pytest plugin) grades through grader.grading."""

import ast

from tests.conftest import ROOT

GRADER = ROOT / "grader"


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """Modules of the grader package that `path` imports, anywhere in it."""
    name = _module_name(path)
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


def graph():
    modules = {_module_name(p): p for p in GRADER.rglob("*.py") if "checks" not in p.parts or p.name == "__init__.py"}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


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
