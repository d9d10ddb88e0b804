"""Held-out learner mistake (it raises): each row of the batch takes the grids from the first one again."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    position_ids = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    for b in range(B):
        grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
                 2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
        keep = torch.ones(L, dtype=torch.bool, device=token_types.device)
        if attention_mask is not None:
            keep = attention_mask[b].bool()
        kinds = token_types[b][keep].tolist()
        pieces, s, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                pieces.append(torch.arange(s, s + j - i).expand(3, -1))
                s += j - i
            else:
                t, H, W = next(grids[kinds[i]])
                h, w = H // spatial_merge_size, W // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"grid_thw {(t, H, W)} does not match {j - i} tokens")
                tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                pieces.append(torch.stack([tt, hh, ww]).reshape(3, -1) + s)
                s += max(h, w)
            i = j
        position_ids[:, b, keep] = torch.cat(pieces, dim=1).to(position_ids.device)
    return position_ids
