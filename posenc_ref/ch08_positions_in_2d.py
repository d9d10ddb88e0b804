"""Generated from course/08_positions_in_2d/chapter.py by `python -m grader build`: edit the chapter."""

# from course/08_positions_in_2d/chapter.py#py-0da28cf8
import torch
import torch.nn.functional as F  # noqa: F401  (used by the exercises: unused in the unfinished notebook)


# from course/08_positions_in_2d/chapter.py#py-7fc3a3ea
def resize_position_table_2d(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
    """A (P + H·W, d) table of P prefix rows and a row-major H x W grid -> (P + H'·W', d), the grid resized as an
    image: F.interpolate((1, d, H, W), size=(H', W'), mode, align_corners=False, antialias) in float32, as timm's
    resample_abs_pos_embed. Prefix rows (class token) are kept as they are."""
    # Hint: the idea: set the P prefix rows aside; the other rows are an H x W image with d channels (row-major:
    #       patch (r, c) is row P + r·W + c); resize that image with F.interpolate, flatten it back, put the
    #       prefix in front.
    #       Shapes: table (P + H·W, d); grid (H·W, d) -> image (1, d, H, W) -> (1, d, H', W') -> (H'·W', d)
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D (rows, d), got shape {tuple(table.shape)}")
    (old_h, old_w), (new_h, new_w) = (int(s) for s in old_grid), (int(s) for s in new_grid)
    if min(old_h, old_w) <= 0:
        raise ValueError(f"old_grid must have positive sides, got old_grid={tuple(old_grid)}")
    if min(new_h, new_w) <= 0:
        raise ValueError(f"new_grid must have positive sides, got new_grid={tuple(new_grid)}")
    if num_prefix_tokens < 0 or table.shape[0] != num_prefix_tokens + old_h * old_w:
        raise ValueError(f"table has {table.shape[0]} rows; old_grid={tuple(old_grid)} with "
                         f"num_prefix_tokens={num_prefix_tokens} needs {num_prefix_tokens + old_h * old_w}")
    if mode not in ("bicubic", "bilinear"):
        raise ValueError(f"mode must be 'bicubic' or 'bilinear', got mode={mode!r}")
    d = table.shape[1]
    prefix, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]  # (P, d), (H·W, d)
    # row r·W + c -> pixel (r, c) of a d-channel image
    image = grid.float().reshape(old_h, old_w, d).permute(2, 0, 1)[None]  # (1, d, H, W)
    image = F.interpolate(image, size=(new_h, new_w), mode=mode, align_corners=False, antialias=antialias)
    resized = image[0].permute(1, 2, 0).reshape(new_h * new_w, d)  # (H'·W', d), row-major again
    return torch.cat([prefix, resized.to(table.dtype)], dim=0)  # (P + H'·W', d)


