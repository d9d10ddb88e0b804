"""Hints that teach: every exercise has progressive levels revealed by repeated failures, ending in a key
line of the solution; no hint anywhere holds code that is wrong when copied; a failure's diagnosis
points at its real cause."""

import ast
import importlib
import inspect
import re

import pytest
import torch

import posenc_ref
from grader import authoring
from grader.checks import all_checks, exercises
from grader.mistakes import MISTAKES
from grader.mistakes import edits as mistake_edits
from grader.spec import Mistake
from grader.statements import rewritten, statement
from posenc_selfcheck import SelfCheckFailed, check, forget_attempts
from posenc_selfcheck.hints import HINTS, MISTAKE_HINTS
from tests.conftest import ROOT

CODE = authoring.KEY


def _code(line):
    """A line of code without its comment, whitespace collapsed."""
    return " ".join(line.split("  #")[0].split()) if not line.strip().startswith("#") else ""


def every_hint_text():
    """(where, text) of every hint a learner can read: levels (the exercises' and the mistakes'), check hints,
    mistake messages, stub blocks."""
    for exercise, levels in HINTS.items():
        for n, text in enumerate(levels, start=1):
            yield f"{exercise} level {n}", text
    for name, entry in MISTAKE_HINTS.items():
        for n, text in enumerate(entry["levels"], start=1):
            yield f"{name} level {n}", text
    for c in all_checks():
        if c.hint:
            yield c.key, c.hint
    for name, m in MISTAKES.items():
        yield name, m.message
    for chapter in sorted((ROOT / "course").glob("[0-9][0-9]_*/chapter.py")):
        block = []
        for line in chapter.read_text().splitlines() + [""]:
            if line.strip().startswith("# Hint") or (block and line.strip().startswith("#")):
                block.append(line.strip().lstrip("#").strip())
            elif block:
                yield chapter.name, " ".join(block)
                block = []


def test_every_exercise_has_at_least_three_levels_ending_in_a_key_line_of_its_solution():
    assert set(HINTS) == set(exercises())
    for exercise, levels in HINTS.items():
        assert len(levels) >= 3, exercise
        assert levels[-1].startswith("key line: `"), exercise
        assert not any("key line" in level for level in levels[:-1]), exercise
        key = _code(CODE.findall(levels[-1])[-1])
        source = " ".join(_code(line) for line in inspect.getsource(getattr(posenc_ref, exercise)).splitlines())
        assert key in source, (exercise, key)


def test_every_hint_a_learner_reads_holds_only_code_that_is_right_when_copied():
    """The build's rules (grader/authoring.py), over every text: backticked spans parse; no float mask; no
    typographic minus in a method call."""
    assert [p for where, text in every_hint_text() for p in authoring.text_problems(where, text)] == []


@pytest.mark.parametrize("text, words", [
    ("mask it with `torch.ones(L, K).tril(K - L)`", "a mask built as a float tensor"),
    ("`x.tril(K \u2212 L)`", "is not Python"),
    ("call x.tril(K \u2212 L) on it", "a typographic minus"),
    ("`scores = = 1`", "is not Python"),
])
def test_the_rules_catch_code_that_is_wrong_when_copied(text, words):
    assert any(words in p for p in authoring.text_problems("here", text))
    assert not authoring.FLOAT_MASK.search("torch.ones(L, K, dtype=torch.bool).tril(K - L)")


def test_a_boolean_mask_from_a_hint_masks_where_a_float_one_does_not():
    """Why the rule: SDPA adds a float mask (ones and zeros) to the scores and masks nothing."""
    q = torch.randn(1, 1, 3, 4, generator=torch.Generator().manual_seed(0))
    k, v = torch.randn(2, 1, 1, 5, 4, generator=torch.Generator().manual_seed(1))
    allowed = torch.ones(3, 5, dtype=torch.bool).tril(5 - 3)
    by_hand = ((q @ k.transpose(-1, -2) / 2).masked_fill(~allowed, float("-inf")).softmax(-1)) @ v
    sdpa = torch.nn.functional.scaled_dot_product_attention
    torch.testing.assert_close(sdpa(q, k, v, attn_mask=allowed), by_hand)
    assert not torch.allclose(sdpa(q, k, v, attn_mask=torch.ones(3, 5).tril(5 - 3)), by_hand)


