"""Held-out learner mistake: the text after an image moves on by max(H, W) in patches, the merge forgotten there."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    dev = token_types.device
    position_ids = torch.zeros(3, B, L, dtype=torch.long, device=dev)
    image_grids = [] if image_grid_thw is None else image_grid_thw.tolist()
    video_grids = [] if video_grid_thw is None else video_grid_thw.tolist()
    n_img = n_vid = 0
    for b in range(B):
        keep = torch.ones(L, dtype=torch.bool, device=dev) if attention_mask is None else attention_mask[b].bool()
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
                if kinds[i] == 1:
                    T, H, W = image_grids[n_img]
                    n_img += 1
                else:
                    T, H, W = video_grids[n_vid]
                    n_vid += 1
                h, w = H // spatial_merge_size, W // spatial_merge_size
                if T * h * w != j - i:
                    raise ValueError(f"grid_thw {(T, H, W)} does not match {j - i} tokens")
                tt, hh, ww = torch.meshgrid(torch.arange(T), torch.arange(h), torch.arange(w), indexing="ij")
                pieces.append(torch.stack([tt.flatten(), hh.flatten(), ww.flatten()]) + s)
                s += max(H, W)  # the text goes on past the image
            i = j
        position_ids[:, b, keep] = torch.cat(pieces, dim=1).to(dev)
    return position_ids
