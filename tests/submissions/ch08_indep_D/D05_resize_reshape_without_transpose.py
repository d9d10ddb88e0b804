# mistake: the (H*W, d) patch rows are reshaped straight to (1, d, H, W) (and back with a reshape) without moving the channel axis, scrambling rows and channels.
import math

import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError(f"table should be 2-D, got {table.ndim} dims")
    H, W = int(old_grid[0]), int(old_grid[1])
    H2, W2 = int(new_grid[0]), int(new_grid[1])
    if H <= 0 or W <= 0:
        raise ValueError(f"old_grid has a side <= 0: {old_grid}")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid has a side <= 0: {new_grid}")
    if table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"table has {table.shape[0]} rows, old_grid={tuple(old_grid)} needs {num_prefix_tokens + H * W}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode {mode!r} not supported")
    P = num_prefix_tokens
    cls_rows = table[:P]
    patch_rows = table[P:]
    D = table.shape[1]
    x = patch_rows.to(torch.float32).reshape(1, D, H, W)
    x = F.interpolate(x, size=(H2, W2), mode=mode, align_corners=False, antialias=antialias)
    x = x.reshape(H2 * W2, D)
    return torch.cat([cls_rows, x.to(table.dtype)])


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model must be a positive multiple of 4 (d_model={d_model})")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h} / grid_w={grid_w} must be > 0")
    n_freq = d_model // 4
    i = torch.arange(n_freq, dtype=torch.float64, device=device)
    freqs = base ** (-i / n_freq)
    ys = torch.arange(grid_h, dtype=torch.float64, device=device).repeat_interleave(grid_w)
    xs = torch.arange(grid_w, dtype=torch.float64, device=device).repeat(grid_h)
    a_y = torch.outer(ys, freqs)
    a_x = torch.outer(xs, freqs)
    pe = torch.cat([torch.sin(a_y), torch.cos(a_y), torch.sin(a_x), torch.cos(a_x)], dim=1)
    return pe.to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim={head_dim} is not a positive multiple of 4")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids should be (N, 2), got {tuple(position_ids.shape)}")
    half = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, half, 2, device=position_ids.device, dtype=torch.float32) / half))
    row = position_ids[:, 0].float()
    col = position_ids[:, 1].float()
    ang = torch.cat([row[:, None] * inv_freq, col[:, None] * inv_freq], dim=-1)
    full = torch.cat([ang, ang], dim=-1)
    return full.cos(), full.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(123)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    ids = torch.tensor([[r, c] for r in range(grid) for c in range(grid)])
    n = grid * grid
    try:
        fq = rope_fn(q.repeat(1, 1, n, 1), ids)
        fk = rope_fn(k.repeat(1, 1, n, 1), ids)
    except Exception:
        return False
    if not torch.is_tensor(fq) or not torch.is_tensor(fk):
        return False
    if fq.shape != (n_vectors, 1, n, head_dim) or fk.shape != fq.shape:
        return False
    if not bool(torch.isfinite(fq).all()) or not bool(torch.isfinite(fk).all()):
        return False
    fq = fq[:, 0].double()
    fk = fk[:, 0].double()
    nq = q.reshape(n_vectors, head_dim).double().norm(dim=-1)
    nk = k.reshape(n_vectors, head_dim).double().norm(dim=-1)
    # norms
    if ((fq.norm(dim=-1) - nq[:, None]).abs() > rtol * nq[:, None]).any():
        return False
    if ((fk.norm(dim=-1) - nk[:, None]).abs() > rtol * nk[:, None]).any():
        return False
    # changes with the row / with the column
    for fx, nx in ((fq, nq), (fk, nk)):
        down = (fx[:, 0:n:grid] - fx[:, :1]).norm(dim=-1).max(dim=-1).values
        right = (fx[:, 0:grid] - fx[:, :1]).norm(dim=-1).max(dim=-1).values
        if (down <= rtol * nx).any() or (right <= rtol * nx).any():
            return False
    # relative scores
    S = torch.einsum("vad,vbd->vab", fq, fk)
    tol = rtol * (nq * nk)
    ref_a, ref_b = [], []
    for a in range(n):
        ra, ca = divmod(a, grid)
        for b in range(n):
            rb, cb = divmod(b, grid)
            dr, dc = rb - ra, cb - ca
            r0, c0 = max(0, -dr), max(0, -dc)
            ref_a.append(r0 * grid + c0)
            ref_b.append((r0 + dr) * grid + (c0 + dc))
    ref = S[:, ref_a, ref_b].reshape(n_vectors, n, n)
    return bool(((S - ref).abs() <= tol[:, None, None]).all())


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.int64, device=token_types.device)
    img_list = image_grid_thw.tolist() if image_grid_thw is not None else []
    vid_list = video_grid_thw.tolist() if video_grid_thw is not None else []
    img_i = 0
    vid_i = 0
    m = spatial_merge_size
    for b in range(B):
        if attention_mask is None:
            idx = list(range(L))
        else:
            idx = [p for p in range(L) if attention_mask[b, p] == 1]
        types = [int(token_types[b, p]) for p in idx]
        t_ids, h_ids, w_ids = [], [], []
        cur = 0
        p = 0
        while p < len(types):
            kind = types[p]
            q = p
            while q < len(types) and types[q] == kind:
                q += 1
            count = q - p
            if kind == 0:
                for s in range(count):
                    t_ids.append(cur + s)
                    h_ids.append(cur + s)
                    w_ids.append(cur + s)
                cur += count
            else:
                if kind == 1:
                    if img_i >= len(img_list):
                        raise ValueError("more image groups than image_grid_thw rows")
                    T, Hp, Wp = img_list[img_i]
                    img_i += 1
                else:
                    if vid_i >= len(vid_list):
                        raise ValueError("more video groups than video_grid_thw rows")
                    T, Hp, Wp = vid_list[vid_i]
                    vid_i += 1
                gh, gw = Hp // m, Wp // m
                if T * gh * gw != count:
                    raise ValueError(f"group has {count} tokens but grid_thw {(T, Hp, Wp)} needs {T * gh * gw}")
                for t in range(T):
                    for y in range(gh):
                        for x in range(gw):
                            t_ids.append(cur + t)
                            h_ids.append(cur + y)
                            w_ids.append(cur + x)
                cur += max(gh, gw)
            p = q
        if idx:
            out[:, b, idx] = torch.tensor([t_ids, h_ids, w_ids], dtype=torch.int64, device=out.device)
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section {mrope_section} should be 3 numbers summing to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids should be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim))
    st, sh, sw = mrope_section
    pid = position_ids.float()
    parts = [
        pid[0][..., None] * inv_freq[:st],
        pid[1][..., None] * inv_freq[st:st + sh],
        pid[2][..., None] * inv_freq[st + sh:],
    ]
    ang = torch.cat(parts, dim=-1)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()
