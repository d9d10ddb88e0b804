"""The learner's words inside a code cell, found by `ast` and `tokenize` and replaced span by span.

What a learner reads in a code cell, each a message of the chapter's catalog (grader/i18n_build.py):
  hint        a block of comment lines whose first says `# Hint` (the whole block, lines joined by newlines,
              each line without its `#` and indentation)
  docstring   the docstring of a function or class
  stub        the string of `raise NotImplementedError("...")`; the student notebook's stub (grader/render.py
              STUB) stands under every hint block, so a solution notebook's hint block names it too
  figure      a string literal passed to a plotting call (`set_title`, `xlabel`, `legend([...])`, `text`, ...)
              or as a `label=` keyword
  print       a string literal passed to `print(...)` in a demo cell
A string literal's message is its source between the quotes (escapes as written; an f-string's `{...}` fields
kept verbatim, a translation keeps them all). A literal without a letter outside its fields says nothing to
translate. Everything outside these spans is copied byte for byte.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from .render import STUB

PLOTTING = frozenset({"set_title", "title", "set_xlabel", "set_ylabel", "xlabel", "ylabel", "legend", "suptitle",
                      "text"})
DEMO = "demo"  # the cell tag of demo cells
_PREFIX = re.compile(r"^([a-zA-Z]*)('''|\"\"\"|'|\")")
_FIELD = re.compile(r"\{[^{}]*\}")  # an f-string's field, kept verbatim by a translation
_LETTER = re.compile(r"[^\W\d_]")
HINT = ("# hint", "# 提示")  # how a hint block opens, in English and in its translation


def fields(text):
    """The `{...}` fields of a message, sorted: a translation keeps them all."""
    return sorted(_FIELD.findall(text))


def _offsets(source):
    """Char offset of each line's start (1-based line numbers index it)."""
    starts, total = [0, 0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _char(source, starts, line, byte_col):
    """ast's (line, UTF-8 byte column) as a char offset into source."""
    text = source[starts[line]:starts[line + 1] if line + 1 < len(starts) else len(source)]
    return starts[line] + len(text.encode()[:byte_col].decode())


def _at(starts, position):
    """tokenize's (line, char column) as a char offset."""
    return starts[position[0]] + position[1]


def _literal(source, start, end):
    """(body start, body end) of a single string literal's source, or None (an implicit concatenation)."""
    text = source[start:end]
    head = _PREFIX.match(text)
    if not head or not text.endswith(head.group(2)) or len(text) < len(head.group(0)) + len(head.group(2)):
        return None
    quote = head.group(2)
    body = text[len(head.group(0)):len(text) - len(quote)]
    if quote in body.replace("\\" + quote[0], ""):  # "a" "b": two literals
        return None
    return start + len(head.group(0)), end - len(quote)


def _strings(node):
    """The string literal nodes among `node` and its list or tuple elements."""
    if isinstance(node, (ast.Constant, ast.JoinedStr)) and (not isinstance(node, ast.Constant)
                                                          or isinstance(node.value, str)):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def _called(node):
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)


def _literal_nodes(tree, demo):
    """[(kind, node)] of the string literals that carry learner text."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and _strings(first.value):
                out.append(("docstring", first.value))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                _called(node.exc) == "NotImplementedError":
            out += [("stub", s) for arg in node.exc.args for s in _strings(arg)]
        elif isinstance(node, ast.Call):
            name = _called(node)
            if name in PLOTTING:
                out += [("figure", s) for arg in node.args for s in _strings(arg)]
            if name == "print" and demo:
                out += [("print", s) for arg in node.args for s in _strings(arg)]
            out += [("figure", s) for k in node.keywords if k.arg == "label" for s in _strings(k.value)]
    return out


def _hints(source, starts):
    """[(start, end, prefix of a continuation line)] of each `# Hint` comment block."""
    comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    out, i = [], 0
    while i < len(comments):
        if not comments[i].string.lower().startswith(HINT):
            i += 1
            continue
        j = i
        while j + 1 < len(comments) and comments[j + 1].start[0] == comments[j].start[0] + 1 and \
                source[starts[comments[j + 1].start[0]]:_at(starts, comments[j + 1].start)].strip() == "":
            j += 1
        first, last = comments[i], comments[j]
        follow = comments[i + 1].string if j > i else "# "
        prefix = follow[:len(follow) - len(follow[1:].lstrip())]
        out.append((_at(starts, first.start), _at(starts, last.end), prefix))
        i = j + 1
    return out


def spans(source, demo=False):
    """[(start, end, kind, message, render)] of a code cell's learner text, in order: source[start:end] is
    replaced by render(translation). Raises SyntaxError for a cell that is not Python (a magic, say)."""
    starts = _offsets(source)
    out = []
    for start, end, prefix in _hints(source, starts):
        line_start = source.rfind("\n", 0, start) + 1
        indent = source[line_start:start]
        lines = [line.strip()[1:].strip() for line in source[start:end].split("\n")]

        def hint(text, indent=indent, prefix=prefix):
            return "\n".join(("# " if n == 0 else indent + prefix) + line for n, line in enumerate(text.split("\n")))

        out.append((start, end, "hint", "\n".join(lines), hint))
    for kind, node in _literal_nodes(ast.parse(source), demo):
        start = _char(source, starts, node.lineno, node.col_offset)
        body = _literal(source, start, _char(source, starts, node.end_lineno, node.end_col_offset))
        if body is None:
            continue
        text = source[body[0]:body[1]]
        if kind == "docstring":
            indent = " " * node.col_offset
            lines = text.split("\n")
            message = "\n".join([lines[0].strip()] + [line[len(indent):] if line.startswith(indent) else line.strip()
                                                      for line in lines[1:]])
            closing = "\n" + indent if message.endswith("\n") else ""
            message = message.rstrip("\n")

            def doc(text, indent=indent, closing=closing):
                return "\n".join(line if n == 0 or not line else indent + line
                                 for n, line in enumerate(text.split("\n"))) + closing
            out.append((body[0], body[1], kind, message, doc))
        elif _LETTER.search(_FIELD.sub("", text)):
            out.append((body[0], body[1], kind, text, str))
    return sorted(out, key=lambda s: s[0])


_STUB_MESSAGE = spans(STUB)[0][3]


def messages(source, demo=False):
    """[message] of a code cell, in order; a solution's hint block names the student's stub below it."""
    out = []
    for _, _, kind, message, _ in spans(source, demo):
        out.append(message)
        if kind == "hint" and _STUB_MESSAGE not in out:
            out.append(_STUB_MESSAGE)
    return out


def translate(source, translation, demo=False):
    """source with each span's message replaced by translation(message); byte-identical elsewhere."""
    out, at = [], 0
    for start, end, _, message, render in spans(source, demo):
        out += [source[at:start], render(translation(message))]
        at = end
    return "".join(out) + source[at:]


def set_aside(source, demo=False):
    """source with each span replaced by one marker: the code a translation must leave as it is."""
    return translate(source, lambda message: "\u2026", demo)
