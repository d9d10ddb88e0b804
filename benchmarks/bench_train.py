"""Time of one training step of chapter 7's decoder with each position scheme, as a ratio to NoPE.

    python benchmarks/bench_train.py [--threads 1] [--repeat 30] [--steps 5] [--length 64]

The full chapter-7 model (d_model 64, 2 layers, 4 heads, batch 32) with the reference's TinyDecoder and
the lab's schemes built from the reference's chapters 1-5, training at `--length` (64 = the chapter's L;
try 512 to see the bias schemes' (H, L, L) masks grow). Every scheme trains on the same batches; each
gets warm-up steps, then `--repeat` rounds in which every scheme runs `--steps` steps in turn, so that
drifting machine load hits all alike. Reported: the median time per step and its ratio to NoPE, side
by side. Not run by the tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import statistics
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--length", type=int, default=64)
    args = parser.parse_args()

    import posenc_ref
    from posenc_selfcheck.lab import FULL, SCHEMES, Lab

    config = dataclasses.replace(FULL, threads=args.threads, train_len=args.length)
    with redirect_stdout(io.StringIO()):
        lab = Lab(posenc_ref.TinyDecoder, posenc_ref, config)
    models = {name: lab.new_model(name) for name in SCHEMES}
    optimizers = {name: torch.optim.AdamW(m.parameters(), lr=1e-4) for name, m in models.items()}
    sample = lab.sampler(args.length)
    generator = torch.Generator().manual_seed(0)
    batches = [sample(generator) for _ in range(args.steps)]

    def steps(name):
        model, optimizer = models[name], optimizers[name]
        start = time.perf_counter()
        for inputs, targets in batches:
            logits = model(inputs)[0]
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        return (time.perf_counter() - start) / len(batches)

    for name in SCHEMES:  # warm-up: allocator, thread pool, first-call costs
        steps(name)
    times = {name: [] for name in SCHEMES}
    for _ in range(args.repeat):
        for name in SCHEMES:
            times[name].append(steps(name))
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); TinyDecoder d_model={config.d_model}, "
          f"{config.num_layers} layers, {config.num_heads} heads, batch {config.batch_size} x {args.length}; "
          f"median of {args.repeat} rounds of {args.steps} steps")
    for name, seconds in medians.items():
        q1, _, q3 = statistics.quantiles(times[name], n=4)
        print(f"  {name:<12}{seconds * 1e3:8.1f} ms/step (IQR {(q3 - q1) * 1e3:4.1f})   "
              f"x NoPE {seconds / medians['NoPE']:5.2f}")


if __name__ == "__main__":
    main()
