"""Read the machine's password hashes and root's private files, and say which uid did. (Found against
`nojail` as root: learner code ran as uid 0 and read /etc/shadow.) Stopped by the sandbox's own uid,
and where learner code runs as uid 0 (POSENC_SANDBOX_MODE=user) by Landlock, which withholds /etc's
secrets."""
import os

_PATHS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root/.bash_history", "/root/.ssh/id_ed25519",
          "/root/.ssh/id_rsa")


def shift_matrix(k, d_model, base=10000.0):
    stolen, refused = [], []
    for path in _PATHS:
        try:
            with open(path) as f:
                stolen.append(f"{path}: {f.read(60)!r}")
        except OSError as exc:
            refused.append(type(exc).__name__)
    if stolen:
        raise RuntimeError(f"LEAKED as uid {os.getuid()}: " + " | ".join(stolen))
    raise RuntimeError(f"BLOCKED as uid {os.getuid()}: " + " ".join(sorted(set(refused))))
