"""The Chinese notebooks' code cells: the English code, byte for byte, apart from the learner's words
(grader/i18n_code.py), each of which the catalog translates into Chinese prose."""

from __future__ import annotations

import re

import nbformat
import pytest

from grader import course, i18n_build, i18n_code
from tests.conftest import ROOT

CHAPTERS = [c.stem for c in course.chapters()]
# two English words of three letters or more in a row, neither part of an identifier, a call or a path
_PROSE = re.compile(r"(?<![\w./'-])[A-Za-z]{3,}(?![\w(\[./'-])\s+[A-Za-z]{3,}(?![\w(\[./'-])")
_CODE_SPAN = re.compile(r"(`+).+?\1")


def _code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _demo(cell):
    return i18n_code.DEMO in cell.metadata.get("tags", [])


def english_prose(text):
    """The runs of English words left in a translation, outside code spans and `{...}` fields."""
    return _PROSE.findall(i18n_code._FIELD.sub(" ", _CODE_SPAN.sub(" ", text)))


def _code_messages(stem):
    nb = nbformat.read(ROOT / "solutions" / f"{stem}.ipynb", as_version=4)
    return [m for c in nb.cells if c.cell_type == "code" for m in i18n_code.messages(c.source, _demo(c))]


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_chinese_code_is_the_english_code_apart_from_its_words(stem, folder):
    catalog = i18n_build.read_catalog(i18n_build.catalog_path(stem))
    english = _code_cells(ROOT / folder / f"{stem}.ipynb")
    chinese = _code_cells(ROOT / folder / i18n_build.FOLDER / f"{stem}.ipynb")
    assert [c.id for c in chinese] == [c.id for c in english]
    for en, zh in zip(english, chinese):
        demo = _demo(en)
        assert i18n_code.set_aside(zh.source, demo) == i18n_build.with_cjk_font(i18n_code.set_aside(en.source, demo)), \
            f"{folder}/{stem}.ipynb, cell {en.id}: the code differs outside the translated words"
        found = [s[3] for s in i18n_code.spans(zh.source, demo)]
        assert found == [catalog[s[3]].string for s in i18n_code.spans(en.source, demo)], \
            f"{folder}/{stem}.ipynb, cell {en.id}: a word is not the catalog's translation"


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_word_of_the_code_cells_is_translated_into_chinese_prose(stem):
    catalog = i18n_build.read_catalog(i18n_build.catalog_path(stem))
    messages = _code_messages(stem)
    assert messages, f"{stem}: no hint, docstring or figure word found"
    for msgid in messages:
        message = catalog.get(msgid)
        assert message is not None and message.string and not message.fuzzy, f"{stem}: untranslated: {msgid[:60]!r}"
        assert i18n_code.fields(message.string) == i18n_code.fields(msgid), f"{stem}: fields changed: {msgid[:60]!r}"
        assert not english_prose(message.string), f"{stem}: English left in {message.string[:80]!r}"
        if msgid.startswith("Hint"):
            assert message.string.startswith("提示"), f"{stem}: a hint's translation opens with 提示: {msgid[:60]!r}"


def test_the_prose_detector_tells_prose_from_code():
    assert english_prose("提示：the idea 是")
    assert english_prose("最大误差 max error")
    assert not english_prose("形状：position_ids (L,)，`torch.arange` 与 cos kw_i，{err.max():.2e}")
    assert not english_prose("调用 F.interpolate(table.T[None], mode=\"linear\")，Shaw et al. (2018)")


SOURCE = '''def f(x):
    """Returns x.

    More words.
    """
    # Hint: the idea: add one.
    #       Shapes: x (B,)
    print(f"value {x:.2f}", sep=" ")
    ax.set_title("a title")  # not translated: a comment
    raise NotImplementedError("not done")
'''


def test_only_the_words_change_and_everything_else_is_kept():
    found = {s[2]: s[3] for s in i18n_code.spans(SOURCE, demo=True)}
    assert found == {"docstring": "Returns x.\n\nMore words.", "hint": "Hint: the idea: add one.\nShapes: x (B,)",
                     "print": "value {x:.2f}", "figure": "a title", "stub": "not done"}
    assert "print" not in {s[2] for s in i18n_code.spans(SOURCE, demo=False)}  # prints: only in demo cells
    out = i18n_code.translate(SOURCE, lambda m: "提示：两行\n第二行" if m.startswith("Hint") else "译文" + m[:0],
                              demo=True)
    assert out == SOURCE.replace('"""Returns x.\n\n    More words.\n    """', '"""译文\n    """') \
        .replace("# Hint: the idea: add one.\n    #       Shapes: x (B,)", "# 提示：两行\n    #       第二行") \
        .replace('f"value {x:.2f}"', 'f"译文"').replace('"a title"', '"译文"').replace('"not done"', '"译文"')
