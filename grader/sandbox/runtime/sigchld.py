"""A wake-up pipe for a fork server: a byte arrives on it whenever one of its children ends, so that the zygote
and each session server select() on it instead of sleeping (standard library only; runs flat in the zygote's
interpreter).
"""

import os
import signal

_FDS = []  # (write end, read end) of this process's pipe


def wake_up_pipe():
    """The read end of a fresh wake-up pipe for this process. A forked process calls it again: it closes the
    pipe it inherited (a session shares nothing with the zygote or another session, not even wake-ups)."""
    for fd in _FDS:
        os.close(fd)
    _FDS.clear()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    _FDS.extend((wake_w, wake_r))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    return wake_r
