"""Chapter 2 mistakes: learned tables looked up and resized the ways learners get it wrong.

Two more mistakes of this chapter show up as an exception or a device error rather than as a wrong
answer, so the checks' hints name them instead: a missing bounds check (nn.Embedding raises
IndexError past max_len) and default positions built on the CPU (caught on the meta device).
"""

from __future__ import annotations

import torch.nn.functional as F

from .. import ch02_learned_absolute as ref
from .mistake import Mistake


def _resize(kind):
    def resize(table, new_len):
        if kind == "wrong_axis":
            # (1, L, d): F.interpolate resizes the last axis, the features
            return F.interpolate(table[None], size=new_len, mode="linear", align_corners=False)[0]  # (L, new_len)
        if kind == "nearest":
            out = F.interpolate(table.T[None], size=new_len, mode="nearest")[0]  # (d, new_len)
        else:
            out = F.interpolate(table.T[None], size=new_len, mode="linear",
                                align_corners=kind == "align_corners")[0]  # (d, new_len)
        return out if kind == "not_transposed_back" else out.T

    return resize


class _IgnoresPositionIds(ref.LearnablePositionalEncoding):
    def forward(self, x, position_ids=None):
        return super().forward(x)


_RESIZE_TEXT = {
    "align_corners": "the first and last rows are pinned to the old first and last rows (align_corners=True, or "
                     "torch.linspace(0, L-1, new_len) as source positions); use align_corners=False: new row j "
                     "comes from x_j = (j + 1/2) L / new_len - 1/2",
    "wrong_axis": "you interpolated along the features, not the positions: F.interpolate resizes the last axis, "
                  "so pass table.T[None] (1, d, L) and transpose the result back",
    "not_transposed_back": "the result is the (d, new_len) tensor: transpose it back to (new_len, d)",
    "nearest": "rows are copied (nearest neighbour) instead of blended: use linear interpolation, "
               "T'[j] = (1 - w) T[i0] + w T[i1]",
}

MISTAKES = {f"resize_{kind}": Mistake("resize_position_table", text, _resize(kind))
            for kind, text in _RESIZE_TEXT.items()}
MISTAKES["learned_ignores_position_ids"] = Mistake(
    "LearnablePositionalEncoding",
    "the given position_ids were ignored (the output used rows 0 .. seq-1): look up "
    "self.position_embeddings(position_ids) when position_ids is given",
    _IgnoresPositionIds,
)
