"""Training and evaluation loops for chapter 7's small decoders (next-token and masked-token objectives)."""

from __future__ import annotations

import math
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

from ..columns import pad
from ..messages import msg, render


class Progress:
    """A one-line progress bar: `label [=====>    ] 120/400  loss 2.31  0:07`, redrawn at most twice a second."""

    def __init__(self, label, total, stream=None, width=24):
        self.label, self.total, self.width = label, total, width
        self.stream = stream or sys.stdout
        self.start = self.last = time.perf_counter()

    def update(self, done, loss):
        now = time.perf_counter()
        if done < self.total and now - self.last < 0.5:
            return
        self.last = now
        filled = int(self.width * done / self.total)
        bar = "=" * filled + (">" if filled < self.width else "") + " " * (self.width - filled - 1)
        elapsed = int(now - self.start)
        loss_text = render(msg("loss {loss:.3f}", loss=loss))
        self.stream.write(f"\r{pad(self.label, 28)} [{bar}] {done}/{self.total}  {loss_text}  "
                          f"{elapsed // 60}:{elapsed % 60:02d}")
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def initialize(model, seed, std=0.02):
    """Re-initialise everything outside the position scheme the same way for every learner and scheme:
    weights of Linear and Embedding layers N(0, std^2), biases 0, LayerNorm 1 and 0 (GPT-2's choice).
    The scheme's own parameters keep the initialisation of the chapter that defined them."""
    generator = torch.Generator().manual_seed(seed)
    skip = set(model.scheme.modules()) if isinstance(getattr(model, "scheme", None), nn.Module) else set()
    with torch.no_grad():
        for module in model.modules():
            if module in skip:
                continue
            if isinstance(module, nn.Embedding):  # N(0, 1/d): scaled by sqrt(d) in the model, entries of order one
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) / module.embedding_dim ** 0.5)
            elif isinstance(module, nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * std)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.LayerNorm) and module.elementwise_affine:
                module.weight.fill_(1.0)
                if module.bias is not None:
                    module.bias.zero_()
    return model


def learning_rate(step, steps, peak, warmup):
    """Linear warm-up to `peak`, then a cosine down to peak/10."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def logits_of(model, inputs):
    out = model(inputs)
    return out[0] if isinstance(out, (tuple, list)) else out  # (B, L, V)


def masked_batch(inputs, mask_id, generator, rate=0.15):
    """BERT's masked-token objective, simplified: `rate` of the positions become `mask_id`, and only they are
    scored. Returns (corrupted inputs, targets with -100 where nothing is scored)."""
    chosen = torch.rand(inputs.shape, generator=generator) < rate  # (B, L)
    return inputs.masked_fill(chosen, mask_id), inputs.masked_fill(~chosen, -100)


def train(model, sample, steps, lr, warmup=100, label="training", objective="lm", mask_id=None, seed=0,
          weight_decay=0.01, clip=1.0, log_every=None):
    """AdamW on batches from `sample(generator) -> (inputs, targets)`. Returns the loss curve (mean loss of
    each block of `log_every` steps), the wall time, and the median time of one step."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
    log_every = log_every or max(1, steps // 50)
    progress = Progress(label, steps)
    curve, block, step_times = [], [], []
    model.train()
    start = time.perf_counter()
    for step in range(steps):
        inputs, targets = sample(generator)
        if objective == "mlm":
            inputs, targets = masked_batch(inputs, mask_id, generator)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, lr, warmup)
        tick = time.perf_counter()
        logits = logits_of(model, inputs)  # (B, L, V)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        step_times.append(time.perf_counter() - tick)
        block.append(loss.item())
        if len(block) == log_every or step == steps - 1:
            curve.append(sum(block) / len(block))
            block = []
        progress.update(step + 1, curve[-1] if curve else loss.item())
    model.eval()
    step_times.sort()
    return {"loss_curve": curve, "log_every": log_every, "seconds": time.perf_counter() - start,
            "ms_per_step": 1e3 * step_times[len(step_times) // 2]}


@torch.no_grad()
def evaluate(model, inputs, targets, batch_size=16):
    """Mean next-token loss (nats per byte) over all windows, and the mean loss at each position in the window."""
    model.eval()
    per_position, count = torch.zeros(inputs.shape[1], dtype=torch.float64), 0
    for start in range(0, len(inputs), batch_size):
        x, y = inputs[start:start + batch_size], targets[start:start + batch_size]
        logits = logits_of(model, x)  # (b, L, V)
        loss = F.cross_entropy(logits.transpose(1, 2).float(), y, reduction="none")  # (b, L)
        per_position += loss.double().sum(0)
        count += len(x)
    per_position /= count
    return {"loss": per_position.mean().item(), "per_position": per_position.tolist()}
