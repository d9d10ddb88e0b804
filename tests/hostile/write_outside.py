"""Write outside the working folder: a file where the grader would find it, a line in the grading
user's shell start-up file (it would run at their next login), and files in /tmp and /dev/shm.
Stopped by the jail (none of it is in view; its /tmp and /dev/shm are private) and Landlock (writes
only in the working folder)."""
import os


def shift_matrix(k, d_model, base=10000.0):
    written, refused = [], []
    for path, mode in (("__MARKER__", "w"), ("__HOME__/.bashrc", "a"),
                       (f"/tmp/posenc-planted-__RUN__-{os.getpid()}", "w"),
                       (f"/dev/shm/posenc-planted-__RUN__-{os.getpid()}", "w")):
        try:
            with open(path, mode) as f:
                f.write("echo planted by a submission\n")
            written.append(path)
        except OSError as exc:
            refused.append(type(exc).__name__)
    if written:
        raise RuntimeError("WROTE " + " ".join(written))
    raise RuntimeError("BLOCKED " + " ".join(sorted(set(refused))))
