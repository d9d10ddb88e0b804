"""os._exit at import kills the process outright: the grader finds the statement, skips it, grades the rest."""
import os

if True:
    os._exit(0)
