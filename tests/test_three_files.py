"""Adding an exercise touches three hand-edited files (issue 26): its chapter (course/NN_name/chapter.py), its
declaration (exercises.py) and its catalog (zh_CN.po). One `python -m grader build` writes everything else, and
`build --check` passes at once.

In a copy of the repository (tests/test_build_steps.py's), the test adds docs/authoring.md's kind of exercise to
chapter 5, `rope_turns`: the text, the export cell with its solution and `# Hint`, the self-check cell; its
conventions line, a public check with its twin, a main check, a ladder; then, as an author does,
`python -m grader i18n --update` and the Chinese of every new message, one build and `build --check`.
"""

import json

from grader.i18n_build import read_catalog, write_catalog
from tests.test_build_steps import CONVENTIONS, GENERATED, _copy, _digests, _run

CHAPTER = "course/05_long_context"
THREE = {f"{CHAPTER}/chapter.py", f"{CHAPTER}/exercises.py", f"{CHAPTER}/zh_CN.po"}
AFTER = 'check("rope_wavelengths", rope_wavelengths)\n'  # the new exercise's cells follow this one
CELLS = '''
# %% [markdown]
# ### Exercise 5.1b — `rope_turns`
#
# `rope_turns(position, head_dim, base=10000.0)`
#
# Return how many full turns each pair has made at token `position`, $p\\,\\theta_i / 2\\pi$: a float32 tensor
# of $d/2$ numbers.

# %%
#| export
def rope_turns(position, head_dim, base=10000.0):
    """p theta_i / (2 pi), i = 0 .. d/2 - 1: the turns pair i has made at position p. Returns (head_dim/2,)
    float32."""
    ### BEGIN SOLUTION
    # Hint: the idea: pair i turns by theta_i radians per token, and a turn is 2 pi radians. Call chapter 4's
    #       frequencies inv_freq.
    #       Shapes: inv_freq (head_dim/2,), turns (head_dim/2,) float32
    # theta_i = 1 / base^(2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d/2,)
    # turns_i = p theta_i / (2 pi)
    return position * inv_freq / (2 * math.pi)  # (d/2,)
    ### END SOLUTION


# %% tags=["selfcheck"]
check("rope_turns", rope_turns)
'''
DECLARATION = '''
# ---- rope_turns -------------------------------------------------------------------------------------
ROPE_TURNS_CHECKS = [
    Check("rope_turns", "matches the reference at position 100, head_dim=8", "call", {"args": [100, 8]},
          public=True, id="matches_reference_position_100_head_dim_8", twin={"args": [draw_int(1, 4096), even(4, 64)]}),
]

ROPE_TURNS = Exercise(
    "rope_turns",
    convention="`(head_dim/2,)`: p·θ_i/2π, the turns pair i has made at position p, float32",
    checks=ROPE_TURNS_CHECKS,
    main=[unseen_like(find(ROPE_TURNS_CHECKS, "rope_turns", "matches_reference_position_100_head_dim_8"),
                      {"args": [draw_int(1, 4096), even(4, 128), base()]},
                      "matches the reference for a position, head_dim and base drawn for this submission",
                      id="main_turns")],
    hints=(
        "a pair turns by θ_i radians per token and a full turn is 2π radians: after p tokens it has made p·θ_i/2π "
        "turns.",
        "the frequencies first, as chapter 4 computes them: base to the power of the even indices "
        "`torch.arange(0, head_dim, 2, dtype=torch.float32)` divided by head_dim, inverted.",
        "a check of your numbers: pair 0 has θ_0 = 1, so at position 2π·k it has made k turns, whatever the base.",
        "key line: `return position * inv_freq / (2 * math.pi)`",
    ),
)

'''
EXERCISES_LINE = "EXERCISES = (ROPE_WAVELENGTHS, "  # the record goes in the tuple after the exercise it follows
NAME = "matches the reference at position 100, head_dim=8"  # the public check's, shipped to learners
MAIN = "matches the reference for a position, head_dim and base drawn for this submission"  # the grader's alone