# from course/08_positions_in_2d/chapter.py#py-2a2ce962
def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    """(H·W, d): [sin(r ω) | cos(r ω) | sin(c ω) | cos(c ω)] for patch (r, c) = row r·W + c, ω_i = base^(-i/(d/4)),
    i = 0 .. d/4 - 1. Computed in float64, returned in float32, as transformers'
    build_2d_sinusoidal_position_embedding."""
    # Hint: the idea: chapter 1's table twice, over d/4 frequencies each: a (sin, cos) block for the row of the
    #       patch and one for its column, concatenated. The row of patch k = r·W + c is k // W, its column k % W.
    #       Shapes: omega (d/4,); rows, cols (H·W,); angles (H·W, d/4) each; the table (H·W, d)
    if d_model <= 0 or d_model % 4:
        raise ValueError(f"d_model must be a positive multiple of 4, got d_model={d_model}")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h and grid_w must be positive, got grid_h={grid_h}, grid_w={grid_w}")
    quarter = d_model // 4
    # ω_i = base^(-i/D), D = d/4
    omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / quarter)  # (D,)
    patch = torch.arange(grid_h * grid_w, device=device)  # (H·W,) row-major
    rows, cols = (patch // grid_w).double(), (patch % grid_w).double()  # (H·W,) each
    row_angles, col_angles = rows[:, None] * omega, cols[:, None] * omega  # (H·W, D) each
    table = torch.cat([row_angles.sin(), row_angles.cos(), col_angles.sin(), col_angles.cos()], dim=-1)
    return table.float()  # (H·W, d)


# from course/08_positions_in_2d/chapter.py#py-cee712eb
def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
    """(cos, sin), each (N, head_dim) float32, for position_ids (N, 2) of (row, column): angles
    [r θ_0 .. r θ_{d/4-1}, c θ_0 .. c θ_{d/4-1}] with θ_j = base^(-2j/(d/2)), tables cat(angles, angles)
    (half layout), as Qwen2-VL's vision rotary embedding."""
    # Hint: the idea: chapter 4's frequency ladder over half the head (d/2 dimensions, d/4 frequencies), one copy
    #       multiplied by the rows, one by the columns; put them side by side, then repeat them for the half layout.
    #       Shapes: θ (d/4,); angles (N, 2, d/4) -> (N, d/2); cos and sin (N, d)
    if head_dim <= 0 or head_dim % 4:
        raise ValueError(f"head_dim must be a positive multiple of 4, got head_dim={head_dim}")
    if position_ids.dim() != 2 or position_ids.shape[-1] != 2:
        raise ValueError(f"position_ids must be (N, 2) of (row, column), got shape {tuple(position_ids.shape)}")
    half = head_dim // 2
    # θ_j = base^(-2j/(d/2)), j = 0 .. d/4 - 1
    theta = 1.0 / base ** (torch.arange(0, half, 2, dtype=torch.float32, device=position_ids.device) / half)  # (d/4,)
    angles = position_ids.float()[..., None] * theta  # (N, 2, d/4): rows, then columns
    angles = angles.flatten(-2)  # (N, d/2) = [r θ | c θ]
    emb = torch.cat((angles, angles), dim=-1)  # (N, d)
    return emb.cos(), emb.sin()


# from course/08_positions_in_2d/chapter.py#py-3bed2c7a
def check_axial_property(rope_fn, head_dim, grid=12, n_vectors=4, rtol=1e-3):
    """True when rope_fn(x, position_ids) keeps norms, makes <f(q, a), f(k, b)> a function of b - a (a
    displacement on the grid) only, and changes with the row and with the column.

    The same random q (and k) is placed on every cell of a grid x grid grid (row-major), so one call gives
    f(q, a) for every cell a. Every score S[a, b] must equal the score of the same displacement from the pair
    that starts at (max(0, -Δr), max(0, -Δc)). Errors are measured relative to |q| |k|."""
    # Hint: the idea: chapter 4's test with cells instead of positions. Put the same random q (and k) on every
    #       cell, call rope_fn once, then test norms, scores against the same displacement, and movement along a
    #       row and along a column.
    #       Shapes: positions (P, 2) with P = grid²; f(q) (V, 1, P, d); scores S (V, P, P)
    rng = torch.Generator().manual_seed(0)
    q = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)  # (V, 1, 1, d)
    k = torch.randn(n_vectors, 1, 1, head_dim, generator=rng)
    rows, cols = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    positions = torch.stack((rows.flatten(), cols.flatten()), dim=-1)  # (P, 2), cell (r, c) at r·grid + c
    count = grid * grid
    fq = rope_fn(q.expand(-1, 1, count, -1).contiguous(), positions)  # (V, 1, P, d)
    fk = rope_fn(k.expand(-1, 1, count, -1).contiguous(), positions)
    if not (isinstance(fq, torch.Tensor) and isinstance(fk, torch.Tensor)
            and fq.shape == (n_vectors, 1, count, head_dim) and fk.shape == fq.shape
            and torch.isfinite(fq).all() and torch.isfinite(fk).all()):
        return False
    fq, fk = fq[:, 0].double(), fk[:, 0].double()  # (V, P, d)
    for x, fx in ((q, fq), (k, fk)):
        norm = x[:, 0].double().norm(dim=-1)  # (V, 1)
        # 1. |f(x, a)| = |x|
        if ((fx.norm(dim=-1) - norm).abs() > rtol * norm).any():
            return False
        # 3. and 4.: f(x, (r, 0)) moves away from f(x, (0, 0)) for some r, and f(x, (0, c)) for some c
        along_col0, along_row0 = fx[:, ::grid], fx[:, :grid]  # (V, grid, d): cells (r, 0) and (0, c)
        for line in (along_col0, along_row0):
            moved = (line - line[:, :1]).norm(dim=-1).amax(dim=-1, keepdim=True)  # (V, 1)
            if (moved <= rtol * norm).any():
                return False
    # 2. S[a, b] = S[start, start + (b - a)] with start = (max(0, -Δr), max(0, -Δc))
    scores = fq @ fk.transpose(-1, -2)  # (V, P, P)
    delta = positions[None, :, :] - positions[:, None, :]  # (P, P, 2): b - a
    start = (-delta).clamp(min=0)  # (P, P, 2)
    end = start + delta
    same = scores[:, start[..., 0] * grid + start[..., 1], end[..., 0] * grid + end[..., 1]]  # (V, P, P)
    scale = q[:, 0, 0].double().norm(dim=-1) * k[:, 0, 0].double().norm(dim=-1)  # (V,)
    return bool(((scores - same).abs() <= rtol * scale[:, None, None]).all())


