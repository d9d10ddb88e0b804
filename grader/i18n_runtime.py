"""The learner-visible strings the self-check prints, extracted mechanically for the translation catalogs.

Two kinds of message, both collected from what already exists (nothing is marked by hand):
- whole messages, from the data the self-check shows: every public check's name, hint and known-mistake
  messages (the build's self-check data) and every hint level (posenc_selfcheck/data/hints.json);
- templates, from the code that composes the report: every f-string (and string literal) that the modules in
  MODULES return, print or append, with each `{expression}` turned into a named placeholder, `{exercise}`,
  `{len_failed}`. posenc_selfcheck/i18n.py matches a shown line against the templates and translates the
  placeholders' values in turn (a check name inside a report line, a mistake inside a diagnosis).

The catalog is locale/zh_CN/LC_MESSAGES/runtime.po (grader/i18n_build.py); the build compiles it to
posenc_selfcheck/data/i18n_zh_CN.json, which the learner's kernel reads (no gettext or Babel needed there).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "posenc_selfcheck"
LINE_MODULES = ["runner.py", "demo.py"]  # their templates are whole report lines; the others' are parts of lines
MODULES = LINE_MODULES + ["evaluate.py", "compare.py", "properties.py", "properties_ch03.py",
           "properties_ch04.py", "properties_ch07.py", "properties_ch08.py"]
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_WORD = re.compile(r"[A-Za-z]{3,}|[:;(]")  # a template needs a word or a separator of its own


def _name(expr, taken):
    base = re.sub(r"\W+", "_", ast.unparse(expr)).strip("_").lower()[:30].strip("_") or "value"
    if not base[0].isalpha():
        base = "v_" + base
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _variants(node, taken):
    """The templates a string expression can produce: literals kept ({ and } doubled), every other expression
    a placeholder; `a + b` and `x if c else y` give one template per combination."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value.replace("{", "{{").replace("}", "}}")]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append([value.value.replace("{", "{{").replace("}", "}}")])
            else:
                parts.append(["{" + _name(value.value, taken) + "}"])
        return ["".join(p) for p in itertools.product(*parts)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _variants(node.left, taken), _variants(node.right, taken)
        return [a + b for a in left for b in right]
    if isinstance(node, ast.IfExp):
        return _variants(node.body, taken) + _variants(node.orelse, taken)
    return ["{" + _name(node, taken) + "}"]


def _stringy(node):
    """Whether an expression is built from string literals (an f-string, a literal, a sum or choice of them)."""
    if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _stringy(node.left) or _stringy(node.right)
    if isinstance(node, ast.IfExp):
        return _stringy(node.body) or _stringy(node.orelse)
    return False


# calls whose string arguments reach a learner (judge_verdicts: what a property test's wrong verdict lacks)
CALLS = ("print", "append", "SelfCheckFailed", "localize", "judge_verdicts")


def _shown(tree, calls=CALLS):
    """The string expressions of a module that reach a learner: returned (alone or in a tuple), printed,
    appended to a report (`calls`), module-level UPPER_CASE constants, and the literals inside their
    placeholders."""
    out, top = [], {id(node) for node in tree.body}
    for node in ast.walk(tree):
        values = []
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in calls:
            values = node.args
        elif isinstance(node, ast.List):  # lines = [f"{exercise}: {len(failed)} of {n} checks failed"]
            values = node.elts
        elif isinstance(node, ast.Assign) and id(node) not in top:  # message = "the same mistake as above"
            values = [node.value]
        elif isinstance(node, ast.Assign) and id(node) in top and all(
                isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        for value in values:
            if _stringy(value):
                out.append(value)
    # literals chosen inside a placeholder: f"{'the one check' if n == 1 else f'all {n} checks'}"
    for node in list(out):
        for inner in ast.walk(node):
            if isinstance(inner, ast.FormattedValue) and _stringy(inner.value):
                out.append(inner.value)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))  # in source order: the line's template first


def templates():
    """{template: module} of every template the report code can show, in source order (modules in MODULES'
    order): the order in which the self-check tries them."""
    found = {}
    for module in MODULES:
        tree = ast.parse((PACKAGE / module).read_text())
        for node in _shown(tree):
            for template in _variants(node, set()):
                literal = PLACEHOLDER.sub("", template)
                # a part of a line needs a word or a separator; a whole line may be "  {mark} {name}"
                if _WORD.search(literal) or (module in LINE_MODULES and literal.strip() == "" and " " in literal
                                             and len(PLACEHOLDER.findall(template)) > 1):
                    found.setdefault(template, f"posenc_selfcheck/{module}")
    return found


def committed():
    """The self-check data as committed (posenc_selfcheck/data/), in the form the build makes it: {"selfcheck":
    {chapter: results}, "ladders": hints.json's data}. The build passes its own, computed in memory."""
    data = PACKAGE / "data"
    return {"selfcheck": {path.stem: json.loads(path.read_text()) for path in sorted(data.glob("ch*.json"))},
            "ladders": json.loads((data / "hints.json").read_text(encoding="utf-8"))}


def data_messages(selfcheck, ladders):
    """{message: where} of the whole strings the self-check shows from data: `selfcheck` ({chapter: results})
    and `ladders` (hints.json's data)."""
    found = {}
    for chapter, results in sorted(selfcheck.items()):
        for key in sorted(results):
            value = results[key]
            if key.endswith("#spec"):
                about = (value.get("property_params") or {}).get("about")  # a property test's candidates
                about = list(about.values()) if isinstance(about, dict) else []
                for text in [value.get("name"), value.get("hint"), *value.get("mistake_messages", []), *about]:
                    if text:
                        found.setdefault(text, f"posenc_selfcheck/data/{chapter}.json")
    for levels in ladders["exercises"].values():
        for text in levels:
            found.setdefault(text, "posenc_selfcheck/data/hints.json")
    for mistake in ladders["mistakes"].values():
        for text in mistake["levels"]:
            found.setdefault(text, "posenc_selfcheck/data/hints.json")
    return found


def messages(shown=None):
    """[(msgid, where)]: the templates first, then the data's messages (`shown`: the self-check data as the build
    made it, by default the committed data)."""
    found = templates()
    return list(found.items()) + [(m, w) for m, w in data_messages(**(shown or committed())).items()
                                  if m not in found]


def compile_catalog(catalog):
    """The JSON the learner's kernel reads: {"messages": {english: translation}}, and the templates in the
    order to try them: "line_templates" (whole report lines) and "templates" (parts of lines)."""
    table = {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}
    found = templates()
    ordered = [t for t in found if t in table and PLACEHOLDER.search(t)]
    lines = [t for t in ordered if found[t].split("/")[-1] in LINE_MODULES]
    return json.dumps({"language": str(catalog.locale), "messages": table, "line_templates": lines,
                       "templates": [t for t in ordered if t not in lines]},
                      ensure_ascii=False, indent=0, sort_keys=True) + "\n"
