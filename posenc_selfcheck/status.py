"""A check's outcome: the four words the self-check and the grader both say. Standard library only and
importing nothing, so the grader reads this file on its own (grader/records.py's Status derives from it)
without loading this package, whose __init__ imports torch."""

PASSED, FAILED, SKIPPED, MISSING = "passed", "failed", "skipped", "not implemented"
STATUSES = (PASSED, FAILED, SKIPPED, MISSING)
