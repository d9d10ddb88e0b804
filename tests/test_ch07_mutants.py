"""Chapter 7's wiring mutants, written as a learner would (one edit of the solution's source, independent of the
mistakes' own code in course/07_train_short_test_long/mistakes.py): at least 90% of them are named by the
self-check's diagnosis; one `bias=True` costs its own parameter check only; and the decoder's self-check blames
PositionalAttention exactly when PositionalAttention fails."""

import re

import pytest

import posenc_ref.ch07_train_short_test_long as ref
from grader.checks import chapter_checks
from grader.mistakes import MISTAKES
from posenc_selfcheck import FAILED, MISSING, SelfCheckFailed, check, forget_attempts
from posenc_selfcheck.evaluate import evaluate
from posenc_selfcheck.messages import render

SOURCE = open(ref.__file__).read()
ATTN, DECODER = "PositionalAttention", "TinyDecoder"
ROTATE = "q, k = self.scheme.rotate(q, position_ids), self.scheme.rotate(k, position_ids)"
SDPA_CAUSAL = "F.scaled_dot_product_attention(q, k, v, is_causal=causal)"
SDPA_MASK = "F.scaled_dot_product_attention(q, k, v, attn_mask=mask)"
EMBED = "h = self.scheme.embed(h, position_ids)"
SCALE = " * math.sqrt(self.embed_tokens.embedding_dim)"

# name: (exercise it shows in, [(text of the solution, replaced by)]), in the words
MUTANTS = {
    "causal mask flipped": (ATTN, [(".tril(k_len - seq)", ".triu(k_len - seq)")]),
    "scores scaled by 1/d": (ATTN, [(SDPA_CAUSAL, SDPA_CAUSAL[:-1] + ", scale=1 / self.head_dim)"),
                                    (SDPA_MASK, SDPA_MASK[:-1] + ", scale=1 / self.head_dim)")]),
    "heads merged without the transpose": (ATTN, [("out.transpose(1, 2).reshape(batch, seq, self.d_model)",
                                                   "out.reshape(batch, seq, self.d_model)")]),
    "heads split in the wrong order": (ATTN, [("t.view(batch, seq, self.num_heads, self.head_dim).transpose(1, 2)",
                                               "t.view(batch, self.num_heads, seq, self.head_dim)")]),
    "dropout active in eval (attention)": (ATTN, [(SDPA_CAUSAL, SDPA_CAUSAL[:-1] + ", dropout_p=0.1)"),
                                                  (SDPA_MASK, SDPA_MASK[:-1] + ", dropout_p=0.1)")]),
    "bias negated": (ATTN, [("bias = bias.to(q.dtype)", "bias = -bias.to(q.dtype)")]),
    "bias ignored": (ATTN, [('mask = bias if allowed is None else bias.masked_fill(~allowed, float("-inf"))',
                             "mask = allowed")]),
    "bias with its arguments swapped": (ATTN, [("self.scheme.bias(position_ids, k_positions)",
                                                "self.scheme.bias(k_positions, position_ids)")]),
    "bias never cast to q's dtype": (ATTN, [("bias = bias.to(q.dtype)", "bias = bias")]),
    "bias divided by sqrt(d) with the scores": (ATTN, [("bias = bias.to(q.dtype)",
                                                        "bias = bias.to(q.dtype) / math.sqrt(self.head_dim)")]),
    "causal mask dropped with a bias": (ATTN, [('bias.masked_fill(~allowed, float("-inf"))', "bias")]),
    "values rotated": (ATTN, [(ROTATE, ROTATE + "\n        v = self.scheme.rotate(v, position_ids)")]),
    "keys not rotated": (ATTN, [(ROTATE, "q = self.scheme.rotate(q, position_ids)")]),
    "cached keys rotated again": (ATTN, [("k_len = k.shape[2]", "k = self.scheme.rotate(k, torch.cat((torch.arange("
                                          "past, device=x.device), position_ids)))\n        k_len = k.shape[2]")]),
    "positions not offset by the cache": (ATTN, [("torch.arange(past, past + seq, device=x.device)",
                                                  "torch.arange(seq, device=x.device)")]),
    "causal mask aligned to the start": (ATTN, [(".tril(k_len - seq)", ".tril(0)")]),
    "the block calls embed": (ATTN, [("def heads(t):", "x = self.scheme.embed(x, position_ids)\n\n        "
                                                       "def heads(t):")]),
    "post-norm blocks": (DECODER, [("attended, kv_cache = self.attn(self.attn_norm(h), position_ids, causal, kv_cache)"
                                    "\n        h = h + attended",
                                    "attended, kv_cache = self.attn(h, position_ids, causal, kv_cache)\n"
                                    "        h = self.attn_norm(h + attended)"),
                                   ("return h + self.mlp(self.mlp_norm(h)), kv_cache",
                                    "return self.mlp_norm(h + self.mlp(h)), kv_cache")]),
    "attention residual missing": (DECODER, [("h = h + attended", "h = attended")]),
    "dropout active in eval (embeddings)": (DECODER, [(EMBED, "h = F.dropout(self.scheme.embed(h, position_ids), "
                                                              "0.1, training=True)")]),
    "decoder positions 1-based": (DECODER, [("torch.arange(past, past + seq, device=tokens.device)",
                                             "torch.arange(past + 1, past + seq + 1, device=tokens.device)")]),
    "sqrt(d) applied after the table": (DECODER, [(SCALE, ""), (EMBED, EMBED + SCALE)]),
    "no final norm": (DECODER, [("return self.norm(h) @ self.embed_tokens.weight.T", "return h @ "
                                                                                      "self.embed_tokens.weight.T")]),
    "token embeddings not scaled": (DECODER, [(SCALE, "")]),
    "table added before every layer": (DECODER, [("for n, layer in enumerate(self.layers):",
                                                  "for n, layer in enumerate(self.layers):\n            if n:\n"
                                                  "                " + EMBED)]),
    "causal=False ignored": (DECODER, [("layer(h, position_ids, self.causal,", "layer(h, position_ids, True,")]),
    "decoder positions not offset by the caches": (DECODER, [("past = 0 if kv_caches is None else "
                                                              "kv_caches[0][0].shape[2]", "past = 0")]),
}


