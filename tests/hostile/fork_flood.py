"""Start processes until refused (each sleeps), and say how many started: RLIMIT_NPROC (the sandbox's
own uid, or the user namespace's count) and the cgroup's pids.max stop it. Capped at 2000 so that an
unconfined run cannot take the machine down; all of it is killed after the exercise."""
import os
import time


def shift_matrix(k, d_model, base=10000.0):
    started = 0
    try:
        while started < 2000:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            started += 1
    except OSError as exc:
        raise RuntimeError(f"STOPPED after {started} processes: {type(exc).__name__}")
    raise RuntimeError(f"STARTED {started} processes")
