# mistake: resize_position_table_2d returns only the resized grid rows and forgets to put the class-token (prefix) rows back in front.
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError(f"table should be 2-D (rows, dim), got table.shape={tuple(table.shape)}")
    H, W = int(old_grid[0]), int(old_grid[1])
    newH, newW = int(new_grid[0]), int(new_grid[1])
    if H <= 0 or W <= 0:
        raise ValueError(f"old_grid needs positive sides, got old_grid={tuple(old_grid)}")
    if newH <= 0 or newW <= 0:
        raise ValueError(f"new_grid needs positive sides, got new_grid={tuple(new_grid)}")
    if table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"table has {table.shape[0]} rows; old_grid={tuple(old_grid)} with "
                         f"num_prefix_tokens={num_prefix_tokens} needs {num_prefix_tokens + H * W}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode={mode!r} is not supported")
    # skip the class token, it has no place on the grid
    grid_rows = table[num_prefix_tokens:]
    x = grid_rows.float().reshape(H, W, -1).permute(2, 0, 1)[None]
    x = F.interpolate(x, size=(newH, newW), mode=mode, align_corners=False, antialias=antialias)
    x = x[0].permute(1, 2, 0).reshape(newH * newW, -1)
    return x.to(table.dtype)


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model must be a positive multiple of 4, got d_model={d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid sides must be positive, got grid_h={grid_h}, grid_w={grid_w}")
    D = d_model // 4
    i = torch.arange(D, dtype=torch.float64, device=device)
    omega = base ** (-i / D)
    r = torch.arange(grid_h, dtype=torch.float64, device=device).repeat_interleave(grid_w)
    c = torch.arange(grid_w, dtype=torch.float64, device=device).repeat(grid_h)
    ang_r = torch.outer(r, omega)
    ang_c = torch.outer(c, omega)
    pe = torch.cat([ang_r.sin(), ang_r.cos(), ang_c.sin(), ang_c.cos()], dim=1)
    return pe.to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim must be a positive multiple of 4, got head_dim={head_dim}")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got shape {tuple(position_ids.shape)}")
    half = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half))
    rows = position_ids[:, 0].float()
    cols = position_ids[:, 1].float()
    freqs = torch.cat([rows[:, None] * inv_freq, cols[:, None] * inv_freq], dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(123)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    cells = [(r, c) for r in range(grid) for c in range(grid)]
    ids = torch.tensor(cells)
    n = len(cells)
    try:
        Q = rope_fn(q.repeat(1, 1, n, 1), ids)
        K = rope_fn(k.repeat(1, 1, n, 1), ids)
    except Exception:
        return False
    if not isinstance(Q, torch.Tensor) or not isinstance(K, torch.Tensor):
        return False
    if Q.shape != (n_vectors, 1, n, head_dim) or K.shape != Q.shape:
        return False
    Q, K = Q[:, 0].double(), K[:, 0].double()
    if not (torch.isfinite(Q).all() and torch.isfinite(K).all()):
        return False
    qn = q.reshape(n_vectors, head_dim).double().norm(dim=-1)
    kn = k.reshape(n_vectors, head_dim).double().norm(dim=-1)
    for X, xn in ((Q, qn), (K, kn)):
        if ((X.norm(dim=-1) - xn[:, None]).abs() > rtol * xn[:, None]).any():
            return False
        down = (X[:, ::grid] - X[:, :1]).norm(dim=-1).amax(dim=-1)
        right = (X[:, :grid] - X[:, :1]).norm(dim=-1).amax(dim=-1)
        if (down <= rtol * xn).any() or (right <= rtol * xn).any():
            return False
    S = torch.einsum("vad,vbd->vab", Q, K)
    r, c = ids[:, 0], ids[:, 1]
    dr = r[None, :] - r[:, None]
    dc = c[None, :] - c[:, None]
    sr, sc = (-dr).clamp(min=0), (-dc).clamp(min=0)
    ref = S[:, sr * grid + sc, (sr + dr) * grid + (sc + dc)]
    tol = rtol * (qn * kn)[:, None, None]
    return bool(((S - ref).abs() <= tol).all())


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros((3, B, L), dtype=torch.int64, device=token_types.device)
    grids = {1: image_grid_thw.tolist() if image_grid_thw is not None else [],
             2: video_grid_thw.tolist() if video_grid_thw is not None else []}
    used = {1: 0, 2: 0}
    m = spatial_merge_size
    for b in range(B):
        if attention_mask is None:
            idx = list(range(L))
        else:
            idx = [j for j in range(L) if int(attention_mask[b, j]) != 0]
        types = [int(token_types[b, j]) for j in idx]
        ids_t, ids_h, ids_w = [], [], []
        cur = 0
        k = 0
        while k < len(types):
            kind = types[k]
            stop = k
            while stop < len(types) and types[stop] == kind:
                stop += 1
            n = stop - k
            if kind == 0:
                for p in range(cur, cur + n):
                    ids_t.append(p)
                    ids_h.append(p)
                    ids_w.append(p)
                cur += n
            else:
                if used[kind] >= len(grids[kind]):
                    raise ValueError(f"more vision groups than rows in image_grid_thw / video_grid_thw (batch row {b})")
                T, H, W = grids[kind][used[kind]]
                used[kind] += 1
                gh, gw = H // m, W // m
                if T * gh * gw != n:
                    raise ValueError(f"group of {n} vision tokens but grid_thw {[T, H, W]} gives {T * gh * gw}")
                for t in range(T):
                    for i in range(gh):
                        for j in range(gw):
                            ids_t.append(cur + t)
                            ids_h.append(cur + i)
                            ids_w.append(cur + j)
                cur += max(gh, gw)
            k = stop
        if idx:
            where = torch.tensor(idx, device=token_types.device)
            out[:, b, where] = torch.tensor([ids_t, ids_h, ids_w], dtype=torch.int64, device=token_types.device)
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={list(mrope_section)} must be 3 numbers summing to head_dim // 2")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim))
    t, h, w = position_ids.float()  # (B, L) each
    s_t, s_h, s_w = mrope_section
    ang = torch.cat([t[..., None] * inv_freq[:s_t],
                     h[..., None] * inv_freq[s_t:s_t + s_h],
                     w[..., None] * inv_freq[s_t + s_h:]], dim=-1)  # (B, L, head_dim // 2)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()
