"""What a learner's first self-check would otherwise pay, paid when the package is imported in a kernel.

The first check of a fresh kernel used to take most of a second: torch loads its meta-device kernels on their
first use, and the stored answers of every chapter are read on the first lookup. `kernel()` does both once, at
import, where the setup cell already waits for torch (benchmarks/bench_selfcheck.py measures both ways). Neither
imports torch._dynamo (dynamo_deferred.py), and no check steps a torch.optim optimizer (chapter 7's training
check writes its AdamW step out), whose first step would import it: about a second each that no kernel pays."""

from __future__ import annotations

import gc

from . import probes, runner


def kernel():
    # the imports below allocate hundreds of thousands of objects, which the collector would walk again and again
    # (about a third of their time): it waits until they are done, then runs as the learner left it
    collecting = gc.isenabled()
    gc.disable()
    try:
        probes.warm_up()  # the meta device
        runner._index()  # every chapter's stored answers, read once (cached)
    finally:
        # what the setup cell has loaded (torch, pyplot, this package) stays for the kernel's life: frozen, the
        # collector never walks it again, in a learner's later cells nor when the kernel stops (torch's objects
        # made that last collection take about a second)
        gc.freeze()
        if collecting:
            gc.enable()
