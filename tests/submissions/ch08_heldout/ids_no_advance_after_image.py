"""Held-out learner mistake: the counter moves on after text only, so the text after an image starts where the image
did."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    ids = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
             2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
    for b in range(B):
        keep = torch.ones(L, dtype=torch.bool) if attention_mask is None else attention_mask[b].bool().cpu()
        kinds = token_types[b].cpu()[keep].tolist()
        parts, s, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                parts.append(torch.arange(s, s + j - i).expand(3, -1))
                s += j - i
            else:
                t, H, W = next(grids[kinds[i]])
                h, w = H // spatial_merge_size, W // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"grid_thw {[t, H, W]} does not match {j - i} tokens")
                tt, hh, ww = torch.meshgrid(torch.arange(t), torch.arange(h), torch.arange(w), indexing="ij")
                parts.append(torch.stack([tt, hh, ww]).reshape(3, -1) + s)
            i = j
        ids[:, b, keep.to(ids.device)] = torch.cat(parts, dim=1).to(ids.device)
    return ids