def test_each_new_failing_attempt_reveals_the_next_level_and_the_same_code_does_not(capsys):
    forget_attempts("sinusoidal_table")
    levels = HINTS["sinusoidal_table"]
    attempts = [eval(f"lambda s, d, base=10000.0: posenc_ref.sinusoidal_table(s, d, base) + {n}",  # noqa: S307
                     {"posenc_ref": posenc_ref}) for n in range(1, len(levels) + 2)]
    shown = []
    for n, attempt in enumerate(attempts):
        with pytest.raises(SelfCheckFailed) as info:
            check("sinusoidal_table", attempt)
        report = str(info.value)
        level = min(n + 1, len(levels))
        assert f"Hint {level} of {len(levels)}: {levels[level - 1]}" in report
        shown.append(level)
        if n == 0:  # the same code again: the same level
            with pytest.raises(SelfCheckFailed) as again:
                check("sinusoidal_table", attempt)
            assert f"Hint 1 of {len(levels)}" in str(again.value)
    assert shown == list(range(1, len(levels) + 1)) + [len(levels)]
    assert "That was the last hint" in report
    forget_attempts("sinusoidal_table")


def test_a_validation_failure_gets_its_own_diagnosis_and_no_level(capsys):
    forget_attempts("sinusoidal_table")

    def sinusoidal_table(seq_len, d_model, base=10000.0):  # right numbers, no check of seq_len
        if d_model <= 0 or d_model % 2:
            raise ValueError(f"d_model={d_model} must be even")
        return posenc_ref.sinusoidal_table(max(seq_len, 1), d_model, base)[:seq_len]

    with pytest.raises(SelfCheckFailed) as info:
        check("sinusoidal_table", sinusoidal_table)
    assert "seq_len=0 raises ValueError naming it: expected ValueError, but nothing was raised" in str(info.value)
    assert "Hint 1" not in str(info.value)


def test_a_broken_rotate_half_is_blamed_not_the_head_axis():
    forget_attempts("apply_rope")
    namespace = {"torch": torch}
    exec(  # noqa: S102 — a learner's cell: apply_rope is right, the rotate_half it calls is not
        "def rotate_half(x):\n"
        "    half = x.shape[-1] // 2\n"
        "    return torch.cat((x[..., half:], x[..., :half]), dim=-1)\n"
        "def apply_rope(x, cos, sin):\n"
        "    r = cos.shape[-1]\n"
        "    if r % 2 or r > x.shape[-1]:\n"
        "        raise ValueError(f'R={r}')\n"
        "    if cos.dim() == 3:\n"
        "        cos, sin = cos[:, None], sin[:, None]\n"
        "    cos, sin = cos.to(x.dtype), sin.to(x.dtype)\n"
        "    xr = x[..., :r]\n"
        "    return torch.cat((xr * cos + rotate_half(xr) * sin, x[..., r:]), dim=-1)\n", namespace)
    with pytest.raises(SelfCheckFailed) as info:
        check("apply_rope", namespace["apply_rope"])
    report = str(info.value)
    assert "apply_rope calls your rotate_half, which does not pass its own self-check yet" in report
    assert MISTAKES["apply_rotate_half_no_minus"].message in report
    assert "head axis" not in report.split("Hint 1 of")[0]  # no check blames the broadcasting
    forget_attempts("apply_rope")


def test_a_flipped_causal_mask_is_not_blamed_on_query_alignment():
    forget_attempts("shaw_attention")
    with pytest.raises(SelfCheckFailed) as info:
        check("shaw_attention", MISTAKES["shaw_causal_flipped"].impl)
    report = str(info.value)
    assert "the causal mask points the wrong way" in report
    assert "query i sits at position" not in report
    forget_attempts("shaw_attention")


