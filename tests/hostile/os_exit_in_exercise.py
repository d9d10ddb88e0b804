"""os._exit inside an exercise: the process dies without results; a missing result is a zero."""
import os


def shift_matrix(k, d_model, base=10000.0):
    os._exit(0)
