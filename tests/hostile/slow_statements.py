"""Hold the grader: top-level statements that each stay just under the statement limit (time.sleep), in every
child of every exercise, and retries after a timeout. Stopped by one wall-clock budget per exercise (all its
children and retries) and one per submission."""
import time

_a = time.sleep(1.9)
_b = time.sleep(1.9)
_c = time.sleep(1.9)
_d = time.sleep(1.9)
