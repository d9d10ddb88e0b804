"""Held-out learner mistake: attention_mask ignored, the padding numbered as text."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    pos_ids = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    grids = {1: iter([] if image_grid_thw is None else image_grid_thw.tolist()),
             2: iter([] if video_grid_thw is None else video_grid_thw.tolist())}
    m = spatial_merge_size
    for b in range(B):
        row = token_types[b].tolist()
        s, i, cols = 0, 0, []
        while i < L:
            j = i
            while j < L and row[j] == row[i]:
                j += 1
            if row[i] == 0:
                cols += [[s + n] * 3 for n in range(j - i)]
                s += j - i
            else:
                T, H, W = next(grids[row[i]])
                h, w = H // m, W // m
                if T * h * w != j - i:
                    raise ValueError(f"grid_thw {[T, H, W]} vs {j - i} tokens")
                cols += [[s + a, s + y, s + x] for a in range(T) for y in range(h) for x in range(w)]
                s += max(h, w)
            i = j
        pos_ids[:, b] = torch.tensor(cols, device=token_types.device).T
    return pos_ids
