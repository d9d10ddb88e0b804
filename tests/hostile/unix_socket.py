"""Connect to Unix sockets: the grader's own (standing for a daemon's control socket), well-known
system sockets (Docker's would mean root), and an abstract one. Landlock does not check connecting to
a socket by path. Stopped by seccomp (no socket at all), the jail (the paths are not in view; abstract
sockets belong to the network namespace) and Landlock ABI 6 (abstract sockets)."""
import socket

_PATHS = ("__SOCKET__", "/var/run/docker.sock", "/run/docker.sock", "/run/dbus/system_bus_socket",
          "/run/systemd/private", "/run/containerd/containerd.sock")


def shift_matrix(k, d_model, base=10000.0):
    reached, refused = [], []
    for path in _PATHS + ("\0__SOCKET__",):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(path)
                s.sendall(b"EXFILTRATED over a Unix socket")
                reached.append(path.replace("\0", "@"))
        except OSError as exc:
            refused.append(type(exc).__name__)
    if reached:
        raise RuntimeError("CONNECTED " + " ".join(reached))
    raise RuntimeError("BLOCKED " + " ".join(sorted(set(refused))))