def test_an_exercise_waiting_for_an_unfinished_one_says_which(capsys):
    namespace = {"torch": torch, "rope_cos_sin": posenc_ref.rope_cos_sin}
    exec("def apply_rope(x, cos, sin):\n    raise NotImplementedError('exercise not finished')\n", namespace)  # noqa: S102

    class RoPEAttention(posenc_ref.RoPEAttention):
        def forward(self, x, position_ids=None, causal=True, kv_cache=None):
            return namespace["apply_rope"](x, None, None)

    check("RoPEAttention", RoPEAttention)
    assert "RoPEAttention: waiting for apply_rope, which is not finished yet" in capsys.readouterr().out


def test_in_jupyter_a_failed_self_check_shows_its_report_without_a_traceback():
    forget_attempts("rotate_half")
    with pytest.raises(SelfCheckFailed) as info:
        check("rotate_half", MISTAKES["rotate_half_sign"].impl)
    rendered = info.value._render_traceback_()
    assert rendered == str(info.value).splitlines()
    assert rendered[0].startswith("rotate_half: ") and rendered[0].endswith("checks failed")
    assert not any("Traceback" in line or "posenc_selfcheck" in line for line in rendered)
    forget_attempts("rotate_half")


# ---- ladders keyed to the diagnosis -----------------------------------------------------------------------
def _ladders():
    """(name, levels) of every ladder: the exercises' and the named mistakes'."""
    yield from HINTS.items()
    yield from ((name, entry["levels"]) for name, entry in MISTAKE_HINTS.items())


def _solution_lines(exercise):
    source = inspect.getsource(getattr(posenc_ref, exercise))
    return [c for c in (_code(line) for line in source.splitlines()) if len(c) >= 12 and not c.startswith(('"', "'"))]


def test_level_one_never_holds_code():
    for name, levels in _ladders():
        exercise = MISTAKES[name].exercise if name in MISTAKES else name
        assert "`" not in levels[0], f"{name}: level 1 is the idea, without code"
        flat = " ".join(levels[0].split())
        assert not [line for line in _solution_lines(exercise) if line in flat], name


def test_every_mistake_ladder_is_idea_then_where_then_its_key_line():
    assert set(MISTAKE_HINTS) <= set(MISTAKES)
    for name, entry in MISTAKE_HINTS.items():
        levels = entry["levels"]
        assert len(levels) == 3 and levels[-1].startswith("key line: `"), name
        assert not any("key line" in level for level in levels[:-1]), name
        assert set(entry) <= {"levels", "wrong", "also"}, name
        ast.parse(entry["wrong"])
        for other, mistaken in entry.get("also", {}).items():
            ast.parse(other), ast.parse(mistaken)


def test_a_key_of_several_statements_is_one_run_of_consecutive_statements():
    tree = ast.parse("def f(x):\n    a = 1\n    b = 2\n    if x:\n        c = 3\n    return a + b\n")
    run, chain = statement(tree, "a = 1; b = 2")
    assert (run.lineno, run.end_lineno) == (2, 3) and isinstance(chain[-1], ast.FunctionDef)
    for apart in ("a = 1; return a + b", "b = 2; c = 3", "b = 2; a = 1"):  # not adjacent, or not in order
        with pytest.raises(ValueError):
            statement(tree, apart)


def _in_context(name, exercise, levels):
    """The key line is one statement of the solution, and every condition it sits under and every local name it
    uses is named by the stub's hint or an earlier level (the build's rule, grader/authoring.py, here on the
    reference module's source): pasted into the stub, it runs. Returns (source, the statement)."""
    key = CODE.findall(levels[-1])[-1]
    source = inspect.getsource(getattr(posenc_ref, exercise))
    run, chain = statement(ast.parse(source), key)
    assert authoring._context_problems(name, levels, source, key, chain) == []
    return source, run


@pytest.mark.parametrize("exercise", sorted(HINTS))
def test_an_exercise_key_line_runs_where_a_learner_pastes_it(exercise):
    _in_context(exercise, exercise, HINTS[exercise])


