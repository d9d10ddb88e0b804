"""Chapter 3 benchmark: Shaw's attention direct vs efficient, and SDPA with a float bias vs without.

    python benchmarks/bench_relative.py                      # B=1, H=8, d=64, L = 512, 1024, 2048
    python benchmarks/bench_relative.py --threads 2 --repeats 5 --lengths 256 512

Every measurement runs in a freshly forked process, so each has its own memory high-water mark:
the process builds its inputs, resets its high-water mark and records its resident set, runs the
function once (warm-up), reads the peak resident set (ru_maxrss), then times `--repeats` more calls
and reports the median.
"Peak" is the growth of the resident set during a call, beyond the inputs. Threads are fixed
(`--threads`, default 1) so the numbers do not depend on the machine's load; every scheme gets the
same seeded inputs. The direct form needs about 10 GB at L = 2048: run it where that fits, or pass
`--max-direct-len 1024`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from posenc_ref import RelativePositionBias, relative_positions, shaw_attention, shaw_attention_direct  # noqa: E402

BATCH, HEADS, HEAD_DIM, MAX_DISTANCE = 1, 8, 64, 16


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak():
    """Forget the high-water mark so far (Linux >= 4.0); building the inputs must not count as the call's peak."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        print("warning: cannot reset the peak RSS; peaks include building the inputs", file=sys.stderr)


def measure(make, threads, repeats):
    """Fork; in the child build (fn, args) = make(), then measure peak growth and median time of fn(*args)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            torch.set_num_threads(threads)
            fn, args = make()
            _reset_peak()
            base = _rss_bytes()
            with torch.no_grad():
                fn(*args)  # warm-up; also the call whose memory we read
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
                times = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    fn(*args)
                    times.append(time.perf_counter() - start)
            result = {"peak_mb": max(peak, 0) / 1e6, "ms": statistics.median(times) * 1e3}
        except BaseException as exc:  # e.g. out of memory: report it instead of a number
            result = {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
        os.write(write_fd, json.dumps(result).encode())
        os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b'{"error": "the measuring process died"}')


def shaw_case(fn, seq):
    def make():
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(BATCH, HEADS, seq, HEAD_DIM, generator=gen) for _ in range(3))
        rel_k, rel_v = (torch.randn(2 * MAX_DISTANCE + 1, HEAD_DIM, generator=gen) * 0.5 for _ in range(2))
        return (lambda *a: fn(*a, causal=True)), (q, k, v, rel_k, rel_v, MAX_DISTANCE)

    return make


def sdpa_case(seq, mode, causal):
    """On (1, 8, L, 64): mode "bias": SDPA with a prebuilt RelativePositionBias float mask (1, 8, L, L), the causal
    mask folded in when causal; "none": SDPA without a mask (is_causal when causal); "build": building that mask."""

    def make():
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(BATCH, HEADS, seq, HEAD_DIM, generator=gen) for _ in range(3))
        module = RelativePositionBias(HEADS, MAX_DISTANCE)
        future = relative_positions(seq, seq) > 0  # (L, L)

        def build():
            bias = module(seq, seq)  # (1, H, L, L)
            return bias.masked_fill(future, float("-inf")) if causal else bias

        if mode == "build":
            return build, ()
        if mode == "bias":
            return (lambda q, k, v, bias: F.scaled_dot_product_attention(q, k, v, attn_mask=bias)), (q, k, v, build())
        return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), (q, k, v)

    return make


def _cell(r):
    return r["error"][:28] if "error" in r else f"{r['peak_mb']:8.0f} MB {r['ms']:8.1f} ms"


def _ratio(a, b):
    if "error" in a or "error" in b:
        return "n/a"
    return f"{a['peak_mb'] / max(b['peak_mb'], 1e-3):6.1f}x mem {a['ms'] / b['ms']:6.2f}x time"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-direct-len", type=int, default=2048, help="skip the direct form above this length")
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, {args.threads} thread(s), median of {args.repeats} after one warm-up; "
          f"B={BATCH}, H={HEADS}, d={HEAD_DIM}, K={MAX_DISTANCE}, float32, CPU\n")

    print("Shaw et al., causal: direct (materialises (B, H, L, L, d)) vs efficient (gather / scatter-add)")
    print(f"{'L':>5} | {'direct: peak, time':>28} | {'efficient: peak, time':>28} | direct / efficient")
    for seq in args.lengths:
        eff = measure(shaw_case(shaw_attention, seq), args.threads, args.repeats)
        if seq <= args.max_direct_len:
            direct = measure(shaw_case(shaw_attention_direct, seq), args.threads, args.repeats)
        else:
            direct = {"error": "skipped (--max-direct-len)"}
        print(f"{seq:>5} | {_cell(direct):>28} | {_cell(eff):>28} | {_ratio(direct, eff)}")

    for causal in (False, True):
        plain = "is_causal=True" if causal else "no mask"
        print(f"\nSDPA with a prebuilt (1, {HEADS}, L, L) float bias{' (causal mask folded in)' if causal else ''} "
              f"vs SDPA with {plain}; and building that bias (RelativePositionBias forward)")
        print(f"{'L':>5} | {'with bias: peak, time':>28} | {plain + ': peak, time':>28} | {'with / without':>28} | "
              f"{'building the bias: peak, time':>28}")
        for seq in args.lengths:
            biased = measure(sdpa_case(seq, "bias", causal), args.threads, args.repeats)
            bare = measure(sdpa_case(seq, "none", causal), args.threads, args.repeats)
            build = measure(sdpa_case(seq, "build", causal), args.threads, args.repeats)
            print(f"{seq:>5} | {_cell(biased):>28} | {_cell(bare):>28} | {_ratio(biased, bare):>28} | "
                  f"{_cell(build):>28}")

if __name__ == "__main__":
    main()
