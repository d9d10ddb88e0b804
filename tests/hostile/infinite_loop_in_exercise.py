"""An infinite loop inside an exercise that also ignores the statement alarm: the wall clock ends it."""
import signal


def shift_matrix(k, d_model, base=10000.0):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    n = 0
    while True:
        n += 1
