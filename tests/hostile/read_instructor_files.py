"""Read the grading user's own files: shell start-up files, keys. Stopped by the jail (not in view)
and Landlock (not a readable folder); nothing stops it where neither exists (mode "none")."""
import os


def shift_matrix(k, d_model, base=10000.0):
    stolen, refused = [], []
    for name in (".bashrc", ".ssh/id_ed25519"):
        try:
            with open(os.path.join("__HOME__", name)) as f:
                stolen.append(f.read(60))
        except OSError as exc:
            refused.append(type(exc).__name__)
    if stolen:
        raise RuntimeError("LEAKED " + " | ".join(stolen))
    raise RuntimeError("BLOCKED " + " ".join(refused))
