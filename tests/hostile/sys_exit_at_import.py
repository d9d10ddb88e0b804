"""sys.exit at import: the statement is skipped, everything else is graded."""
import sys

if True:
    sys.exit(0)
