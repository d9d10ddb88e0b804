"""torch._dynamo imported when something compiles, not when the meta device is first used.

Many of torch's Python functions (the references behind the meta device's kernels, the optimizers' functional
steps) are marked "not for torch.compile" with `torch._compile._disable_dynamo`. The mark is lazy: on the
function's first call it imports torch._dynamo (with sympy, torch.distributed and torch.onnx: about a second and
70 MB in a fresh process) to build the wrapper that turns compilation off around it. Until something imports
torch._dynamo, though, nothing can be compiling: every compiler entry point (torch.compile, torch.export,
torch._dynamo.optimize) imports it first. `defer()` gives each marked function a stand-in wrapper that calls it
as it is while torch._dynamo is absent, and builds torch's own wrapper on the first call after it arrived; the
function computes the same thing either way.

`probes_meta.warm_up()` calls it around the meta device's first use in a process: the sandbox's zygote (once,
before forking), a learner's kernel (when the self-check is imported), the build and the grader computing the
reference's answers. The zygote starts about a second sooner and forks a smaller process, a kernel's setup cell
waits about a second less (tests/test_selfcheck.py and tests/test_sandbox.py measure that neither imports
torch._dynamo).
"""

from __future__ import annotations

import gc
import sys
import types

import torch._compile

DYNAMO = "torch._dynamo"


def _marked():
    """[(function, recursive)]: every function that `_disable_dynamo` has wrapped so far, found by the code of its
    wrapper (a closure over `fn` and `recursive`); empty if torch's wrapper no longer looks like that."""
    wrapper = torch._compile._disable_dynamo(lambda: None)
    code = wrapper.__code__
    if set(code.co_freevars) != {"fn", "recursive"}:  # another torch: leave its functions as they are
        return []
    found = []
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType and obj.__code__ is code and obj is not wrapper:
            cells = dict(zip(code.co_freevars, obj.__closure__))
            found.append((cells["fn"].cell_contents, cells["recursive"].cell_contents))
    return found


def _stand_in(fn, recursive):
    """`fn` itself while torch._dynamo is not imported; torch's own wrapper (cached where torch caches it, so the
    stand-in is never called again) once it is."""

    def call(*args, **kwargs):
        dynamo = sys.modules.get(DYNAMO)
        if dynamo is None:  # nothing can be compiling: there is nothing to turn off
            return fn(*args, **kwargs)
        disabled = dynamo.disable(fn, recursive, wrapping=False)  # what torch._compile would have built
        fn.__dynamo_disable = disabled
        return disabled(*args, **kwargs)

    return call


def defer():
    """Give every marked function not yet called its stand-in; the number given. A function marked later (a module
    torch imports afterwards) keeps torch's behaviour: call again after such imports."""
    if DYNAMO in sys.modules:  # already paid: torch's own wrappers from now on
        return 0
    count = 0
    for fn, recursive in _marked():
        if getattr(fn, "__dynamo_disable", None) is None:
            fn.__dynamo_disable = _stand_in(fn, recursive)
            count += 1
    return count
