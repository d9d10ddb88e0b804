"""The inputs whose answers ship (grader/shipped.py): a chapter's calls with literal arguments, followed through
names bound to literals, loops over literal tuples and every value a name is given."""

from grader import shipped
from tests.conftest import ROOT

DEMO = '''
def demo(context=4096):
    for base, who in ((10000.0, "LLaMA 1/2"), (500000.0, "LLaMA 3")):
        rope_inv_freq(64, base)
    n = 5
    n = 7
    sinusoidal_table(n, 8)
    sinusoidal_table(context, d_model=16)
    sinusoidal_table(len(who), 8)  # not a literal: not followed
    k = 3
    sinusoidal_table(n + k, 2 * 4)  # arithmetic on sizes: followed
'''


def test_loops_assignments_and_defaults_are_followed_every_value_counted():
    found = {(ex, tuple(p["args"]), tuple(sorted(p["kwargs"].items())))
             for ex, p in shipped.calls_in(DEMO, {"rope_inv_freq", "sinusoidal_table"})}
    assert found == {("rope_inv_freq", (64, 10000.0), ()), ("rope_inv_freq", (64, 500000.0), ()),
                     ("sinusoidal_table", (5, 8), ()), ("sinusoidal_table", (7, 8), ()),
                     ("sinusoidal_table", (4096,), (("d_model", 16),)),
                     ("sinusoidal_table", (8, 8), ()), ("sinusoidal_table", (10, 8), ())}


def test_a_call_in_a_chapters_loop_counts_as_shipped():
    """Chapter 4 compares LLaMA's bases in a loop (`for base, who in (...)`): rope_inv_freq(128, 500000.0)'s
    answer is on the page, so no draw may equal it."""
    source = (ROOT / "course" / "04_rope" / "chapter.py").read_text()
    assert "for base, who in" in source
    assert {"args": [128, 500000.0], "kwargs": {}} in [p for ex, p in shipped.calls_in(source, {"rope_inv_freq"})]
    assert shipped.notebook_calls() == shipped.CALLS.read_text()
