"""Touch 512 MiB of anonymous memory, without torch (twice the largest allowance a test gives it). Stopped by the
address-space limit (an exception) or, where that cannot be set (a CUDA exercise), by the memory cgroup (the kernel's
OOM kill)."""
import mmap


def shift_matrix(k, d_model, base=10000.0):
    hoard, size = [], 64 << 20
    try:
        while len(hoard) * size < 512 << 20:
            block = mmap.mmap(-1, size)
            block.write(b"\x01" * size)
            hoard.append(block)
    except (OSError, MemoryError) as exc:
        raise RuntimeError(f"STOPPED after {len(hoard) * size >> 20} MB: {type(exc).__name__}")
    raise RuntimeError(f"FILLED {len(hoard) * size >> 20} MB")