# from course/08_positions_in_2d/chapter.py#py-8ab731fe
def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    """(3, B, L) ids (time, height, width): text advances all three together; an image or video group starting
    at s gives token (t, i, j) of its (T, H/m, W/m) grid the ids (s + t, s + i, s + j), and the text after it
    starts at s + max(H, W)/m. Padded positions (attention_mask 0) are skipped and keep 0 (Qwen2-VL's
    get_rope_index, transformers 5.23)."""
    # Hint: the idea: walk each row's real tokens group by group (a run of one kind) with a counter s: a text run
    #       of n tokens takes s .. s + n - 1 in all three ids; a vision run takes the next grid, whose ids are
    #       s + (t, i, j) on a meshgrid; then s moves on by max(H, W)/m.
    #       Shapes: token_types (B, L); one group's ids (3, n); the output (3, B, L)
    batch, length = token_types.shape
    position_ids = torch.zeros(3, batch, length, dtype=torch.long, device=token_types.device)
    grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
             2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
    for b in range(batch):
        keep = torch.ones(length, dtype=torch.bool, device=token_types.device)
        if attention_mask is not None:
            keep = attention_mask[b].bool()
        kinds = token_types[b][keep].tolist()
        pieces, start, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                # text: (s, s, s), (s + 1, s + 1, s + 1), ...
                pieces.append(torch.arange(start, start + j - i).expand(3, -1))  # (3, n)
                start += j - i
            else:
                grid = next(grids[kinds[i]], None)
                if grid is None:
                    raise ValueError(f"more vision groups than rows in image_grid_thw / video_grid_thw (row {b})")
                t, h, w = grid[0], grid[1] // spatial_merge_size, grid[2] // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"a group of {j - i} vision tokens does not match its grid_thw {grid} "
                                     f"(T·H·W/m² = {t * h * w} with spatial_merge_size={spatial_merge_size})")
                # token (t, i, j) of the group: (s + t, s + i, s + j)
                tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + start)  # (3, T·h·w)
                start += max(h, w)
            i = j
        if pieces:
            position_ids[:, b, keep] = torch.cat(pieces, dim=1).to(position_ids.device)
    return position_ids


# from course/08_positions_in_2d/chapter.py#py-609b0774
def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
    """(cos, sin), each (B, L, head_dim) float32: angles p_s(i)·θ_i with θ_i = base^(-2i/d) and s(i) = time, height
    or width for i in the first, second or third of mrope_section's blocks; tables cat(angles, angles)
    (Qwen2-VL's multimodal RoPE)."""
    # Hint: the idea: compute chapter 4's angles for each of the three ids, then build each token's d/2 angles
    #       by taking the first block of frequencies from the time angles, the second from the height angles, the
    #       third from the width angles.
    #       Shapes: θ (d/2,); angles (3, B, L, d/2); the chosen angles (B, L, d/2); cos and sin (B, L, d)
    if len(mrope_section) != 3 or sum(mrope_section) != head_dim // 2:
        raise ValueError(f"mrope_section must have 3 parts summing to head_dim // 2 = {head_dim // 2}, "
                         f"got mrope_section={list(mrope_section)}")
    if position_ids.dim() != 3 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must be (3, batch, seq), got shape {tuple(position_ids.shape)}")
    # θ_i = base^(-2i/d)
    theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=position_ids.device) / head_dim)
    angles = position_ids.float()[..., None] * theta  # (3, B, L, d/2)
    blocks = angles.split(list(mrope_section), dim=-1)  # 3 x (3, B, L, s_k)
    # block k of the frequencies turns by id k (time, height, width)
    chosen = torch.cat([block[k] for k, block in enumerate(blocks)], dim=-1)  # (B, L, d/2)
    emb = torch.cat((chosen, chosen), dim=-1)  # (B, L, d)
    return emb.cos(), emb.sin()
