"""Results as plain data: tensors in safetensors, everything else in JSON. Neither can carry code."""

from __future__ import annotations

import json
import os

import torch
from safetensors.torch import load_file, save_file


def split(results):
    """{name: {key: value}} -> (flat tensors "name|key", JSON-able rest)."""
    tensors, plain = {}, {}
    for name, result in results.items():
        plain[name] = {}
        for key, value in result.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{name}|{key}"] = value.contiguous()
            else:
                plain[name][key] = value
    return tensors, plain


def join(tensors, plain):
    results = {name: dict(values) for name, values in plain.items()}
    for flat, value in tensors.items():
        name, key = flat.split("|", 1)
        results.setdefault(name, {})[key] = value
    return results


def save(path_stem, results):
    """Write <stem>.json and <stem>.safetensors, each atomically (write, then rename)."""
    tensors, plain = split(results)
    tmp = f"{path_stem}.safetensors.tmp"
    save_file(tensors, tmp)
    os.replace(tmp, f"{path_stem}.safetensors")
    tmp = f"{path_stem}.json.tmp"
    with open(tmp, "w") as f:
        json.dump(plain, f, indent=1, sort_keys=True)
    os.replace(tmp, f"{path_stem}.json")


def load(path_stem):
    with open(f"{path_stem}.json") as f:
        plain = json.load(f)
    return join(load_file(f"{path_stem}.safetensors"), plain)