def _add_exercise(repo):
    """The chapter's cells and the declaration, as an author writes them."""
    source = repo / CHAPTER / "chapter.py"
    text = source.read_text()
    assert text.count(AFTER) == 1
    source.write_text(text.replace(AFTER, AFTER + CELLS))
    declaration = repo / CHAPTER / "exercises.py"
    text = declaration.read_text()
    assert text.count(EXERCISES_LINE) == 1
    declaration.write_text(text.replace(EXERCISES_LINE, DECLARATION + EXERCISES_LINE + "ROPE_TURNS, "))


def _translate(catalog_path):
    """A translation for every message `i18n --update` left empty or fuzzy (a new message close to an old one gets
    the old translation, to check), as a translator fixes them: the English, marked (it keeps every formula, code
    span and placeholder, as a translation must); returns the messages translated."""
    catalog = read_catalog(catalog_path)
    new = [m for m in catalog if m.id and (m.fuzzy or not m.string)]
    for message in new:
        message.string = ("提示：" + message.id[len("Hint: "):] if message.id.startswith("Hint: ")
                          else "（译）" + message.id)
        message.flags.discard("fuzzy")
        message.previous_id = []
    write_catalog(catalog_path, catalog)
    return {(m.context or "", m.id) for m in new}


def _hand_edited(repo, changed):
    """The changed files that no build writes."""
    generated = {str(p.relative_to(repo)) for pattern in GENERATED for p in repo.glob(pattern)}
    generated |= {CONVENTIONS, "grader/checks/ids.lock.json"}  # tables between markers; the ledger of ids
    return {str(rel) for rel in changed} - generated


def test_an_exercise_is_three_hand_edited_files_and_one_build(tmp_path):
    repo = _copy(tmp_path / "repo")
    before = _digests(repo)
    _add_exercise(repo)
    update = _run(repo, "i18n", "--update")
    assert update.returncode == 1, update.stdout[-3000:] + update.stderr[-3000:]  # the new messages: untranslated
    translated = _translate(repo / CHAPTER / "zh_CN.po")
    # its paragraphs, its hint, its docstring, and its declaration's words, in the context of their keys
    assert {("rope_turns.matches_reference_position_100_head_dim_8", NAME), ("rope_turns.main_turns", MAIN),
            ("rope_turns", "key line: `return position * inv_freq / (2 * math.pi)`")} <= translated
    build = _run(repo, "build")
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    check = _run(repo, "build", "--check")
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    after = _digests(repo)
    changed = {rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel)}
    assert _hand_edited(repo, changed) == THREE
    # what the build wrote from them: the notebooks, the self-check's data and ladders, the compiled words
    assert {"notebooks/05_long_context.ipynb", "notebooks/zh/05_long_context.ipynb", "posenc_ref/ch05_long_context.py",
            "posenc_selfcheck/data/ch05.json", "posenc_selfcheck/data/hints.json",
            "posenc_selfcheck/data/i18n_zh_CN.json", "grader/data/i18n_zh_CN.json"} <= {str(rel) for rel in changed}
    shipped = json.loads((repo / "posenc_selfcheck/data/i18n_zh_CN.json").read_text())["messages"]
    grader = json.loads((repo / "grader/data/i18n_zh_CN.json").read_text())["messages"]
    key = "rope_turns.matches_reference_position_100_head_dim_8\x04" + NAME
    assert shipped[key] == "（译）" + NAME  # compiled from the chapter's catalog
    main = "rope_turns.main_turns\x04" + MAIN
    assert grader[main] == "（译）" + MAIN and main not in shipped  # a check that is not public: the grader's only
    assert "rope_turns" in json.loads((repo / "posenc_selfcheck/data/hints.json").read_text())["exercises"]
