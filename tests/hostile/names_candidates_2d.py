"""Chapter 8's counterpart of names_candidates.py: a 2-D property test that judges each candidate by its name,
docstring and place in the source, not by mathematics. (Found: their decorator once had another name,
`candidate_2d`, and the sandbox left them named.) Stopped as chapter 4's is: the candidates never enter the
sandbox, and the test gets callables that carry no name, docstring or code of theirs."""


def check_axial_property(rope_fn, head_dim):
    code = getattr(rope_fn, "__code__", None)
    said = " ".join(str(x) for x in (getattr(rope_fn, "__name__", None), rope_fn.__doc__, getattr(code, "co_name", None),
                                     getattr(code, "co_firstlineno", None)))
    broken = ("only", "identity", "last_cell", "no_minus", "tables_half", "clipped", "quadratic", "shrinks",
              "sin_angle_off", "angle_product", "rows_then", "grows", "fixed_cell")
    if any(word in said.lower() for word in broken):
        return False
    if "axial" in said.lower():
        return True
    raise ValueError("NAMES " + said)
