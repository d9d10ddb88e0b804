"""Chapter 8 mistakes: 2-D tables resized and built, axial RoPE tables and M-RoPE ids the ways learners get them
wrong. Each is a complete wrong implementation, written the way the slip happens."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .mistake import Mistake


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


_RESIZE_TEXT = {
    "class_token_with_grid": "the class token was resized with the grid (a 1-D interpolation of every row): set the "
                             "num_prefix_tokens first rows aside, resize the rest as an H x W image, put them back "
                             "in front",
    "column_major": "the resized grid was flattened column by column: patch (r, c) is row r·W' + c, so go back from "
                    "(1, d, H', W') with .permute(0, 2, 3, 1) (or [0].permute(1, 2, 0)) before the reshape",
    "align_corners": "align_corners=True pins the corner patches; timm and Hugging Face use align_corners=False "
                     "(None means False for bicubic): new row j samples (j + 1/2)·H/H' - 1/2",
    "size_w_h": "the grid was resized to (W', H'): F.interpolate takes size=(H', W') for a (1, d, H, W) image",
    "no_antialias": "without antialias=True (Hugging Face's settings): timm resizes with antialias=True, where "
                    "PyTorch's bicubic kernel uses a = -0.5 instead of -0.75, and is widened when the grid shrinks",
}


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


_SINCOS_TEXT = {
    "columns_first": "the column blocks come first: that is the layout of MAE's original code and checkpoints; this "
                     "exercise follows transformers' build_2d_sinusoidal_position_embedding, rows first: "
                     "[sin(rω) | cos(rω) | sin(cω) | cos(cω)]",
    "interleaved": "sin and cos are interleaved inside each half (chapter 1's layout): here each quarter is "
                   "one block, the d/4 sines then the d/4 cosines",
    "column_major": "the patches are numbered column by column: patch k of a row-major grid is (k // W, k % W)",
}


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


_AXIAL_TEXT = {
    "ladder_over_full_head": "the frequencies were taken over the whole head, base^(-2j/d): Qwen2-VL builds its ladder "
                             "over half the head, θ_j = base^(-2j/(d/2)) for j < d/4, shared by rows and columns",
    "rows_then_columns": "the tables are cat(rθ, rθ, cθ, cθ): in the half layout coordinate j pairs with j + d/2, so "
                         "both must carry the same angle; build angles = cat(rθ, cθ) (d/2) and then "
                         "cat(angles, angles)",
    "columns_first": "the columns come first: Qwen2-VL's angles are [rθ | cθ], rows first (a valid 2-D RoPE, but not "
                     "the layout its weights use)",
    "interleaved_tables": "the tables repeat each angle twice in a row (the interleaved layout); Qwen2-VL uses the "
                          "half layout, cat(angles, angles)",
}


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


_IDS_TEXT = {
    "text_counts_tokens": "after an image the text went on by the number of image tokens, as in 1-D positions: "
                          "M-RoPE moves on by max(H, W)/m, the extent of the image in its own ids",
    "text_after_largest_id": "after a video the text started one past the largest id (the temporal one): "
                             "transformers 5.23 starts it at s + max(H, W)/m for videos too, whatever T is",
    "padding_counted": "the padded positions were counted (as text): compute the ids over the tokens where "
                       "attention_mask is 1 only, and leave 0 at the padded ones",
    "height_width_swapped": "the height and width ids are swapped: in a row-major grid of merged tokens the height id "
                            "is s + row, the width id s + column",
}


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


_MROPE_TEXT = {
    "sections_reversed": "the ids are taken in the order width, height, time: the first mrope_section[0] frequencies "
                         "turn by the time id, the next mrope_section[1] by the height id, the last by the width id",
    "sections_over_full_head": "the sections were cut out of the full tables cat(angles, angles): cut the d/2 angles "
                               "by mrope_section first, then repeat the result, cat(chosen, chosen)",
    "time_id_only": "every frequency turned by the time id: that is 1-D RoPE; each block of mrope_section takes its "
                    "own id (time, height, width)",
}

MISTAKES = {
    **{f"resize2d_{k}": Mistake("resize_position_table_2d", t, _resize(k)) for k, t in _RESIZE_TEXT.items()},
    **{f"sincos2d_{k}": Mistake("sincos_2d_table", t, _sincos(k)) for k, t in _SINCOS_TEXT.items()},
    **{f"axial_{k}": Mistake("axial_rope_cos_sin", t, _axial(k)) for k, t in _AXIAL_TEXT.items()},
    **{f"mrope_{k}": Mistake("mrope_position_ids", t, _mrope_ids(k)) for k, t in _IDS_TEXT.items()},
    **{f"mrope_{k}": Mistake("mrope_cos_sin", t, _mrope(k)) for k, t in _MROPE_TEXT.items()},
}
