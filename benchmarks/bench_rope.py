"""The reference `apply_rope` against transformers' `apply_rotary_pos_emb` on the same tensors.

    python benchmarks/bench_rope.py [--threads 2] [--repeat 15] [--shape 4 32 2048 128] [--device cuda]
                                    [--dtype float16] [--json PATH]

Both rotate q and k (B, H, L, D) in float32 on the CPU (or --device, --dtype) with the same cos/sin,
made by transformers' LlamaRotaryEmbedding: transformers in one call, the reference in two (one per tensor). Each side
gets two warm-up calls, then --repeat timed calls, alternating between the two so that drifting
machine load hits both alike; the median is reported. Results are checked to agree first.
Also timed: `x * cos + rotate_half(x) * sin` written with the course's rotate_half, the textbook
version a learner writes. Not run by the tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(fn, device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--shape", type=int, nargs=4, default=[4, 32, 2048, 128], metavar=("B", "H", "L", "D"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"))
    parser.add_argument("--json", default=None, help="also write the medians here")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)

    import transformers
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    import posenc_ref

    b, h, l, d = args.shape
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, b, h, l, d, generator=gen).to(device=device, dtype=dtype)
    config = LlamaConfig(hidden_size=h * d, num_attention_heads=h, num_key_value_heads=h, max_position_embeddings=l)
    rotary = LlamaRotaryEmbedding(config).to(device)
    cos, sin = rotary(q, torch.arange(l, device=device)[None])  # (1, L, D) in q's dtype

    def textbook(x):
        return x * cos[:, None] + posenc_ref.rotate_half(x) * sin[:, None]

    sides = {
        "transformers apply_rotary_pos_emb(q, k)": lambda: apply_rotary_pos_emb(q, k, cos, sin),
        "posenc_ref apply_rope(q), apply_rope(k)": lambda: (posenc_ref.apply_rope(q, cos, sin),
                                                            posenc_ref.apply_rope(k, cos, sin)),
        "x * cos + rotate_half(x) * sin, q and k": lambda: (textbook(q), textbook(k)),
    }
    reference = apply_rotary_pos_emb(q, k, cos, sin)
    tol = {"float32": (1.3e-6, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}[args.dtype]
    for name, fn in sides.items():
        for got, want in zip(fn(), reference):
            torch.testing.assert_close(got, want, rtol=tol[0], atol=tol[1])  # the dtype's rounding
    times = {name: [] for name in sides}
    with torch.inference_mode():
        for _ in range(2):  # warm-up: allocator, thread pool, caches
            for fn in sides.values():
                fn()
        for _ in range(args.repeat):
            for name, fn in sides.items():
                times[name].append(timed(fn, device))
    medians = {name: statistics.median(t) for name, t in times.items()}
    hf = medians["transformers apply_rotary_pos_emb(q, k)"]
    where = args.device if device.type != "cpu" else f"cpu, {args.threads} threads"
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {where}, "
          f"q and k {tuple(q.shape)} {args.dtype}, median of {args.repeat}")
    for name, seconds in medians.items():
        print(f"  {name:<44}{seconds * 1000:9.3f} ms   transformers / this = {hf / seconds:5.2f}")
    if args.json:
        import json

        Path(args.json).write_text(json.dumps({"device": args.device, "dtype": args.dtype, "shape": args.shape,
                                               "median_ms": {n: s * 1000 for n, s in medians.items()}}, indent=1))


if __name__ == "__main__":
    main()
