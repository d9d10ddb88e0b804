"""Held-out learner mistake: the padded positions hold 1 (transformers 4.x), not 0."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    position_ids = torch.ones(3, B, L, dtype=torch.long, device=token_types.device)
    grids = {1: iter(image_grid_thw.tolist() if image_grid_thw is not None else []),
             2: iter(video_grid_thw.tolist() if video_grid_thw is not None else [])}
    for b in range(B):
        keep = attention_mask[b] == 1 if attention_mask is not None else torch.ones(L, dtype=torch.bool,
                                                                                      device=token_types.device)
        kinds = token_types[b][keep].tolist()
        cols, s, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                cols.append(torch.arange(s, s + j - i).expand(3, -1))
                s += j - i
            else:
                t, H, W = next(grids[kinds[i]])
                h, w = H // spatial_merge_size, W // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"grid_thw {(t, H, W)} does not fit {j - i} tokens")
                tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                cols.append(torch.stack([tt, hh, ww]).reshape(3, -1) + s)
                s += max(h, w)
            i = j
        position_ids[:, b, keep] = torch.cat(cols, dim=1).to(position_ids.device)
    return position_ids
