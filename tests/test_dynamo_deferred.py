"""posenc_selfcheck/dynamo_deferred.py: torch's functions marked "not for torch.compile" run as they are until
torch._dynamo is imported, and with torch's own wrapper from then on; torch.compile is unaffected. Each case runs
in a fresh process (the deferral only means something before torch._dynamo is imported)."""

import json
import subprocess
import sys

from tests.conftest import ROOT

DEFERRED = """
import json, sys
import torch
from posenc_selfcheck import dynamo_deferred

def stand_ins():
    return {id(fn) for fn, _ in dynamo_deferred._marked()
            if getattr(getattr(fn, "__dynamo_disable", None), "__qualname__", "").startswith("_stand_in.")}

given = dynamo_deferred.defer()
before = stand_ins()
meta = torch.empty(2, 3, device="meta") + 1  # the meta kernel of add runs marked references
cpu = torch.arange(6.0).reshape(2, 3).cumsum(0) + 1
seen = {"given": given, "marked": len(dynamo_deferred._marked()), "meta_shape": list(meta.shape),
        "dynamo_after_meta": "torch._dynamo" in sys.modules}
import torch._dynamo  # what torch.compile imports first
after_import = stand_ins()
meta = torch.empty(2, 3, device="meta") + 1
gone = after_import - stand_ins()
replaced = [fn for fn, _ in dynamo_deferred._marked() if id(fn) in gone]
compiled = torch.compile(lambda x: torch.sin(x) * 2 + 1, backend="eager")
x = torch.linspace(-3, 3, 7)
seen.update(stand_ins_before=len(before), stand_ins_kept_by_import=len(after_import),
            replaced=len(replaced), replaced_are_torchs=all(getattr(fn.__dynamo_disable, "_torchdynamo_disable", False)
                                                            for fn in replaced),
            meta_shape_after=list(meta.shape), compiled=torch.equal(compiled(x), torch.sin(x) * 2 + 1),
            cpu=torch.equal(cpu, torch.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]])),
            defer_after_import=dynamo_deferred.defer())
print(json.dumps(seen))
"""


def test_marked_functions_run_as_they_are_until_dynamo_arrives_then_with_torchs_wrapper():
    run = subprocess.run([sys.executable, "-c", DEFERRED], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.splitlines()[-1])
    # torch 2.13 marks a few hundred functions at import; each got a stand-in
    assert seen["marked"] > 100 and seen["given"] == seen["stand_ins_before"] > 100, seen
    assert seen["meta_shape"] == [2, 3] and seen["cpu"] is True, seen
    assert seen["dynamo_after_meta"] is False, seen  # the meta device's first use, without torch._dynamo
    # importing torch._dynamo replaces nothing by itself; the next call of each stand-in builds torch's wrapper
    assert seen["stand_ins_kept_by_import"] == seen["stand_ins_before"], seen
    assert seen["replaced"] > 0 and seen["replaced_are_torchs"] is True, seen
    assert seen["meta_shape_after"] == [2, 3] and seen["compiled"] is True, seen
    assert seen["defer_after_import"] == 0, seen  # once torch._dynamo is there, torch's own wrappers are used


# without the deferral, the meta device's first use imports torch._dynamo: what the test above measures is the change
PLAIN = """
import sys, torch
torch.empty(2, 3, device="meta") + 1
print("torch._dynamo" in sys.modules)
"""


def test_without_the_deferral_the_meta_devices_first_use_imports_dynamo():
    run = subprocess.run([sys.executable, "-c", PLAIN], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split()[-1] == "True"
