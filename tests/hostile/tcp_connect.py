"""Connect to a TCP listener on this machine and send a secret. Stopped by Landlock (ABI 4: no TCP
connect), by seccomp (no socket at all) and by the jail's empty network namespace."""
import socket


def shift_matrix(k, d_model, base=10000.0):
    try:
        with socket.create_connection(("127.0.0.1", __PORT__), timeout=2) as s:  # noqa: F821 (filled in)
            s.sendall(b"EXFILTRATED over TCP")
    except OSError as exc:
        raise RuntimeError(f"BLOCKED {type(exc).__name__}: {exc}")
    raise RuntimeError("SENT")