def mutant(edits):
    """The chapter's reference module with the edits applied: {name: object}."""
    source = SOURCE
    for old, new in edits:
        assert source.count(old) >= 1, old
        source = source.replace(old, new)
    namespace = {"__name__": "mutant"}
    exec(compile(source, "<mutant>", "exec"), namespace)  # noqa: S102
    return namespace


def diagnoses():
    """What counts as naming a mistake: a chapter 7 mistake's message, or a check's own diagnosis (its hint or
    its property's message, such as the repeatability check's "something random is active in eval")."""
    said = [m.message for m in MISTAKES.values() if m.exercise in (ATTN, DECODER)]
    said += [c.hint for c in chapter_checks("ch07") if c.hint and c.expect != "raises"]
    return said + ["something random is active in eval"]


def report(exercise, obj):
    forget_attempts(exercise)
    try:
        check(exercise, obj, quiet=True)
        return ""
    finally:
        forget_attempts(exercise)


def first_failure(text):
    return next((line for line in text.splitlines() if "✗" in line), "")


@pytest.fixture(scope="module")
def verdicts():
    out = {}
    for name, (exercise, edits) in MUTANTS.items():
        try:
            out[name] = ("passed", report(exercise, mutant(edits)[exercise]))
        except SelfCheckFailed as failure:
            text = first_failure(str(failure))
            out[name] = ("named" if any(d in text for d in diagnoses()) else "unnamed", text)
    return out


def test_at_least_90_percent_of_the_mutants_are_named(verdicts):
    passed = [name for name, (status, _) in verdicts.items() if status == "passed"]
    assert passed == []  # every mutant is caught
    named = [name for name, (status, _) in verdicts.items() if status == "named"]
    unnamed = {name: text for name, (status, text) in verdicts.items() if status == "unnamed"}
    print(f"\nchapter 7 mutants named: {len(named)} of {len(verdicts)}; unnamed: {unnamed}")
    assert len(named) / len(verdicts) >= 0.9, unnamed


def test_the_named_mutants_get_their_own_diagnosis(verdicts):
    expected = {"causal mask flipped": "the causal mask points the wrong way",
                "scores scaled by 1/d": "divided by d_head",
                "bias never cast to q's dtype": "the bias keeps its float32 dtype",
                "cached keys rotated again": "rotated again after joining the cache",
                "bias with its arguments swapped": "scheme.bias gets its arguments swapped",
                "post-norm blocks": "post-norm", "decoder positions 1-based": "positions start at 1",
                "sqrt(d) applied after the table": "after the scheme's embed",
                "dropout active in eval (attention)": "something random is active in eval",
                "dropout active in eval (embeddings)": "something random is active in eval"}
    for name, words in expected.items():
        assert words in verdicts[name][1], (name, verdicts[name])


