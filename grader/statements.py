"""Statements of a solution, found and rewritten as source text: a hint's key line is one run of statements
of its exercise's solution, and a known mistake is that solution with some of them rewritten. Standard library
only (the build reads chapters with it, without torch or the reference)."""

from __future__ import annotations

import ast
import re

KEY = re.compile(r"`([^`]+)`")


def key_line(levels):
    """The code of a ladder's last level, `key line: `...``."""
    return KEY.findall(levels[-1])[-1]


def statement(tree, key):
    """The run of statements of `tree` whose code is `key` (one statement, or adjacent ones written `a; b`), with
    the chain of nodes around it (outermost first). Raises ValueError unless there is exactly one such run."""
    wanted = ast.parse(key).body
    want, kinds = [ast.unparse(s) for s in wanted], [type(s) for s in wanted]
    found = []

    def walk(node, chain):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i in range(len(block) - len(want) + 1):
                run = block[i: i + len(want)]
                # the kinds of statement first: unparsing every run of the solution is most of a build's search
                if [type(s) for s in run] == kinds and [ast.unparse(s) for s in run] == want:
                    module = ast.Module(body=run, type_ignores=[])
                    module.lineno, module.end_lineno = run[0].lineno, run[-1].end_lineno
                    found.append((module, chain + [node]))
        for child in ast.iter_child_nodes(node):
            walk(child, chain + [node])

    walk(tree, [])
    if len(found) != 1:
        raise ValueError(f"`{key}` is {len(found)} runs of statements of the solution, not one")
    return found[0]


def rewritten(source, edits):
    """`source` with each (statement node, its mistaken form: one or more lines) put in place of the node."""
    lines = source.splitlines()
    for node, mistaken in sorted(edits, key=lambda edit: edit[0].lineno, reverse=True):
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        lines[node.lineno - 1: node.end_lineno] = [indent + line for line in mistaken.splitlines()]
    return "\n".join(lines)
