"""Look for the grader's hidden candidate functions in the learner's own process: a hidden probe module in
sys.modules, or a function whose code matches a hidden candidate's (__HIDDEN__: fingerprints computed from the
grader's candidates), among every module's globals and tables and every object the garbage collector tracks.
(Found: the hidden candidates sat in sys.modules of every child, their code one dump away from a fingerprint
table.) Stopped by the hidden candidates never entering the sandbox: its zygote does not import them."""
import gc
import sys

HIDDEN = __HIDDEN__


def _code_print(code):
    parts = [code.co_names]
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            parts.append(_code_print(const))
        elif isinstance(const, (int, float)):  # bools too: rows_first=False
            parts.append(const)
    return repr(parts)


def _scan():
    found, seen = set(), 0
    names = [n for n in list(sys.modules) if "hidden" in n and "ch03" not in n]
    found.update(f"module {n}" for n in names)
    values = []
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            values.append(value)
            if isinstance(value, dict):
                values.extend(list(value.values()))
    values += gc.get_objects()
    for value in values:
        seen += 1
        if type(value).__name__ != "function":
            continue
        if _code_print(value.__code__) in HIDDEN:
            found.add(f"function {value.__name__}")
    return seen, sorted(found)


def _report():
    seen, found = _scan()
    raise RuntimeError(f"SCANNED {seen} objects: " + ("FOUND " + ", ".join(found) if found else "no candidate"))


_REPORT = _report()  # an assignment: the grader executes it (and notes what it raises)
