"""Read another student's submission (in a batch, the class's folder sits beside the grader). Stopped
by the jail (not in view) and Landlock (not a readable folder)."""
import os


def shift_matrix(k, d_model, base=10000.0):
    try:
        names = os.listdir("__OTHERS__")
        with open(os.path.join("__OTHERS__", sorted(names)[0])) as f:
            copied = f.read(200)
    except (OSError, IndexError) as exc:
        raise RuntimeError(f"BLOCKED {type(exc).__name__}")
    raise RuntimeError("LEAKED " + copied)
