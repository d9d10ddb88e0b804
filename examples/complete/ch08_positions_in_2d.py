"""Chapter 8, as a learner might finish it: correct, but written independently of the reference (the grid
resized through F.interpolate on an unflattened view with einops-like moves spelled in torch, tables built with
meshgrid and einsum, the M-RoPE ids written as per-token loops over each group, the sections chosen with a
per-frequency index instead of split)."""

import functools

import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError(f"expected a 2-D table, got table.shape={tuple(table.shape)}")
    h, w = int(old_grid[0]), int(old_grid[1])
    nh, nw = int(new_grid[0]), int(new_grid[1])
    if h < 1 or w < 1:
        raise ValueError(f"bad old_grid={old_grid}")
    if nh < 1 or nw < 1:
        raise ValueError(f"bad new_grid={new_grid}")
    if table.shape[0] - num_prefix_tokens != h * w:
        raise ValueError(f"{table.shape[0] - num_prefix_tokens} grid rows do not fit old_grid={old_grid}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"unsupported mode={mode}")
    patches = table[num_prefix_tokens:].to(torch.float32)
    img = patches.T.reshape(1, -1, h, w)  # (1, d, H, W)
    img = F.interpolate(img, size=(nh, nw), mode=mode, align_corners=False, antialias=antialias)
    flat = img.flatten(2)[0].T  # (H'·W', d)
    return torch.cat((table[:num_prefix_tokens], flat.to(table.dtype)))


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model < 4 or d_model % 4 != 0:
        raise ValueError(f"d_model={d_model} must be divisible by 4")
    if grid_h < 1 or grid_w < 1:
        raise ValueError(f"grid_h={grid_h}, grid_w={grid_w} must be positive")
    n = d_model // 4
    omega = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=device),
                      -torch.arange(n, dtype=torch.float64, device=device) / n)
    hh, ww = torch.meshgrid(torch.arange(grid_h, dtype=torch.float64, device=device),
                            torch.arange(grid_w, dtype=torch.float64, device=device), indexing="ij")
    eh = torch.einsum("p,f->pf", hh.reshape(-1), omega)
    ew = torch.einsum("p,f->pf", ww.reshape(-1), omega)
    return torch.cat((torch.sin(eh), torch.cos(eh), torch.sin(ew), torch.cos(ew)), 1).to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim % 4 or head_dim <= 0:
        raise ValueError(f"head_dim={head_dim} must be a positive multiple of 4")
    if position_ids.ndim != 2 or position_ids.size(1) != 2:
        raise ValueError(f"position_ids must have shape (N, 2), got {tuple(position_ids.shape)}")
    dim = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=position_ids.device).float() / dim))
    freqs_h = torch.outer(position_ids[:, 0].float(), inv_freq)
    freqs_w = torch.outer(position_ids[:, 1].float(), inv_freq)
    emb = torch.cat([freqs_h, freqs_w, freqs_h, freqs_w], dim=-1)
    return emb.cos(), emb.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    torch.manual_seed(1)
    q = torch.randn(n_vectors, 1, 1, head_dim, dtype=torch.float64)
    k = torch.randn(n_vectors, 1, 1, head_dim, dtype=torch.float64)
    cells = [(r, c) for r in range(grid) for c in range(grid)]
    ids = torch.tensor(cells)
    try:
        fq = rope_fn(q.float().repeat(1, 1, len(cells), 1), ids)
        fk = rope_fn(k.float().repeat(1, 1, len(cells), 1), ids)
    except Exception:
        return False
    if not torch.is_tensor(fq) or fq.shape != (n_vectors, 1, len(cells), head_dim) or fk.shape != fq.shape:
        return False
    fq, fk = fq.double()[:, 0], fk.double()[:, 0]
    if not (torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    qn, kn = q.reshape(n_vectors, -1).norm(dim=1), k.reshape(n_vectors, -1).norm(dim=1)
    if ((fq.norm(dim=-1) - qn[:, None]).abs() > rtol * qn[:, None]).any():
        return False
    if ((fk.norm(dim=-1) - kn[:, None]).abs() > rtol * kn[:, None]).any():
        return False
    origin = fq[:, 0]
    down = max(float((fq[:, r * grid] - origin).norm(dim=-1).min()) for r in range(1, grid))
    right = max(float((fq[:, c] - origin).norm(dim=-1).min()) for c in range(1, grid))
    if down <= rtol * float(qn.min()) or right <= rtol * float(qn.min()):
        return False
    scores = torch.einsum("vad,vbd->vab", fq, fk)
    rows_a, rows_b = _first_pair_per_displacement(grid)
    same = scores[:, rows_a, rows_b].reshape(scores.shape)
    return bool(((scores - same).abs() <= rtol * (qn * kn)[:, None, None]).all())


@functools.lru_cache(maxsize=8)
def _first_pair_per_displacement(grid):
    """For every pair of cells (a, b), the first pair (in row-major order) with the same displacement b - a."""
    cells = [(r, c) for r in range(grid) for c in range(grid)]
    first = {}
    rows_a, rows_b = [], []
    for a, (ra, ca) in enumerate(cells):
        for b, (rb, cb) in enumerate(cells):
            fa, fb = first.setdefault((rb - ra, cb - ca), (a, b))
            rows_a.append(fa)
            rows_b.append(fb)
    return rows_a, rows_b


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    bsz, seq = token_types.shape
    result = torch.zeros((3, bsz, seq), dtype=torch.int64, device=token_types.device)
    images = [] if image_grid_thw is None else [tuple(g) for g in image_grid_thw.tolist()]
    videos = [] if video_grid_thw is None else [tuple(g) for g in video_grid_thw.tolist()]
    for b in range(bsz):
        real = [i for i in range(seq) if attention_mask is None or int(attention_mask[b, i]) == 1]
        kinds = [int(token_types[b, i]) for i in real]
        ids = []
        nxt = 0
        pos = 0
        while pos < len(kinds):
            kind = kinds[pos]
            end = pos
            while end < len(kinds) and kinds[end] == kind:
                end += 1
            if kind == 0:
                for _ in range(end - pos):
                    ids.append((nxt, nxt, nxt))
                    nxt += 1
            else:
                queue = images if kind == 1 else videos
                if not queue:
                    raise ValueError("no grid_thw left for a group of vision tokens")
                t, h, w = queue.pop(0)
                h, w = h // spatial_merge_size, w // spatial_merge_size
                if t * h * w != end - pos:
                    raise ValueError(f"group of {end - pos} tokens, but grid_thw gives {t * h * w}")
                for ti in range(t):
                    for hi in range(h):
                        for wi in range(w):
                            ids.append((nxt + ti, nxt + hi, nxt + wi))
                nxt += max(h, w)
            pos = end
        for slot, i in enumerate(real):
            result[:, b, i] = torch.tensor(ids[slot])
    return result


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) * 2 != head_dim:
        raise ValueError(f"mrope_section={mrope_section} must be 3 numbers adding up to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim))
    which = torch.cat([torch.full((n,), axis, dtype=torch.long) for axis, n in enumerate(mrope_section)])
    which = which.to(position_ids.device)
    pos = position_ids.float().permute(1, 2, 0)[..., which]  # (B, L, d/2): the id each frequency uses
    freqs = pos * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()
