"""Candidate functions (the RoPE variants a learner's property test is asked to judge) made anonymous
inside the sandbox.

A learner's test receives each candidate as a function; if its name, docstring, comments or place in
the file said "broken", the test could answer from that instead of from mathematics. So the probe
files copied into the sandbox's runtime folder are rewritten: every function decorated `@candidate`
gets a name made of a keyed hash (the key is this grader process's secret, so the names differ from
run to run and say nothing), every docstring and comment goes, and the candidates are written in a
shuffled order (so line numbers say nothing either). The grader maps names to and from these
anonymous names on the way in (probe parameters) and out (result keys).
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import random

DECORATOR = "candidate"


def candidate_names(source):
    """Names of the functions decorated @candidate in a module's source."""
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id == DECORATOR for d in node.decorator_list)]


def anonymous_names(names, secret):
    return {name: "c" + hmac.new(secret, name.encode(), hashlib.sha256).hexdigest()[:12] for name in names}


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.name = self.mapping.get(node.name, node.name)
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            node.body = node.body[1:] or [ast.Pass()]  # the docstring
        return node

    def visit_Name(self, node):
        node.id = self.mapping.get(node.id, node.id)
        return node


def rewrite(source, mapping, secret):
    """The module without docstrings or comments, its candidates renamed by `mapping` and shuffled."""
    tree = _Rename(mapping).visit(ast.parse(source))
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module's docstring
    candidates = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in mapping.values()]
    rest = [n for n in body if n not in candidates]
    random.Random(secret).shuffle(candidates)
    tree.body = rest + candidates  # functions are defined before any is called: the order is free
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def rename_params(value, mapping):
    """Probe parameters with every candidate name replaced by its anonymous name."""
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [rename_params(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: rename_params(v, mapping) for k, v in value.items()}
    return value


def restore_keys(result, mapping):
    """A probe result with anonymous names in its keys ('<name>' or '<name>:<what>') given back."""
    back = {anon: name for name, anon in mapping.items()}
    out = {}
    for key, value in result.items():
        head, sep, tail = key.partition(":")
        out[back.get(head, head) + sep + tail] = value
    return out
