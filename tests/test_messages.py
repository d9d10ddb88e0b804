"""Every learner-visible word is a message (posenc_selfcheck/messages.py): an id with named parameters, rendered
once, where it is shown; nothing is parsed back from English (issue 26).

"English prose" (the definition the zero-English test uses): a run of two or more ASCII words of three letters or
more, separated by spaces only, left in a line once code spans (`…`), quoted text ('…': torch's own words, quoted
by a hint), identifiers (anything with `_`, a digit or a dot inside, a call `name(`, CamelCase), the names the
translations keep in English (NAMES: products and terms of the field) and what the learner's code produced
(verbatim parameters, set apart by the renderer's `mark`) are taken out.
"""

from __future__ import annotations

import ast
import glob
import re

import pytest

from posenc_selfcheck import messages
from posenc_selfcheck.messages import Catalog, msg, nmsg, render, verbatim
from tests.conftest import ROOT

CODE = re.compile(r"`[^`]*`|'[^'\n]*'")
# kept in English by the catalogs, as a Chinese ML engineer writes them (issue 27 reviews the choice)
NAMES = re.compile(r"Code Llama|Hugging Face|torch SDPA|dynamic NTK|NTK-aware base|class token|distillation token|"
                   r"rotary embedding|bicubic kernel|device-side assert")
IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*[_\d.][\w.]*|\w+\(|\b[A-Z][a-z]+[A-Z]\w*")
RUN = re.compile(r"\b[A-Za-z]{3,}(?:[ \t]+[A-Za-z]{3,}\b)+")
VERBATIM = "\x00"


def english_prose(line):
    """The runs of English prose in a rendered line whose verbatim text was replaced by VERBATIM."""
    return RUN.findall(IDENTIFIER.sub(" ", NAMES.sub(" ", CODE.sub(" ", line.replace(VERBATIM, " ")))))


def test_the_definition_finds_prose_and_spares_code_identifiers_and_numbers():
    assert english_prose("sinusoidal_table：8 项检查中有 6 项未通过") == []
    assert english_prose("形状应为 (2, 3)，实际是 `x.transpose(0, 1)` float32 d_model=8") == []
    assert english_prose("sinusoidal_table：all 19 checks通过") == []  # "all" alone is one word: not a run
    assert english_prose("matches the reference：通过") == ["matches the reference"]


def test_a_message_renders_its_template_and_its_translation():
    catalog = Catalog({"{exercise}: {failed} of {n} checks failed": "{exercise}：{n} 项检查中有 {failed} 项未通过",
                       "ctx\x04output": "输出（上下文）"}, "nplurals=1; plural=0;")
    line = msg("{exercise}: {failed} of {n} checks failed", exercise="t", failed=2, n=8)
    assert Catalog().render(line) == "t: 2 of 8 checks failed"
    assert catalog.render(line) == "t：8 项检查中有 2 项未通过"
    # a context is part of the key: the same English elsewhere is another entry
    assert catalog.render(msg("output", context="ctx")) == "输出（上下文）"
    assert catalog.render(msg("output")) == "output"
    # format specs are the template's
    assert Catalog().render(msg("error {error:.3g}", error=1 / 3)) == "error 0.333"
    # a nested message renders in the same language; JSON keeps it whole
    nested = msg("{problem}. Hint: {hint}", problem=line, hint=verbatim("x (y): z"))
    assert messages.from_json(messages.to_json(nested)) == nested
    assert Catalog().render(nested) == "t: 2 of 8 checks failed. Hint: x (y): z"


def test_plural_forms_follow_ngettext():
    english = Catalog()
    passed = [nmsg("{exercise}: the one check passed", "{exercise}: all {n} checks passed", n=n, exercise="t")
              for n in (1, 3)]
    assert [english.render(p) for p in passed] == ["t: the one check passed", "t: all 3 checks passed"]
    chinese = Catalog({"{exercise}: the one check passed": ["{exercise}：全部 {n} 项检查均已通过"]},
                      "nplurals=1; plural=0;")
    assert [chinese.render(p) for p in passed] == ["t：全部 1 项检查均已通过", "t：全部 3 项检查均已通过"]
    # a language with two forms picks by its own rule
    two = Catalog({"{exercise}: the one check passed": ["one {n}", "many {n}"]}, "nplurals=2; plural=(n != 1);")
    assert [two.render(p) for p in passed] == ["one 1", "many 3"]


def test_verbatim_text_is_never_changed():
    """A torch error with parentheses, colons and brackets, inside a translated diagnosis: exactly as raised."""
    error = ("RuntimeError: The size of tensor a (20) must match the size of tensor b (8) at non-singleton "
             "dimension 1: [1, 8] (got: 'x'). Hint: {n} {{")
    line = msg("{mistake} ({problem})", mistake=msg("the same mistake as above"),
               problem=msg("raised {error}", error=verbatim(error)))
    chinese = render(line, "zh_CN")
    assert error in chinese and "（" in chinese  # the grader's parenthesis in Chinese; the learner's as typed
    assert chinese.count(error) == 1 and render(line, "en") == f"the same mistake as above (raised {error})"


def test_columns_count_a_wide_character_twice():
    """Padding by screen columns (UAX #11): a CJK ideograph and fullwidth punctuation (W, F) take two, a combining
    mark none; so a Chinese name padded to 10 columns ends where an English one does."""
    from posenc_selfcheck.columns import pad, width

    assert [width(t) for t in ("ALiBi", "正弦", "相对偏置：", "e\u0301", "")] == [5, 4, 10, 1, 0]
    assert pad("正弦", 10) == "正弦" + " " * 6 and pad("ALiBi", 10, ">") == " " * 5 + "ALiBi"
    assert pad("可学习，位置表调整大小后", 10) == "可学习，位置表调整大小后"  # wider than the column: whole
    rows = [pad(name, 12, ">") + " 1.000" for name in ("正弦", "ALiBi", "可学习", "RoPE + YaRN")]
    assert len({width(row) for row in rows}) == 1


def test_no_template_pads_a_column_by_characters():
    """An alignment or a bare width in a template (`{scheme:>10}`, `{name:24}`) counts characters, not screen columns:
    a Chinese row would not line up. Tables pad with posenc_selfcheck.columns.pad instead."""
    from grader.i18n_runtime import PACKAGE, code_messages

    padded = re.compile(r"\{\w+:(?:.?[<>^]|\d+\})")
    templates = [t for (_, id_), _ in {**code_messages(PACKAGE), **code_messages(ROOT / "grader")}.items()
                 for t in (id_ if isinstance(id_, tuple) else (id_,))]
    assert len(templates) > 200 and padded.search("{setting:>34}: R²") and padded.search("{name:24}")
    assert [t for t in templates if padded.search(t)] == []


def _renamed(source):
    """The module with every local variable of every function renamed (its behaviour and its messages unchanged)."""
    tree = ast.parse(source)
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        local = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in local:
                node.id = f"renamed_{node.id}"
    return ast.unparse(tree)


@pytest.mark.parametrize("module", ["compare.py", "evaluate.py", "runner.py", "properties_ch03.py", "mine.py"])
def test_renaming_a_variable_changes_no_catalog_key(tmp_path, module):
    from grader.i18n_runtime import code_messages

    source = (ROOT / "posenc_selfcheck" / module).read_text()
    renamed = _renamed(source)
    assert renamed != ast.unparse(ast.parse(source))
    for folder, text in (("before", source), ("after", renamed)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / module).write_text(text)
    before, after = (set(code_messages(tmp_path / d, root=tmp_path / d)) for d in ("before", "after"))
    assert before and before == after


# ---- the test this issue owns: Chinese output carries no English prose ----------------------------------------
def _submissions():
    """(label, namespace) of every bundled and test submission, and of every known mistake's implementation."""
    from grader.mistakes import MISTAKES

    out = []
    files = sorted(glob.glob(str(ROOT / "examples" / "complete" / "*.py")))
    files += sorted(glob.glob(str(ROOT / "tests" / "submissions" / "**" / "*.py"), recursive=True))
    for path in files:
        namespace = {"__name__": "learner"}
        try:
            exec(compile(open(path).read(), path, "exec"), namespace)  # noqa: S102 (the course's own files)
        except Exception:  # noqa: BLE001  a submission that does not even load has no self-check to read
            continue
        out.append((path, namespace))
    out += [(f"mistake {name}", {known.exercise: known.impl}) for name, known in sorted(MISTAKES.items())]
    return out


def _code(namespace, name):
    """What `name` in `namespace` runs: the source of each function it is or holds (a class's methods), of every name
    of the namespace that code uses, transitively, and the values of the literals among them (a module by its name,
    anything else by its identity: never equal to another's). Two namespaces with equal codes run the same code for
    `name`, and the self-check, which draws nothing, says the same of both. None for a namespace no file made (a
    known mistake's implementation, made from the reference's source, which inspect would show instead)."""
    import inspect
    import textwrap

    if "__name__" not in namespace:
        return None
    literal = (int, float, complex, str, bytes, bool, type(None))
    parts, seen, todo = [], set(), [name]

    def function(label, fn):
        try:
            source = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError):  # not from a file
            parts.append((label, id(fn)))
            return
        parts.append((label, source))
        todo.extend(node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name))

    while todo:
        n = todo.pop()
        if n in seen or n not in namespace:
            continue
        seen.add(n)
        value = namespace[n]
        if inspect.isfunction(value):
            function(n, value)
        elif inspect.isclass(value) and value.__module__ == namespace.get("__name__"):
            parts.append((n, "class", tuple(b.__qualname__ for b in value.__bases__)))
            todo.extend(b.__name__ for b in value.__bases__)
            for attr, member in vars(value).items():
                member = getattr(member, "__func__", getattr(member, "fget", member))
                if inspect.isfunction(member):
                    function(f"{n}.{attr}", member)
                elif isinstance(member, literal) or attr.startswith("__"):
                    parts.append((f"{n}.{attr}", repr(member) if isinstance(member, literal) else attr))
                else:
                    parts.append((f"{n}.{attr}", id(member)))
        elif inspect.ismodule(value):
            parts.append((n, value.__name__))
        elif isinstance(value, literal) or (isinstance(value, tuple) and all(isinstance(v, literal) for v in value)):
            parts.append((n, repr(value)))
        else:
            parts.append((n, id(value)))
    return tuple(sorted(parts, key=repr))


