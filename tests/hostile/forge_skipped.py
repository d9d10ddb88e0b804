"""Answer "skipped" for every check of the exercise, to shrink the maximum it is graded against: patch
the probe runner the sandbox child uses. (Found: a child could say "skipped" for any check.) Stopped by
the grader deciding alone which checks are skipped (only CUDA checks where there is no GPU)."""
import sys

# an assignment, so the grader runs it (it skips loops and bare calls)
_PATCHED = [setattr(sys.modules[name], "run", lambda *args, **kwargs: {"skipped": "not on this machine"})
            for name in ("probes", "posenc_selfcheck.probes") if name in sys.modules]


def shift_matrix(k, d_model, base=10000.0):
    raise RuntimeError("the forged skip did not take")
