"""Change the mode, owner and times of the grader's folder, which Landlock does not check: make it
world-writable and setgid, backdate it. (Found against the non-root sandbox: it made the
instructor's home directory world-writable.) Stopped by seccomp (EPERM), and as root by the
sandbox's own uid (not the owner) and the jail (the folder is not in view)."""
import os


def shift_matrix(k, d_model, base=10000.0):
    changed, refused = [], []
    for name, change in (("chmod", lambda p: os.chmod(p, 0o2777)),
                         ("chown", lambda p: os.chown(p, os.getuid(), -1)),
                         ("utime", lambda p: os.utime(p, (0, 0)))):
        try:
            change("__HOME__")
            changed.append(name)
        except OSError as exc:
            refused.append(f"{name}: {type(exc).__name__}")
    if changed:
        raise RuntimeError("CHANGED " + " ".join(changed))
    raise RuntimeError("BLOCKED " + ", ".join(refused))
