# Generated from course/07_train_short_test_long/properties.py by `python -m grader build`: edit there.
"""Chapter 7 properties: a decoder learns a fixed batch in a few steps, and trains its scheme too."""

from __future__ import annotations

import math

from .messages import msg
from .probes_base import registry

PROPERTIES, prop = registry()


@prop
def trains(got, max_ratio=0.5):
    """The loss on one fixed batch falls below max_ratio of its first value, and the scheme's table moves."""
    losses = [float(v) for v in got["losses"].tolist()]
    bad = [n for n, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        return False, msg("the loss became {loss} at step {step}", loss=str(losses[bad[0]]), step=bad[0])
    first, last = losses[0], losses[-1]
    if not last <= max_ratio * first:
        return False, msg("the loss went from {first:.3f} to {last:.3f} in {steps} AdamW steps on one fixed batch; a "
                          "model that learns memorises it (below {target:.3f}). Check that the logits come from the "
                          "tied head and that nothing in forward cuts the graph (torch.no_grad, .detach(), .item())",
                          first=first, last=last, steps=len(losses), target=max_ratio * first)
    if not got["scheme_moved"] > 0:
        return False, msg("the loss fell, but the scheme's learned bias table never changed: keep the scheme as an "
                          "attribute (self.scheme = scheme) so that model.parameters() includes its parameters")
    return True, ""


@prop
def repeatable(got):
    """Two identical calls of a module in eval mode give the same output, bit for bit."""
    if got["first"].shape == got["second"].shape and bool((got["first"] == got["second"]).all()):
        return True, ""
    largest = float((got["first"].double() - got["second"].double()).abs().max())
    return False, msg("two identical calls in eval mode differ (by up to {largest:.3g}): something random is active "
                      "in eval, such as dropout: nn.Dropout modules switch off with .eval(), but "
                      "F.dropout(..., training=True) or SDPA's dropout_p do not (pass dropout_p only when "
                      "self.training)", largest=largest)


@prop
def mask_in_q_dtype(got):
    """SDPA never received a floating attn_mask of another dtype than the queries."""
    mismatched = int(got["mismatched"].sum())
    if mismatched == 0:
        return True, ""
    return False, msg("{mismatched} of {calls} SDPA calls got a float32 attn_mask with bfloat16 queries: cast the bias "
                      "to q's dtype first, bias.to(q.dtype) (SDPA on a GPU refuses a mask of another dtype)",
                      mismatched=mismatched, calls=str(got["calls"]))
