"""Chapter 2 mistakes: learned tables looked up and resized the ways learners get it wrong.

Only the implementations; each mistake's message is declared in exercises.py beside this file. The mistakes here are
the ones whose behaviour reaches further than the statements their declaration rewrites; the others are derived
(grader/mistakes.py).

Two more mistakes of this chapter show up as an exception or a device error rather than as a wrong
answer, so the checks' hints name them instead: a missing bounds check (nn.Embedding raises
IndexError past max_len) and default positions built on the CPU (caught on the meta device).
"""

from __future__ import annotations

import torch.nn.functional as F


def _resize(kind):
    def resize(table, new_len):
        if kind == "wrong_axis":
            # (1, L, d): F.interpolate resizes the last axis, the features
            return F.interpolate(table[None], size=new_len, mode="linear", align_corners=False)[0]  # (L, new_len)
        out = F.interpolate(table.T[None], size=new_len, mode="linear",
                            align_corners=kind == "align_corners")[0]  # (d, new_len)
        return out if kind == "not_transposed_back" else out.T

    return resize


IMPLEMENTATIONS = {
    "resize_align_corners": _resize("align_corners"),  # end rows pinned (align_corners=True)
    "resize_wrong_axis": _resize("wrong_axis"),  # interpolated along the features
    "resize_not_transposed_back": _resize("not_transposed_back"),  # left as (d, new_len)
}

