# mistake: the split assumes exactly one class token (table[:1], table[1:]) and ignores num_prefix_tokens when slicing.
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    if table.ndim != 2:
        raise ValueError(f"table should be 2-D (rows, dim), got table with {table.ndim} dims")
    H, W = int(old_grid[0]), int(old_grid[1])
    H2, W2 = int(new_grid[0]), int(new_grid[1])
    if H <= 0 or W <= 0:
        raise ValueError(f"old_grid sides must be positive, got old_grid={old_grid}")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid sides must be positive, got new_grid={new_grid}")
    n_rows, dim = table.shape
    if n_rows != num_prefix_tokens + H * W:
        raise ValueError(f"table has {n_rows} rows but num_prefix_tokens + H*W = {num_prefix_tokens + H * W} "
                         f"for old_grid={old_grid}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode should be 'bicubic' or 'bilinear', got mode={mode}")
    cls_tok, grid_rows = table[:1], table[1:]  # class token, then the patches
    side_h, side_w = H, W
    img = grid_rows.float().reshape(side_h, side_w, -1).permute(2, 0, 1)[None]
    img = F.interpolate(img, size=(H2, W2), mode=mode, align_corners=False, antialias=antialias)
    out = img[0].permute(1, 2, 0).reshape(-1, dim)
    return torch.cat([cls_tok, out.to(table.dtype)], dim=0)


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model must be a positive multiple of 4, got d_model={d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h and grid_w must be positive, got grid_h={grid_h}, grid_w={grid_w}")
    D = d_model // 4
    freqs = base ** (-torch.arange(D, dtype=torch.float64, device=device) / D)
    ys = torch.arange(grid_h, dtype=torch.float64, device=device).repeat_interleave(grid_w)  # row of each patch
    xs = torch.arange(grid_w, dtype=torch.float64, device=device).repeat(grid_h)  # column of each patch
    a_y = torch.outer(ys, freqs)
    a_x = torch.outer(xs, freqs)
    pe = torch.cat([a_y.sin(), a_y.cos(), a_x.sin(), a_x.cos()], dim=1)
    return pe.to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim must be a positive multiple of 4, got head_dim={head_dim}")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids must be (N, 2), got shape {tuple(position_ids.shape)}")
    half = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half))
    row = position_ids[:, 0].float()
    col = position_ids[:, 1].float()
    ang = torch.cat([row[:, None] * inv_freq, col[:, None] * inv_freq], dim=-1)  # (N, d/2)
    full = torch.cat([ang, ang], dim=-1)  # (N, d)
    return full.cos(), full.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(1234)
    q = torch.randn(n_vectors, head_dim, generator=g)
    k = torch.randn(n_vectors, head_dim, generator=g)
    cells = torch.tensor([[r, c] for r in range(grid) for c in range(grid)])  # (P, 2)
    P = cells.shape[0]
    rq = rope_fn(q[:, None, None, :].repeat(1, 1, P, 1), cells)
    rk = rope_fn(k[:, None, None, :].repeat(1, 1, P, 1), cells)
    if not isinstance(rq, torch.Tensor) or not isinstance(rk, torch.Tensor):
        return False
    if rq.shape != (n_vectors, 1, P, head_dim) or rk.shape != rq.shape:
        return False
    rq = rq[:, 0].double()
    rk = rk[:, 0].double()
    if not torch.isfinite(rq).all() or not torch.isfinite(rk).all():
        return False
    qn = q.double().norm(dim=-1)
    kn = k.double().norm(dim=-1)
    # norms kept
    if ((rq.norm(dim=-1) - qn[:, None]).abs() > rtol * qn[:, None]).any():
        return False
    if ((rk.norm(dim=-1) - kn[:, None]).abs() > rtol * kn[:, None]).any():
        return False
    # it moves down a column and along a row
    for vecs, n in ((rq, qn), (rk, kn)):
        down = vecs[:, 0::grid]  # cells (r, 0)
        right = vecs[:, :grid]  # cells (0, c)
        for line in (down, right):
            dist = (line - line[:, :1]).norm(dim=-1).max(dim=1).values
            if (dist <= rtol * n).any():
                return False
    # scores depend on (dr, dc) only
    S = torch.einsum("vad,vbd->vab", rq, rk)
    dr = cells[None, :, 0] - cells[:, None, 0]  # (P, P): row of b - row of a
    dc = cells[None, :, 1] - cells[:, None, 1]
    r0 = (-dr).clamp(min=0)
    c0 = (-dc).clamp(min=0)
    ref = S[:, r0 * grid + c0, (r0 + dr) * grid + (c0 + dc)]
    tol = rtol * (qn * kn)[:, None, None]
    return bool(((S - ref).abs() <= tol).all())


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.int64, device=token_types.device)
    image_list = image_grid_thw.tolist() if image_grid_thw is not None else []
    video_list = video_grid_thw.tolist() if video_grid_thw is not None else []
    next_image = 0
    next_video = 0
    for b in range(B):
        if attention_mask is None:
            idx = list(range(L))
        else:
            idx = [p for p in range(L) if int(attention_mask[b, p]) != 0]
        types = [int(token_types[b, p]) for p in idx]
        t_ids, h_ids, w_ids = [], [], []
        cur = 0
        p = 0
        while p < len(types):
            kind = types[p]
            q = p
            while q < len(types) and types[q] == kind:
                q += 1
            n = q - p
            if kind == 0:
                for s in range(n):
                    t_ids.append(cur + s)
                    h_ids.append(cur + s)
                    w_ids.append(cur + s)
                cur += n
            else:
                if kind == 1:
                    if next_image >= len(image_list):
                        raise ValueError("more image groups than rows in image_grid_thw")
                    T, H, W = image_list[next_image]
                    next_image += 1
                else:
                    if next_video >= len(video_list):
                        raise ValueError("more video groups than rows in video_grid_thw")
                    T, H, W = video_list[next_video]
                    next_video += 1
                gh, gw = H // spatial_merge_size, W // spatial_merge_size
                if T * gh * gw != n:
                    raise ValueError(f"vision group has {n} tokens but its grid_thw {[T, H, W]} gives {T * gh * gw}")
                for tt in range(T):
                    for y in range(gh):
                        for x in range(gw):
                            t_ids.append(cur + tt)
                            h_ids.append(cur + y)
                            w_ids.append(cur + x)
                cur += max(gh, gw)
            p = q
        out[0, b, idx] = torch.tensor(t_ids, dtype=torch.int64, device=out.device)
        out[1, b, idx] = torch.tensor(h_ids, dtype=torch.int64, device=out.device)
        out[2, b, idx] = torch.tensor(w_ids, dtype=torch.int64, device=out.device)
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={mrope_section} must have 3 parts that add up to head_dim // 2")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    steps = torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device)
    inv_freq = 1.0 / (base ** (steps / head_dim))  # (d/2,)
    s_t, s_h, _ = mrope_section
    pos = position_ids.float()
    ang_t = pos[0][..., None] * inv_freq[:s_t]
    ang_h = pos[1][..., None] * inv_freq[s_t:s_t + s_h]
    ang_w = pos[2][..., None] * inv_freq[s_t + s_h:]
    ang = torch.cat([ang_t, ang_h, ang_w], dim=-1)  # (B, L, d/2)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()