def test_two_namespaces_share_a_code_only_where_they_run_the_same_code(tmp_path):
    """_code, by which the test below reads one run for equal code: a change in the exercise, in a helper it calls,
    in a method, a base class or a constant it reads tells them apart; another exercise's change, or where the
    code sits in its file, does not."""
    base = ("import torch\nSCALE = 2.0\n\ndef helper(x):\n    return x * SCALE\n\n"
            "class Base:\n    def norm(self, x):\n        return x\n\n"
            "class Model(Base):\n    size = 4\n    def forward(self, x):\n        return helper(self.norm(x))\n\n"
            "def exercise(x):\n    return helper(x) + 1\n\ndef other(x):\n    return x - 7\n")

    def namespace(text, n=[0]):  # noqa: B006  a fresh file each time
        n[0] += 1
        path = tmp_path / f"s{n[0]}.py"
        path.write_text(text)
        out = {"__name__": "learner"}
        exec(compile(text, str(path), "exec"), out)  # noqa: S102 (this test's own text)
        return out

    one = namespace(base)
    for name in ("exercise", "Model"):
        assert _code(one, name) == _code(namespace(base), name)
        assert _code(one, name) == _code(namespace("\n\n" + base.replace("x - 7", "x + 7")),
                                         name)  # elsewhere in the file; `other` changed
        assert _code(one, name) != _code(namespace(base.replace("x * SCALE", "x * SCALE * 2")), name)
        assert _code(one, name) != _code(namespace(base.replace("SCALE = 2.0", "SCALE = 3.0")), name)
    assert _code(one, "exercise") != _code(namespace(base.replace("helper(x) + 1", "helper(x) - 1")), "exercise")
    assert _code(one, "Model") != _code(namespace(base.replace("return x\n\nclass Model", "return -x\n\nclass Model")),
                                        "Model")
    assert _code(one, "Model") != _code(namespace(base.replace("size = 4", "size = 5")), "Model")
    assert _code({"exercise": one["exercise"]}, "exercise") is None  # no file made it


def test_the_self_checks_chinese_carries_no_english_prose(capsys):
    """Every bundled and test submission, and every known mistake, through the self-check in zh_CN (the report
    as runner.check raises or prints it, its verbatim parts set apart): no line carries English prose. An
    exercise whose code (with everything it uses) another submission already ran is read from that run: many
    test submissions differ from each other in one exercise only."""
    from posenc_selfcheck import runner

    chinese = messages.catalog("zh_CN")
    exercises, lines, prose, rendered = set(runner._index()), 0, [], {}
    with runner.one_thread():
        for label, namespace in _submissions():
            for exercise in sorted(set(namespace) & exercises):
                code = (exercise, _code(namespace, exercise) or label)
                if code not in rendered:
                    runner.forget_attempts()
                    obj = namespace[exercise]
                    try:
                        results = runner.run_checks(exercise, obj)
                        said, failure = runner.report(exercise, obj, results, 0.001)
                    except Exception:  # noqa: BLE001  a submission that breaks the self-check is another test's
                        said, failure = [], []
                    rendered[code] = [row for line in said or failure
                                      for row in chinese.render(line, mark=lambda _: VERBATIM).split("\n")]
                for row in rendered[code]:
                    lines += 1
                    if english_prose(row):
                        prose.append(f"{label} {exercise}: {english_prose(row)} | {row[:200]}")
    runner.forget_attempts()
    with capsys.disabled():
        print(f"\nself-check in zh_CN: {len(prose)} of {lines} lines carry English prose")
    assert lines > 800
    assert prose == [], "\n".join(prose[:40])
