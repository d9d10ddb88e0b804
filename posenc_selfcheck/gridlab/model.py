"""A small ViT-style encoder over a grid of patches, and the position schemes it is trained with.

A scheme has the two hooks of chapter 7 that a vision model uses: `embed(x, grid)` adds a vector per patch to
the input, once; `rotate(t, grid)` rotates each head's queries and keys. `grid` is the side G of the square
grid being run, which may differ from the training grid. The maths of every scheme comes from the given
implementation (`impl`): this file holds no solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .data import CLASSES, KINDS, grid_positions


class NoPositions(nn.Module):
    def embed(self, x, grid):
        return x

    def rotate(self, t, grid):
        return t


class LearnedTable(NoPositions):
    """A learned (G0*G0, d) table (ViT); at another grid size it is resized as timm does (bicubic)."""

    def __init__(self, impl, d_model, train_grid):
        super().__init__()
        self.resize, self.train_grid = impl.resize_position_table_2d, train_grid
        self.table = nn.Parameter(nn.init.trunc_normal_(torch.empty(train_grid * train_grid, d_model), std=0.02))

    def embed(self, x, grid):
        table = self.table
        if grid != self.train_grid:
            table = self.resize(table, (self.train_grid,) * 2, (grid, grid), num_prefix_tokens=0)
        return x + table.to(x.dtype)  # (B, N, d)


class Sincos2d(NoPositions):
    """MAE's fixed 2-D sinusoidal table, built for whatever grid is run (positions past G0 - 1 are new)."""

    def __init__(self, impl, d_model):
        super().__init__()
        self.table_fn, self.d_model = impl.sincos_2d_table, d_model

    def embed(self, x, grid):
        return x + self.table_fn(grid, grid, self.d_model).to(x.device, x.dtype)


class AxialRoPE(NoPositions):
    """Qwen2-VL's axial 2-D RoPE on queries and keys. With `scale`, positions are multiplied by it (2-D
    position interpolation: a larger grid squeezed into the trained range of angles)."""

    def __init__(self, impl, head_dim, base=100.0):
        super().__init__()
        self.cos_sin, self.apply = impl.axial_rope_cos_sin, impl.apply_rope
        self.head_dim, self.base, self.scale = head_dim, base, 1.0
        self.tables = {}  # (grid, scale, device) -> (cos, sin): the tables hold no parameter

    def rotate(self, t, grid):
        key = (grid, self.scale, t.device)
        if key not in self.tables:
            positions = grid_positions(grid).to(t.device)  # (N, 2)
            if self.scale != 1.0:
                positions = positions.float() * self.scale
            self.tables[key] = self.cos_sin(positions, self.head_dim, base=self.base)  # (N, head_dim) each
        cos, sin = self.tables[key]
        return self.apply(t, cos.to(t.dtype), sin.to(t.dtype))  # (B, H, N, head_dim)


class Block(nn.Module):
    def __init__(self, d_model, num_heads, scheme):
        super().__init__()
        self.num_heads, self.scheme = num_heads, scheme
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, grid):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k = self.scheme.rotate(q, grid), self.scheme.rotate(k, grid)  # (B, H, N, head_dim)
        out = F.scaled_dot_product_attention(q, k, v)  # bidirectional, as in ViT
        x = x + self.proj(out.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class GridEncoder(nn.Module):
    """Patch kinds -> embeddings (+ scheme.embed) -> blocks -> a 9-way answer per patch."""

    def __init__(self, d_model, num_layers, num_heads, scheme):
        super().__init__()
        self.scheme = scheme
        self.embed_kinds = nn.Embedding(KINDS, d_model)
        self.blocks = nn.ModuleList([Block(d_model, num_heads, scheme) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, CLASSES)

    def forward(self, kinds):
        grid = round(kinds.shape[1] ** 0.5)
        x = self.scheme.embed(self.embed_kinds(kinds), grid)  # (B, N, d)
        for block in self.blocks:
            x = block(x, grid)
        return self.head(self.norm(x))  # (B, N, 9)