def test_an_error_names_a_mistake_only_when_that_mistake_raises_the_very_same_error():
    """scheme.bias with its arguments swapped raises as soon as a cache makes K differ from L; the known mistake
    raises that very error on the check's input, so the error names it. Another error, or an unfinished
    exercise, does not."""
    error = ("RuntimeError: The size of tensor a (7) must match the size of tensor b (3) at non-singleton "
             "dimension 2")
    known = [("the known mistake", {"error": error, "error_type": "RuntimeError"})]
    spec = {"expect": "match", "hint": "the check's hint"}
    got = {"error": error, "error_type": "RuntimeError"}
    status, feedback = evaluate(spec, got, {}, known)
    assert (status, render(feedback, "en")) == (FAILED, f"the known mistake (raised {error})")
    other = {"error": error.replace("(7)", "(8)"), "error_type": "RuntimeError"}
    status, feedback = evaluate(spec, other, {}, known)
    assert (status, render(feedback, "en")) == (FAILED, f"raised {other['error']}. Hint: the check's hint")
    unfinished = {"error": "exercise not finished", "error_type": "NotImplementedError"}
    assert evaluate(spec, unfinished, {}, [("a stub", unfinished)])[0] == MISSING


def test_bias_with_its_arguments_swapped_is_named_by_the_error_a_cache_makes_it_raise():
    with pytest.raises(SelfCheckFailed) as info:
        report(ATTN, mutant(MUTANTS["bias with its arguments swapped"][1])[ATTN])
    assert f"{MISTAKES['scheme_bias_swapped'].message} (raised RuntimeError" in first_failure(str(info.value))


def test_one_bias_true_costs_the_attention_parameter_check_only():
    block = mutant([("self.q_proj = nn.Linear(d_model, d_model, bias=False)",
                     "self.q_proj = nn.Linear(d_model, d_model, bias=True)")])
    with pytest.raises(SelfCheckFailed) as info:
        report(ATTN, block[ATTN])
    failed = [line for line in str(info.value).splitlines() if "✗" in line]
    assert len(failed) == 1 and "four Linear layers without bias" in failed[0]
    assert report(DECODER, block[DECODER]) == ""  # the decoder, built on that block, passes


def test_the_decoder_blames_positional_attention_only_when_it_fails():
    wrong_block = mutant(MUTANTS["scores scaled by 1/d"][1])
    with pytest.raises(SelfCheckFailed) as info:
        report(DECODER, wrong_block[DECODER])
    assert "TinyDecoder calls your PositionalAttention, which does not pass its own self-check yet" in str(info.value)
    wrong_decoder = mutant(MUTANTS["no final norm"][1])
    with pytest.raises(SelfCheckFailed) as info:
        report(DECODER, wrong_decoder[DECODER])
    assert "PositionalAttention" not in str(info.value)
    assert MISTAKES["decoder_no_final_norm"].message in str(info.value)
    assert re.search(r"Hint 1 of \d", str(info.value))


FAIR = {  # written as practitioners write it: full marks
    "float32 internals": [(SDPA_MASK, "F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask "
                                      "if mask.dtype == torch.bool else mask.float()).to(q.dtype)")],
    "dropout only while training": [(SDPA_CAUSAL, SDPA_CAUSAL[:-1] + ", dropout_p=0.1 if self.training else 0.0)"),
                                    (SDPA_MASK, SDPA_MASK[:-1] + ", dropout_p=0.1 if self.training else 0.0)")],
    "einsum scores, explicit softmax": [(SDPA_MASK, "torch.einsum('bhqk,bhkd->bhqd', (torch.einsum('bhqd,bhkd->bhqk', "
                                                    "q, k) / math.sqrt(self.head_dim) + (mask if mask.dtype != "
                                                    "torch.bool else torch.zeros_like(mask, dtype=q.dtype)"
                                                    ".masked_fill(~mask, float('-inf')))).softmax(-1), v)")],
}


@pytest.mark.parametrize("name", sorted(FAIR))
def test_fair_variants_pass_every_public_check(name):
    namespace = mutant(FAIR[name])
    assert report(ATTN, namespace[ATTN]) == ""
    assert report(DECODER, namespace[DECODER]) == ""
