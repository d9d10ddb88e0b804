"""os._exit(97) at import: the exit status the fork server's child uses when it could not be confined. A
learner's exit status is its own to choose and says nothing about the sandbox: the statement is skipped like
any other that ends the process (it once made the grader stop grading: "the sandbox could not confine a
child")."""
import os

if True:
    os._exit(97)
