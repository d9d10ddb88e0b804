"""Read what the instructor types into the terminal the grader runs in (the test types a line into it while
grading), and type into it: read stdin, open /dev/tty, open every terminal in /dev/pts and __TTY__ (standing
for the grader's /dev/pts/N), read them, and push characters into each terminal it holds (TIOCSTI), stdin,
stdout and stderr included. Stopped by the child having no terminal at all: a session of its own with no
controlling terminal (setsid), stdin, stdout and stderr on /dev/null, no other descriptor; a /dev with no
terminal in it (the jail's own /dev; Landlock: a few devices only); a uid of its own (the terminal is not its
to open); seccomp (no terminal ioctl)."""
import fcntl
import glob
import os
import select
import termios


def _attack():
    got, refused = [], set()
    held = {"stdin": 0, "stdout": 1, "stderr": 2}
    try:
        if select.select([0], [], [], 0.5)[0]:
            data = os.read(0, 100)
            if data:
                got.append(f"stdin: {data!r}")
    except OSError as exc:
        refused.add(type(exc).__name__)
    for path in ["/dev/tty", "__TTY__", *glob.glob("/dev/pts/[0-9]*"), *glob.glob("/dev/tty[0-9]*")]:
        try:
            held[path] = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)  # reading needs no more
        except OSError as exc:
            refused.add(type(exc).__name__)
            continue
        try:
            data = os.read(held[path], 100)
            if data:
                got.append(f"{path}: {data!r}")
        except OSError as exc:
            refused.add(type(exc).__name__)
    for name, fd in held.items():
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b"#")
            got.append(f"typed into {name}")
        except OSError as exc:
            refused.add(type(exc).__name__)
    for name, fd in held.items():
        if fd > 2:
            os.close(fd)
    return got, refused


_got, _refused = _attack()


def shift_matrix(k, d_model, base=10000.0):
    if _got:
        raise RuntimeError("LEAKED " + " | ".join(_got))
    raise RuntimeError("BLOCKED " + " ".join(sorted(_refused)))
