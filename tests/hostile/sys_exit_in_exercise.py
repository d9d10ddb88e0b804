"""sys.exit inside an exercise: a zero for that exercise's checks, nothing more."""
import sys


def shift_matrix(k, d_model, base=10000.0):
    sys.exit(0)
