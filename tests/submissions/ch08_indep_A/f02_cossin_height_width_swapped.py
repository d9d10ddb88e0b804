# mistake: ids read as (time, x, y), so the height block turns by the width id and the width block by the height id.
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError(f"table should be 2-D, got {tuple(table.shape)}")
    H, W = old_grid
    H2, W2 = new_grid
    if H <= 0 or W <= 0:
        raise ValueError(f"old_grid has a non-positive side: {old_grid}")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid has a non-positive side: {new_grid}")
    if table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"table has {table.shape[0]} rows, old_grid={old_grid} needs {num_prefix_tokens + H * W}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode {mode!r} not supported")
    cls_rows = table[:num_prefix_tokens]
    pos = table[num_prefix_tokens:].float()
    dim = pos.shape[-1]
    pos = pos.view(1, H, W, dim).permute(0, 3, 1, 2)
    pos = F.interpolate(pos, size=(H2, W2), mode=mode, align_corners=False, antialias=antialias)
    pos = pos.permute(0, 2, 3, 1).reshape(H2 * W2, dim)
    return torch.cat([cls_rows, pos.to(table.dtype)])


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model must be a multiple of 4, got {d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h / grid_w must be positive, got {grid_h}, {grid_w}")
    D = d_model // 4
    freqs = base ** (-torch.arange(D, dtype=torch.float64, device=device) / D)
    r = torch.arange(grid_h, dtype=torch.float64, device=device).repeat_interleave(grid_w)
    c = torch.arange(grid_w, dtype=torch.float64, device=device).repeat(grid_h)
    ar = torch.outer(r, freqs)
    ac = torch.outer(c, freqs)
    pe = torch.cat([torch.sin(ar), torch.cos(ar), torch.sin(ac), torch.cos(ac)], dim=1)
    return pe.to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim must be a positive multiple of 4, got {head_dim}")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got {tuple(position_ids.shape)}")
    dim = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=position_ids.device) / dim))
    row_ang = position_ids[:, 0].float()[:, None] * inv_freq
    col_ang = position_ids[:, 1].float()[:, None] * inv_freq
    ang = torch.cat([row_ang, col_ang], dim=-1)
    full = torch.cat([ang, ang], dim=-1)
    return full.cos(), full.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(123)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    ids = torch.tensor([[r, c] for r in range(grid) for c in range(grid)])
    n = ids.shape[0]
    try:
        rq = rope_fn(q.repeat(1, 1, n, 1), ids)
        rk = rope_fn(k.repeat(1, 1, n, 1), ids)
    except Exception:
        return False
    if not isinstance(rq, torch.Tensor) or not isinstance(rk, torch.Tensor):
        return False
    if rq.shape != (n_vectors, 1, n, head_dim) or rk.shape != rq.shape:
        return False
    rq = rq[:, 0].double()
    rk = rk[:, 0].double()
    if not torch.isfinite(rq).all() or not torch.isfinite(rk).all():
        return False
    qn = q.double().reshape(n_vectors, head_dim).norm(dim=-1)
    kn = k.double().reshape(n_vectors, head_dim).norm(dim=-1)
    # norms
    if ((rq.norm(dim=-1) - qn[:, None]).abs() > rtol * qn[:, None]).any():
        return False
    if ((rk.norm(dim=-1) - kn[:, None]).abs() > rtol * kn[:, None]).any():
        return False
    # it must move along a column (row changes) and along a row (column changes)
    for v in range(n_vectors):
        down = max((rq[v, r * grid] - rq[v, 0]).norm().item() for r in range(1, grid))
        right = max((rq[v, c] - rq[v, 0]).norm().item() for c in range(1, grid))
        if down <= rtol * qn[v].item() or right <= rtol * qn[v].item():
            return False
    # relative scores
    S = torch.einsum("vad,vbd->vab", rq, rk)
    tol = rtol * (qn * kn)
    for a in range(n):
        ra, ca = divmod(a, grid)
        for_b = []
        for b in range(n):
            rb, cb = divmod(b, grid)
            dr, dc = rb - ra, cb - ca
            r0, c0 = max(0, -dr), max(0, -dc)
            for_b.append(((r0 * grid + c0), (r0 + dr) * grid + (c0 + dc)))
        i0 = torch.tensor([p[0] for p in for_b])
        j0 = torch.tensor([p[1] for p in for_b])
        if ((S[:, a, :] - S[:, i0, j0]).abs() > tol[:, None]).any():
            return False
    return True


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    imgs = [] if image_grid_thw is None else image_grid_thw.tolist()
    vids = [] if video_grid_thw is None else video_grid_thw.tolist()
    img_i = 0
    vid_i = 0
    m = spatial_merge_size
    for b in range(B):
        if attention_mask is None:
            idx = list(range(L))
        else:
            idx = [i for i in range(L) if attention_mask[b, i].item() != 0]
        types = [token_types[b, i].item() for i in idx]
        rows = []
        s = 0
        p = 0
        while p < len(types):
            q = p
            while q < len(types) and types[q] == types[p]:
                q += 1
            n = q - p
            if types[p] == 0:
                for k in range(n):
                    rows.append([s + k, s + k, s + k])
                s += n
            else:
                if types[p] == 1:
                    if img_i >= len(imgs):
                        raise ValueError("more image groups than image_grid_thw rows")
                    t, h, w = imgs[img_i]
                    img_i += 1
                else:
                    if vid_i >= len(vids):
                        raise ValueError("more video groups than video_grid_thw rows")
                    t, h, w = vids[vid_i]
                    vid_i += 1
                gh, gw = h // m, w // m
                if t * gh * gw != n:
                    raise ValueError(f"vision group has {n} tokens but grid_thw {t, h, w} needs {t * gh * gw}")
                for tt in range(t):
                    for i in range(gh):
                        for j in range(gw):
                            rows.append([s + tt, s + i, s + j])
                s += max(gh, gw)
            p = q
        if rows:
            out[:, b, idx] = torch.tensor(rows, dtype=torch.long, device=token_types.device).T
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section {list(mrope_section)} must be three sizes summing to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids should be (3, batch, seq), not {tuple(position_ids.shape)}")
    t_ids, x_ids, y_ids = position_ids.float()  # (B, L) each: time, x, y
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim)
    n_t, n_h, n_w = mrope_section
    freqs_t = t_ids[..., None] * inv_freq[:n_t]
    freqs_h = y_ids[..., None] * inv_freq[n_t:n_t + n_h]
    freqs_w = x_ids[..., None] * inv_freq[n_t + n_h:]
    freqs = torch.cat([freqs_t, freqs_h, freqs_w], dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()
