"""Fill anonymous memory files (memfd) with 1 GiB, 128 MB per file (under the file-size limit): their
pages use no address space, so RLIMIT_AS does not stop them. Stopped by seccomp (no memfd) and by the
memory cgroup (the pages are charged to it: ENOMEM or the kernel's OOM kill)."""
import os


def shift_matrix(k, d_model, base=10000.0):
    files, chunk, written = [], b"\x01" * (32 << 20), 0
    try:
        while written < 1 << 30:
            if written % (128 << 20) == 0:
                files.append(os.memfd_create("hoard"))
            written += os.write(files[-1], chunk)
    except OSError as exc:
        if not files:
            raise RuntimeError(f"BLOCKED {type(exc).__name__}: {exc}")
        raise RuntimeError(f"STOPPED after {written >> 20} MB: {type(exc).__name__}")
    raise RuntimeError(f"FILLED {written >> 20} MB")
