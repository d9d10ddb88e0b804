# mistake: only the resized patch rows are returned: the class-token (prefix) rows are set aside and never put back in front.
import torch
import torch.nn.functional as F


def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    H, W = old_grid
    H2, W2 = new_grid
    if num_prefix_tokens < 0 or table.shape[0] != num_prefix_tokens + H * W:
        raise ValueError(f"table has {table.shape[0]} rows, old_grid={old_grid} needs {num_prefix_tokens + H * W}")
    if H2 <= 0 or W2 <= 0:
        raise ValueError(f"new_grid={new_grid} must have positive sides")
    dim = table.shape[1]
    patch_rows = table[num_prefix_tokens:].float()
    # rows are (r, c) row-major -> (H, W, d) -> (1, d, H, W)
    img = patch_rows.view(H, W, dim).permute(2, 0, 1).unsqueeze(0)
    img = F.interpolate(img, size=(H2, W2), mode=mode, align_corners=False, antialias=antialias)
    new_rows = img[0].permute(1, 2, 0).reshape(H2 * W2, dim)
    return new_rows.to(table.dtype)


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model={d_model} is not a positive multiple of 4")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h} and grid_w={grid_w} must be positive")
    D = d_model // 4
    i = torch.arange(D, dtype=torch.float64, device=device)
    w = base ** (-i / D)
    r = torch.arange(grid_h, dtype=torch.float64, device=device).repeat_interleave(grid_w)
    c = torch.arange(grid_w, dtype=torch.float64, device=device).repeat(grid_h)
    ang_r = torch.outer(r, w)
    ang_c = torch.outer(c, w)
    pe = torch.cat([torch.sin(ang_r), torch.cos(ang_r), torch.sin(ang_c), torch.cos(ang_c)], dim=1)
    return pe.to(torch.float32)


def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    if head_dim <= 0 or head_dim % 4 != 0:
        raise ValueError(f"head_dim={head_dim} must be a positive multiple of 4")
    if position_ids.ndim != 2 or position_ids.shape[1] != 2:
        raise ValueError(f"position_ids should be (N, 2), got {tuple(position_ids.shape)}")
    dim = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32, device=position_ids.device) / dim))
    r = position_ids[:, 0].float()
    c = position_ids[:, 1].float()
    freqs = torch.cat([r[:, None] * inv_freq, c[:, None] * inv_freq], dim=-1)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    g = torch.Generator().manual_seed(123)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=g)
    ids = torch.tensor([[r, c] for r in range(grid) for c in range(grid)])
    P = grid * grid
    try:
        Q = rope_fn(q.repeat(1, 1, P, 1), ids)
        K = rope_fn(k.repeat(1, 1, P, 1), ids)
    except Exception:
        return False
    if not torch.is_tensor(Q) or not torch.is_tensor(K):
        return False
    if Q.shape != (n_vectors, 1, P, head_dim) or K.shape != Q.shape:
        return False
    if not torch.isfinite(Q).all() or not torch.isfinite(K).all():
        return False
    Q = Q[:, 0].double()
    K = K[:, 0].double()
    qn = q.reshape(n_vectors, head_dim).double().norm(dim=1)
    kn = k.reshape(n_vectors, head_dim).double().norm(dim=1)
    # norms
    if ((Q.norm(dim=-1) - qn[:, None]).abs() > rtol * qn[:, None]).any():
        return False
    if ((K.norm(dim=-1) - kn[:, None]).abs() > rtol * kn[:, None]).any():
        return False
    # moves with the row and with the column
    for X, n in ((Q, qn), (K, kn)):
        down = (X[:, ::grid][:, :grid] - X[:, :1]).norm(dim=-1).max(dim=1).values
        right = (X[:, :grid] - X[:, :1]).norm(dim=-1).max(dim=1).values
        if (down <= rtol * n).any() or (right <= rtol * n).any():
            return False
    # relative scores
    S = torch.einsum("vad,vbd->vab", Q, K)
    tol = rtol * qn * kn
    pairs_a, pairs_b = [], []
    for a in range(P):
        ra, ca = divmod(a, grid)
        for b in range(P):
            rb, cb = divmod(b, grid)
            dr, dc = rb - ra, cb - ca
            r0, c0 = max(0, -dr), max(0, -dc)
            pairs_a.append(r0 * grid + c0)
            pairs_b.append((r0 + dr) * grid + (c0 + dc))
    ref = S[:, pairs_a, pairs_b].reshape(n_vectors, P, P)
    return bool(((S - ref).abs() <= tol[:, None, None]).all())


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.int64, device=token_types.device)
    img_list = [] if image_grid_thw is None else image_grid_thw.tolist()
    vid_list = [] if video_grid_thw is None else video_grid_thw.tolist()
    img_idx, vid_idx = 0, 0
    m = spatial_merge_size
    for b in range(B):
        if attention_mask is None:
            where = list(range(L))
        else:
            where = [p for p in range(L) if attention_mask[b, p] != 0]
        types = [int(token_types[b, p]) for p in where]
        t_ids, h_ids, w_ids = [], [], []
        s = 0
        n = 0
        while n < len(types):
            kind = types[n]
            e = n
            while e < len(types) and types[e] == kind:
                e += 1
            count = e - n
            if kind == 0:
                for x in range(count):
                    t_ids.append(s + x)
                    h_ids.append(s + x)
                    w_ids.append(s + x)
                s += count
            else:
                if kind == 1:
                    if img_idx >= len(img_list):
                        raise ValueError("more image groups than image_grid_thw rows")
                    T, H, W = img_list[img_idx]
                    img_idx += 1
                else:
                    if vid_idx >= len(vid_list):
                        raise ValueError("more video groups than video_grid_thw rows")
                    T, H, W = vid_list[vid_idx]
                    vid_idx += 1
                gh, gw = H // m, W // m
                if T * gh * gw != count:
                    raise ValueError(f"vision group of {count} tokens but grid_thw {(T, H, W)} gives {T * gh * gw}")
                for t in range(T):
                    for i in range(gh):
                        for j in range(gw):
                            t_ids.append(s + t)
                            h_ids.append(s + i)
                            w_ids.append(s + j)
                s += max(gh, gw)
            n = e
        if where:
            out[0, b, where] = torch.tensor(t_ids, device=out.device)
            out[1, b, where] = torch.tensor(h_ids, device=out.device)
            out[2, b, where] = torch.tensor(w_ids, device=out.device)
    return out


def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section={mrope_section} must be 3 numbers summing to {head_dim // 2}")
    if position_ids.ndim != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got {tuple(position_ids.shape)}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim))
    st, sh, sw = mrope_section
    t_ang = position_ids[0].float()[..., None] * inv_freq[:st]
    h_ang = position_ids[1].float()[..., None] * inv_freq[st:st + sh]
    w_ang = position_ids[2].float()[..., None] * inv_freq[st + sh:]
    ang = torch.cat([t_ang, h_ang, w_ang], dim=-1)
    emb = torch.cat([ang, ang], dim=-1)
    return emb.cos(), emb.sin()
