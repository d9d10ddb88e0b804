# mistake: the grid counters restart for every batch row, so row 2's images reuse image_grid_thw[0].
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
    m = spatial_merge_size
    for b in range(B):
        n_img = 0
        n_vid = 0
        valid = [i for i in range(L) if attention_mask is None or int(attention_mask[b, i]) == 1]
        tt = [int(token_types[b, i]) for i in valid]
        res = []
        start = 0
        i = 0
        while i < len(tt):
            j = i
            while j < len(tt) and tt[j] == tt[i]:
                j += 1
            if tt[i] == 0:
                res += [[start + x] * 3 for x in range(j - i)]
                start += j - i
            else:
                if tt[i] == 1:
                    if image_grid_thw is None or n_img >= len(image_grid_thw):
                        raise ValueError("more image groups than image_grid_thw rows")
                    T, H, W = image_grid_thw[n_img].tolist()
                    n_img += 1
                else:
                    if video_grid_thw is None or n_vid >= len(video_grid_thw):
                        raise ValueError("more video groups than video_grid_thw rows")
                    T, H, W = video_grid_thw[n_vid].tolist()
                    n_vid += 1
                h, w = H // m, W // m
                if T * h * w != j - i:
                    raise ValueError(f"group of {j - i} tokens does not match grid_thw {(T, H, W)}")
                res += [[start + a, start + r, start + c] for a in range(T) for r in range(h) for c in range(w)]
                start += max(h, w)
            i = j
        if res:
            out[:, b, valid] = torch.tensor(res, dtype=torch.long, device=token_types.device).T
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section {mrope_section} must be 3 numbers summing to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=position_ids.device).float() / head_dim))
    st, sh, sw = mrope_section
    t_ang = position_ids[0].float()[..., None] * inv_freq[:st]
    h_ang = position_ids[1].float()[..., None] * inv_freq[st:st + sh]
    w_ang = position_ids[2].float()[..., None] * inv_freq[st + sh:]
    ang = torch.cat([t_ang, h_ang, w_ang], dim=-1)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()
