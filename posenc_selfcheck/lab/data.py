"""The text: Python's own reference manual, shipped with every CPython as `pydoc_data.topics`.

Bytes are the tokens (a vocabulary of 256), so nothing needs a tokenizer or a download. The topics are
joined in sorted order: the same Python version gives the same bytes on every machine. The first 90%
is for training, the rest is held out for evaluation.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import torch

from ..messages import msg

VOCAB_SIZE = 256
HELD_OUT = 0.1
BOS = 0  # the NUL byte: never in the text, so it can mark the start of a window


@lru_cache(maxsize=1)
def corpus_bytes():
    """The reference manual's topics, joined in sorted order, as UTF-8 bytes."""
    try:
        from pydoc_data.topics import topics
    except ImportError:  # a Python stripped of its documentation: the standard library's docstrings instead
        import importlib

        names = ("abc", "argparse", "collections", "dataclasses", "functools", "inspect", "itertools", "json",
                 "logging", "pathlib", "re", "statistics", "string", "textwrap", "typing", "unittest")
        topics = {}
        for name in names:
            module = importlib.import_module(name)
            for attr in sorted(dir(module)):
                doc = getattr(getattr(module, attr), "__doc__", None)
                if isinstance(doc, str) and len(doc) > 200:
                    topics[f"{name}.{attr}"] = doc
    return "\n\n".join(topics[key] for key in sorted(topics)).encode("utf-8")


@dataclass(frozen=True)
class Corpus:
    train: torch.Tensor  # (N_train,) int64 byte values
    held_out: torch.Tensor  # (N_held_out,)
    sha256: str  # of the bytes: tells two machines' corpora apart

    def describe(self):
        """What the text is (a message: results.json keeps its English)."""
        return msg("{total:,} bytes of Python's reference manual ({train:,} for training, {held_out:,} held out), "
                   "sha256 {sha256}", total=len(self.train) + len(self.held_out), train=len(self.train),
                   held_out=len(self.held_out), sha256=self.sha256[:12])


@lru_cache(maxsize=1)
def load_corpus():
    raw = corpus_bytes()
    tokens = torch.frombuffer(bytearray(raw), dtype=torch.uint8).long()  # (N,)
    split = int(len(tokens) * (1 - HELD_OUT))
    return Corpus(tokens[:split], tokens[split:], hashlib.sha256(raw).hexdigest())


def random_windows(tokens, batch_size, length, generator):
    """A batch of `batch_size` windows of `length` + 1 tokens at random offsets: inputs and next-token targets."""
    starts = torch.randint(0, len(tokens) - length - 1, (batch_size,), generator=generator)  # (B,)
    rows = starts[:, None] + torch.arange(length + 1)  # (B, L + 1)
    window = tokens[rows]
    return window[:, :-1], window[:, 1:]  # (B, L) each


def with_bos(inputs, targets):
    """Windows that start with BOS: [BOS, x_0 .. x_{L-2}] predicting [x_0 .. x_{L-1}]: the same length, and a
    first token that is the same in every window."""
    bos = torch.full_like(inputs[:, :1], BOS)
    return torch.cat((bos, inputs[:, :-1]), dim=1), inputs  # (B, L) each


def eval_windows(tokens, length, n_tokens):
    """The first `n_tokens` held-out tokens cut into non-overlapping windows of `length` (Press et al.'s
    nonoverlapping evaluation): every evaluation length scores the same tokens."""
    if n_tokens % length:
        raise ValueError(f"n_tokens={n_tokens} must be a multiple of length={length}")
    if n_tokens + 1 > len(tokens):
        raise ValueError(f"only {len(tokens)} held-out tokens, {n_tokens + 1} asked for")
    inputs = tokens[:n_tokens].view(-1, length)  # (n_tokens / L, L)
    targets = tokens[1:n_tokens + 1].view(-1, length)
    return inputs, targets
