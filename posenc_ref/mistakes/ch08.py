"""Chapter 8 mistakes: 2-D tables resized and built, axial RoPE tables and M-RoPE ids the ways learners get them
wrong. Each is a complete wrong implementation, written the way the slip happens.

IMPLEMENTATIONS maps each mistake's name to its wrong implementation; its exercise and message are declared in
grader/checks/ch08.py.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


# ---- resize_position_table_2d ---------------------------------------------------------------------------
def _resize(kind):
    def resize(table, old_grid, new_grid, num_prefix_tokens=1, mode="bicubic", antialias=True):
        (h, w), (nh, nw) = old_grid, new_grid
        d = table.shape[1]
        if kind == "class_token_with_grid":  # chapter 2's 1-D resize of every row, class token included
            rows = num_prefix_tokens + nh * nw
            return F.interpolate(table.T[None].float(), size=rows, mode="linear",
                                 align_corners=False)[0].T.to(table.dtype)
        prefix, grid = table[:num_prefix_tokens], table[num_prefix_tokens:]
        image = grid.float().reshape(h, w, d).permute(2, 0, 1)[None]  # (1, d, H, W)
        size = (nw, nh) if kind == "size_w_h" else (nh, nw)
        image = F.interpolate(image, size=size, mode=mode, align_corners=kind == "align_corners",
                              antialias=antialias and kind != "no_antialias")
        out = image[0].permute(2, 1, 0) if kind == "column_major" else image[0].permute(1, 2, 0)
        return torch.cat([prefix, out.reshape(-1, d).to(table.dtype)])

    return resize


# ---- sincos_2d_table ------------------------------------------------------------------------------------
def _sincos(kind):
    def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
        quarter = d_model // 4
        omega = 1.0 / base ** (torch.arange(quarter, dtype=torch.float64, device=device) / quarter)
        k = torch.arange(grid_h * grid_w, device=device)
        rows, cols = (k % grid_h, k // grid_h) if kind == "column_major" else (k // grid_w, k % grid_w)
        a_r, a_c = rows.double()[:, None] * omega, cols.double()[:, None] * omega
        if kind == "interleaved":  # chapter 1's table of width d/2 per axis
            blocks = [torch.stack((a.sin(), a.cos()), dim=-1).flatten(-2) for a in (a_r, a_c)]
        else:
            blocks = [a_r.sin(), a_r.cos(), a_c.sin(), a_c.cos()]
            if kind == "columns_first":
                blocks = blocks[2:] + blocks[:2]
        return torch.cat(blocks, dim=-1).float()

    return sincos_2d_table


# ---- axial_rope_cos_sin ---------------------------------------------------------------------------------
def _axial(kind):
    def axial_rope_cos_sin(position_ids, head_dim, base=10000.0):
        width = head_dim if kind == "ladder_over_full_head" else head_dim // 2
        theta = 1.0 / base ** (torch.arange(0, width, 2, dtype=torch.float32, device=position_ids.device) / width)
        theta = theta[: head_dim // 4]
        r, c = position_ids[:, :1].float() * theta, position_ids[:, 1:].float() * theta  # (N, d/4) each
        if kind == "rows_then_columns":
            emb = torch.cat((r, r, c, c), dim=-1)
        elif kind == "columns_first":
            emb = torch.cat((c, r, c, r), dim=-1)
        elif kind == "interleaved_tables":
            emb = torch.cat((r, c), dim=-1).repeat_interleave(2, dim=-1)
        else:
            emb = torch.cat((r, c, r, c), dim=-1)
        return emb.cos(), emb.sin()

    return axial_rope_cos_sin


# ---- mrope_position_ids ---------------------------------------------------------------------------------
def _mrope_ids(kind):
    def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                           spatial_merge_size=2):
        batch, length = token_types.shape
        out = torch.zeros(3, batch, length, dtype=torch.long, device=token_types.device)
        grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
                 2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
        for b in range(batch):
            keep = torch.ones(length, dtype=torch.bool, device=token_types.device)
            if attention_mask is not None and kind != "padding_counted":
                keep = attention_mask[b].bool()
            kinds = token_types[b][keep].tolist()
            if kind == "padding_counted":  # the pads are read as text
                kinds = [k if m else 0 for k, m in zip(kinds, attention_mask[b].tolist())] \
                    if attention_mask is not None else kinds
            pieces, start, i = [], 0, 0
            while i < len(kinds):
                j = i
                while j < len(kinds) and kinds[j] == kinds[i]:
                    j += 1
                if kinds[i] == 0:
                    pieces.append(torch.arange(start, start + j - i).expand(3, -1))
                    start += j - i
                else:
                    t, h, w = next(grids[kinds[i]])
                    h, w = h // spatial_merge_size, w // spatial_merge_size
                    tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                    rows = [tt, ww, hh] if kind == "height_width_swapped" else [tt, hh, ww]
                    piece = torch.stack(rows).reshape(3, -1) + start
                    pieces.append(piece)
                    if kind == "text_counts_tokens":
                        start += j - i
                    elif kind == "text_after_largest_id":
                        start = int(piece.max()) + 1
                    else:
                        start += max(h, w)
                i = j
            if pieces:
                out[:, b, keep] = torch.cat(pieces, dim=1).to(out.device)
        return out

    return mrope_position_ids


# ---- mrope_cos_sin --------------------------------------------------------------------------------------
def _mrope(kind):
    def mrope_cos_sin(position_ids, head_dim, mrope_section, base=10000.0):
        theta = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32,
                                            device=position_ids.device) / head_dim)
        angles = position_ids.float()[..., None] * theta  # (3, B, L, d/2)
        if kind == "time_id_only":
            chosen = angles[0]
        elif kind == "sections_over_full_head":
            full = torch.cat((angles, angles), dim=-1)  # (3, B, L, d)
            blocks = full.split([2 * s for s in mrope_section], dim=-1)
            emb = torch.cat([blk[k] for k, blk in enumerate(blocks)], dim=-1)
            return emb.cos(), emb.sin()
        else:
            blocks = angles.split(list(mrope_section), dim=-1)
            order = (2, 1, 0) if kind == "sections_reversed" else (0, 1, 2)
            chosen = torch.cat([blk[order[k]] for k, blk in enumerate(blocks)], dim=-1)
        emb = torch.cat((chosen, chosen), dim=-1)
        return emb.cos(), emb.sin()

    return mrope_cos_sin


# a mistake's name: the exercise's prefix, then the one slip that the factory above makes for that kind
IMPLEMENTATIONS = {
    **{f"resize2d_{kind}": _resize(kind)
       for kind in ("class_token_with_grid", "column_major", "align_corners", "size_w_h", "no_antialias")},
    **{f"sincos2d_{kind}": _sincos(kind) for kind in ("columns_first", "interleaved", "column_major")},
    **{f"axial_{kind}": _axial(kind)
       for kind in ("ladder_over_full_head", "rows_then_columns", "columns_first", "interleaved_tables")},
    **{f"mrope_{kind}": _mrope_ids(kind)
       for kind in ("text_counts_tokens", "text_after_largest_id", "padding_counted", "height_width_swapped")},
    **{f"mrope_{kind}": _mrope(kind) for kind in ("sections_reversed", "sections_over_full_head", "time_id_only")},
}