def _report(name, exercise, module, source):
    """The self-check's report on `source` (the exercise's solution rewritten), "" when every check passes."""
    namespace = dict(vars(importlib.import_module(module)))
    exec(compile(source, f"<{name}: wrong>", "exec"), namespace)  # noqa: S102
    forget_attempts(exercise)
    try:
        check(exercise, namespace[exercise], quiet=True)
    except SelfCheckFailed as failed:
        return str(failed)
    finally:
        forget_attempts(exercise)
    return ""


@pytest.mark.parametrize("name", sorted(MISTAKE_HINTS))
def test_a_key_line_runs_where_it_stands_and_fixes_its_mistake(name):
    """Pasted into the stub it runs (above), and the solution with that statement written the mistaken way
    ("wrong") is diagnosed as this very mistake by the self-check: the key line is that mistake's fix.

    A mistake that no single statement makes (a sign on two entries, masking moved past the softmax, the rotation
    moved after the cache) also rewrites the other statements it touches ("also": {statement of the solution: its
    mistaken form}, one or more lines), each found exactly once in the solution, none of them the key line. Then
    neither part alone is this mistake: the key line's rewrite alone falls short of it (or "also" would not be
    needed), and the others alone, the key line as it stands, are not it either (the key line is still a fix)."""
    entry, mistake = MISTAKE_HINTS[name], MISTAKES[name]
    obj = getattr(posenc_ref, mistake.exercise)
    source, _ = _in_context(name, mistake.exercise, entry["levels"])
    # the key line written `wrong`, then `also`'s statements (each found once, none the key line itself)
    edits = mistake_edits(source, Mistake(mistake.exercise, mistake.message, entry["levels"], entry["wrong"],
                                          entry.get("also", {})))
    forget_attempts(mistake.exercise)
    check(mistake.exercise, obj)  # the solution passes (raises otherwise)
    report = _report(name, mistake.exercise, obj.__module__, rewritten(source, edits))
    assert mistake.message in report, report
    assert f"Hint 1 of 3: {entry['levels'][0]}" in report
    if len(edits) > 1:
        alone = _report(name, mistake.exercise, obj.__module__, rewritten(source, edits[:1]))
        assert mistake.message not in alone, f"{name}: the key line's wrong form alone makes the mistake"
        others = _report(name, mistake.exercise, obj.__module__, rewritten(source, edits[1:]))
        assert mistake.message not in others, f"{name}: the other statements alone make the mistake"


def test_the_ladder_follows_the_diagnosis_and_only_a_changed_answer_advances():
    forget_attempts("sinusoidal_table")
    concatenated = MISTAKES["table_concatenated"].impl

    def shown(attempt):
        with pytest.raises(SelfCheckFailed) as info:
            check("sinusoidal_table", attempt)
        return re.search(r"Hint (\d) of \d: (.*)", str(info.value)).groups()

    def long_ones_off_by(n):  # the concatenated table, and other answers on the long (unnamed) check
        return lambda s, d, base=10000.0: concatenated(s, d, base) + (n if s > 1000 else 0)

    ladder = MISTAKE_HINTS["table_concatenated"]["levels"]
    assert shown(concatenated) == ("1", ladder[0])
    # new code, the same answers (x.T.T is x): the same level
    assert shown(lambda s, d, base=10000.0: concatenated(s, d, base).T.T) == ("1", ladder[0])
    # new answers, the same diagnosis: the next level of its ladder, up to the key line
    assert shown(long_ones_off_by(1)) == ("2", ladder[1])
    assert shown(long_ones_off_by(2)) == ("3", ladder[2])
    # another diagnosis: its own ladder, from level 1
    assert shown(MISTAKES["table_swapped"].impl) == ("1", MISTAKE_HINTS["table_swapped"]["levels"][0])
    # no known mistake: the exercise's ladder
    assert shown(lambda s, d, base=10000.0: posenc_ref.sinusoidal_table(s, d, base) + 1) == (
        "1", HINTS["sinusoidal_table"][0])
    forget_attempts("sinusoidal_table")
