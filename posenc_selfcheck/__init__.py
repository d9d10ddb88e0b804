"""Self-checks for the positional-encodings course.

In a chapter notebook, right after an exercise:

    from posenc_selfcheck import check
    check("sinusoidal_table", sinusoidal_table)

runs your code on small inputs, compares it with answers stored in `data/` (made from the staff
reference, so no reference code is needed here), and says what is wrong. It takes well under a
second. The grader runs these checks and more, on other inputs, in a sandbox.
"""

from __future__ import annotations

import sys
import time
from functools import lru_cache
from pathlib import Path

from . import probes, store
from .evaluate import FAILED, MISSING, PASSED, SKIPPED, evaluate

DATA = Path(__file__).parent / "data"

if "IPython" in sys.modules:  # a learner's kernel: pay the meta device's first use now, not in a check
    probes.warm_up()


class SelfCheckFailed(AssertionError):
    """An exercise gave a wrong answer; the message says which check and why."""


@lru_cache(maxsize=None)
def _chapter_data(stem):
    return store.load(str(DATA / stem))


def public_checks(exercise):
    """The stored public checks of one exercise: (check, expected, [(mistake message, result)])."""
    for path in sorted(DATA.glob("ch*.json")):
        data = _chapter_data(path.stem)
        index = data.get("_index", {})
        if exercise in index:
            out = []
            for check_id in index[exercise]:
                spec = data[f"{check_id}#spec"]
                expected = data[f"{check_id}#expected"]
                mistakes = [(message, data[f"{check_id}#mistake{i}"])
                            for i, message in enumerate(spec.get("mistake_messages", []))]
                out.append((spec, expected, mistakes))
            return out
    raise KeyError(f"no self-checks stored for {exercise!r}")


def check(exercise, obj, quiet=False):
    """Run the public checks of `exercise` on `obj`; raise SelfCheckFailed when one fails."""
    start = time.perf_counter()
    ns = {exercise: obj}
    lines, failed, missing = [], 0, 0
    checks = public_checks(exercise)
    for spec, expected, mistakes in checks:
        got = probes.run(ns, spec["probe"], spec["params"], exercise)
        status, message = evaluate(spec, got, expected, mistakes)
        if status == MISSING:
            missing += 1
            lines.append(f"  … {spec['name']}: {message}")
            break
        if status == FAILED:
            failed += 1
            lines.append(f"  ✗ {spec['name']}: {message}")
        elif status == SKIPPED:
            lines.append(f"  - {spec['name']}: skipped ({message})")
        elif status == PASSED and not quiet:
            lines.append(f"  ✓ {spec['name']}")
    took = time.perf_counter() - start
    if missing:
        print(f"{exercise}: not implemented yet — finish the exercise above, then run this cell again.")
        return
    head = (f"{exercise}: all {len(checks)} checks passed ({took * 1000:.0f} ms)" if not failed
            else f"{exercise}: {failed} of {len(checks)} checks failed")
    report = "\n".join([head] + lines)
    if failed:
        raise SelfCheckFailed(report)
    print(report)


__all__ = ["check", "SelfCheckFailed", "PASSED", "FAILED", "SKIPPED", "MISSING"]
