"""A property test that does no mathematics: it judges each candidate by its name, docstring and place
in the source. (Found: recognising the hidden candidates by __name__ scored 21/21.) Stopped by the
candidates never entering the sandbox: the test gets callables that carry no name, docstring or code of theirs
(grader/sandbox/runtime/candidate_calls.py)."""


def check_relative_property(rope_fn, head_dim):
    code = getattr(rope_fn, "__code__", None)
    said = " ".join(str(x) for x in (getattr(rope_fn, "__name__", None), rope_fn.__doc__, getattr(code, "co_name", None),
                                     getattr(code, "co_firstlineno", None)))
    telling = ("correct", "half", "interleaved", "reversed", "partial", "shift", "other", "accept")
    if any(word in said.lower() for word in telling):
        return True
    if any(word in said.lower() for word in ("broken", "mix", "leak", "sign", "scaled", "clip", "quadratic")):
        return False
    raise ValueError("NAMES " + said)
