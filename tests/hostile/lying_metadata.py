"""Tamper with the probe harness inside the sandbox: pack a float64 answer but report it as float32, so
the dtype check would pass. The grader reads the tensor itself and refuses the mismatch."""
import sys

import torch

_honest = shift_matrix  # noqa: F821  (defined by the honest solution above)


def _lie_about_dtypes():
    probes = sys.modules["probes"]
    pack = probes._pack

    def lying_pack(result, key, value):
        out = pack(result, key, value)
        if f"{key}:dtype" in out:
            out[f"{key}:dtype"] = "float32"
        return out

    probes._pack = lying_pack


def shift_matrix(k, d_model, base=10000.0):
    _lie_about_dtypes()
    return _honest(k, d_model, base).to(torch.float64)
