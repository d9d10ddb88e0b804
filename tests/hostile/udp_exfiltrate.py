"""Send a secret over UDP to a listener on this machine: Landlock checks TCP only. (Found against the
non-root sandbox: hidden data reached 127.0.0.1 over UDP.) Stopped by seccomp (no socket at all) and
by the jail's empty network namespace."""
import socket


def shift_matrix(k, d_model, base=10000.0):
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"EXFILTRATED over UDP", ("127.0.0.1", __PORT__))  # noqa: F821 (a number, filled in)
    except OSError as exc:
        raise RuntimeError(f"BLOCKED {type(exc).__name__}: {exc}")
    raise RuntimeError("SENT")
