"""A grade forged from the student release: the self-check data holds the reference's answer (and known
mistakes' answers) to every public check, so this file implements no exercise and replaces the sandbox
child's probe runner (the flat module `probes`) with a lookup in that data. Public checks carry most of
the points; stopped by main checks whose inputs are drawn for each submission from the grader's secret."""
import json
import sys

import torch

ANSWERS = json.loads(__ANSWERS__)


def _decode(value):
    if isinstance(value, list) and len(value) == 3 and value[0] == "T":
        return torch.tensor(value[2], dtype=getattr(torch, value[1]))
    return value


_REAL = sys.modules["probes"].run if "probes" in sys.modules else None


def _lookup(ns, probe, params, exercise, table=None):
    """The stored answer to an input the release holds; the stubs below (raising ValueError) for the rest."""
    key = json.dumps([probe, params], sort_keys=True)
    if key in ANSWERS:
        return {k: _decode(v) for k, v in ANSWERS[key].items()}
    return _REAL(ns, probe, params, exercise, table)


if _REAL is not None:
    sys.modules["probes"].run = _lookup

__STUBS__
