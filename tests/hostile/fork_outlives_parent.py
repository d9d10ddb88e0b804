"""A daemon: double fork, setsid, ignore SIGTERM and sleep, at import and inside an exercise. Nothing of
it may survive the exercise; the honest exercises are still graded."""
import os
import signal
import time


def _daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            time.sleep(600)
        os._exit(0)
    return True


_started = _daemon()
_shift_matrix_honest = shift_matrix  # noqa: F821  (defined by the honest solution above)


def shift_matrix(k, d_model, base=10000.0):
    _daemon()
    return _shift_matrix_honest(k, d_model, base)
